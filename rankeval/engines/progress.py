"""A progress line for people at a terminal: on stderr, only on a TTY, only when work is slow.

Never on stdout, never in pipes or CI logs, and never for runs shorter than ``delay`` seconds,
so quick runs print nothing extra.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def wanted(stream: TextIO, quiet: bool = False, environ: Mapping[str, str] = os.environ) -> bool:
    """Show progress only to a person: a terminal, not CI, not silenced."""
    if quiet or environ.get("CI") or environ.get("RANKEVAL_PROGRESS", "1") == "0":
        return False
    if environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class Stages:
    """``with Stages(stderr) as s: s.stage("reading preds.csv") ...``: a transient spinner."""

    def __init__(self, stream: TextIO, enabled: bool, delay: float = 1.0):
        self.stream = stream
        self.enabled = enabled
        self.delay = delay
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._text = ""
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Stages:
        if self.enabled:
            self._timer = threading.Timer(self.delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def _start(self) -> None:
        from rich.console import Console  # --help's import cost: rich

        # --help's import cost: rich
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        with self._lock:
            if self._progress is not None or not self.enabled:
                return
            console = Console(file=self.stream, no_color=bool(os.environ.get("NO_COLOR")))
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self._text, total=None)

    def stage(self, text: str) -> None:
        with self._lock:
            self._text = text
            if self._progress is not None:
                assert self._task is not None  # added with the progress, under the lock
                self._progress.update(self._task, description=text)

    def __exit__(self, *exc) -> None:
        with self._lock:
            self.enabled = False
            if self._timer is not None:
                self._timer.cancel()
            if self._progress is not None:
                self._progress.stop()
