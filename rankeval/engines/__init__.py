"""Engines: where an evaluation runs (this machine, Spark, ...), behind one interface.

An engine reads the inputs and scores them (``score``); everything after that, the
distribution over users, segments and intervals, is one pipeline (``run``) shared by every
engine, by the command line and by the library. ``--engine`` and ``evaluate(engine=...)``
take their choices from ``ENGINES``: a new engine is one module with an ``Engine`` subclass
and one ``register`` call (tests/test_engines.py registers one that scores in partitions).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rankeval.errors import OptionError
from rankeval.io.columns import EXTRA  # the optional inputs (--train, ...)

__all__ = ["ENGINES", "EXTRA", "Engine", "Job"]


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

    def check(self, job: Job) -> None:
        """Before any input is read: the job can run here (paths, options)."""

    def check_per_user(self, path: str, inputs: list[str]) -> None:
        """Before any input is read: ``--per-user PATH`` can be written by this engine."""
        from rankeval.io.output import check_writable, per_user_format

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


ENGINES: dict[str, Engine] = {}

# What a run cut short by a signal lets go of before the process ends (a local Ray's
# processes, which outlive a driver that ends without ``ray.shutdown``): the command line's
# signal handling calls each, for a second or two at most (``cli/process.py``).
ON_SIGNAL: list[Callable[[], None]] = []


@contextlib.contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """A cluster's client started in the block (``ray.init`` sets SIGTERM to ``sys.exit(15)``,
    a SparkContext SIGINT to its own) must not replace the handlers a caller had set (the
    command line's: exit 128 + the signal, what the run started let go of): while the block
    runs, ``signal.signal`` leaves those signals alone (a signal that comes meanwhile is the
    caller's to handle). Signals left at their default take the client's handlers (a
    script's Ray then cleans up after itself)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {s: h for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
            if callable(h := signal.getsignal(s)) and h is not signal.default_int_handler}
    if not kept:
        yield
        return
    real = signal.signal

    def leave_kept(signum, handler):
        return kept[signum] if signum in kept else real(signum, handler)

    signal.signal = leave_kept
    try:
        yield
    finally:
        signal.signal = real
        for sig, handler in kept.items():  # set at C level by a library: Python's again
            real(sig, handler)


def register(engine: Engine) -> Engine:
    """Add an engine: ``--engine NAME`` and ``evaluate(engine=NAME)`` reach it."""
    ENGINES[engine.name] = engine
    return engine


def get(name: str | None) -> Engine:
    """The engine called ``name`` (None: local), or an OptionError listing them."""
    key = (name or "local").lower()
    if key not in ENGINES:
        raise OptionError(f"{{option}} must be one of {', '.join(ENGINES)}, got {name!r}",
                          "engine")
    return ENGINES[key]


def engine_options(engine: Engine, given: dict[str, Any]) -> dict[str, Any]:
    """Take every engine's options and keywords out of ``given`` (a command's or
    ``evaluate``'s keyword arguments) and return the chosen engine's; another engine's,
    when set, is an error naming the engine it needs. Engines may share a keyword
    (``partitions``): the chosen engine's are taken first."""
    out = {name: given.pop(name, None) for name in [*engine.options, *engine.keywords]}
    for other in ENGINES.values():
        for name in [*other.options, *other.keywords]:
            if given.pop(name, None):
                raise OptionError(f"{{opt:{name}}} needs {{opt:engine}} {other.name}")
    return out


def run(engine: Engine, job: Job):
    """The one pipeline: read and score on ``engine``, then the distribution over users,
    segments, the values brought here when wanted, and intervals."""
    from rankeval.engines.progress import Stages
    from rankeval.engines.progress import wanted as progress_wanted

    with Stages(sys.stderr, enabled=progress_wanted(sys.stderr, job.quiet)) as progress:
        result = engine.score(job, progress)
        if job.stats:
            result = result.with_stats(job.stats)
        if job.segments is not None:
            progress.stage(f"segments from {job.segments}")
            level, rounds, seed = job.intervals or (0.95, 2000, 0)
            result = result.by_segment(job.segments, job.segment_by, reading=job.reading,
                                       gaps=True if job.gaps else None, level=level,
                                       rounds=min(rounds, 2000), seed=seed)
        if job.intervals is not None or job.keep_values:
            result = engine.values_here(result, progress)
        if job.intervals is not None:
            progress.stage("bootstrapping confidence intervals")
            result = result.with_intervals(*job.intervals)
    return result


def _builtin() -> None:
    from rankeval.engines.local import LocalEngine
    from rankeval.engines.ray import RayEngine  # imports ray only when it runs
    from rankeval.engines.spark import SparkEngine

    register(LocalEngine())
    register(SparkEngine())
    register(RayEngine())


_builtin()
