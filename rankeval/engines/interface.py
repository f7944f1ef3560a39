"""What every engine is: a ``Job`` (one evaluation as every engine takes it) and the
``Engine`` interface (``check``, ``score``, ``validate``, its own options)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rankeval.io.columns import EXTRA  # the optional inputs (--train, ...)
from rankeval.io.output import check_writable, per_user_format


@dataclass(frozen=True)
class Job:
    """One evaluation, as every engine takes it: the inputs (paths, or tables the engine
    reads), how to read and score them, and what to add after scoring."""

    predictions: Any
    truth: Any
    settings: Any  # settings.Settings
    columns: dict[str, str | None] = field(default_factory=dict)
    reading: dict[str, Any] = field(default_factory=dict)
    preds_format: str | None = None
    truth_format: str | None = None
    # train, catalog, item_features and their *_format
    extras: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the engine's own options
    stats: Any = None  # distribution statistics (``Evaluation.with_stats``)
    segments: Any = None  # a user table or path (``Evaluation.by_segment``)
    segment_by: Sequence[str] = ()
    intervals: tuple[float, int, int] | None = None  # (level, rounds, seed)
    keep_values: bool = False  # every per-user value wanted on this machine (HTML, -q lines)
    quiet: bool = True  # no progress line
    gaps: bool = False  # segment gaps wanted wherever the values are (a --max-gap gate)

    @property
    def paths(self) -> list[str]:
        """The inputs given as paths (for checks before reading)."""
        given = [self.predictions, self.truth, *(self.extras.get(n) for n in EXTRA),
                 self.segments]
        return [x for x in given if isinstance(x, str)]


class Engine:
    """Where evaluations run. Subclasses set ``name``, ``help``, ``options`` (their own
    command-line options: name -> (flags, click keywords)) and implement ``score``."""

    name = ""
    help = ""
    # command-line options: name -> (flags, click keywords); the library takes them too
    options: ClassVar[dict[str, tuple[tuple[str, ...], dict[str, Any]]]] = {}
    keywords: ClassVar[tuple[str, ...]] = ()  # the library's further keywords (a session, ...)
    # --gold: the engine gives both judgments' per-query values on this machine (#48)
    gold: ClassVar[bool] = True

    def check(self, job: Job) -> None:
        """Before any input is read: the job can run here (paths, options)."""

    def check_per_user(self, path: str, inputs: list[str]) -> None:
        """Before any input is read: ``--per-user PATH`` can be written by this engine."""
        check_writable(path, "--per-user")
        per_user_format(path)

    def score(self, job: Job, progress) -> Any:
        """Read and score the inputs: an ``Evaluation`` (no stats, segments, intervals)."""
        raise NotImplementedError

    def values_here(self, result, progress):
        """``result`` with every per-user value on this machine (a no-op where they are)."""
        return result

    def validate(self, job: Job, acknowledged: frozenset[str]):
        """``rankeval validate``'s report for the job's inputs."""
        raise NotImplementedError

    def write_per_user(self, result, path: str) -> None:
        """``--per-user PATH``: the result's store writes it (a file here, a dataset where
        an engine keeps the values)."""
        result.write_per_user(path)
