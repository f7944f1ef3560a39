"""What every engine is: a ``Job`` (one evaluation as every engine takes it, made of option
groups: ``Inputs``, ``io.options``' ``Columns``, ``Reading`` and ``ExtraInputs``,
``Breakdown``) and the ``Engine`` interface (``check``, ``score``, ``validate``, its own
options)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from rankeval.io.columns import EXTRA  # the optional inputs (--train, ...)
from rankeval.io.options import Columns, ExtraInputs, Reading
from rankeval.io.output import check_writable, per_user_format
from rankeval.settings import Settings

T = TypeVar("T")


@dataclass(frozen=True)
class Inputs:
    """The two main inputs (paths, or tables the engine reads) and their formats (None: from
    the extension)."""

    predictions: Any
    truth: Any
    preds_format: str | None = None
    truth_format: str | None = None


@dataclass(frozen=True)
class Breakdown:
    """What the pipeline adds after scoring, by users: the distribution's statistics
    (``Evaluation.with_stats``), the segments (a user table or path) and the columns to break
    the metrics down by (``Evaluation.by_segment``), and whether the segment gaps are wanted
    wherever the values are (a ``--max-gap`` gate). Checked by ``api.request``."""

    stats: str | None = None
    segments: Any = None
    segment_by: Sequence[str] = ()
    gaps: bool = False


class _GroupField(Generic[T]):
    """A field of one of the job's option groups, read as the job's own (``job.truth`` is
    ``job.inputs.truth``)."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, job: Any, owner: type | None = None) -> T:
        return getattr(getattr(job, self.group), self.name)


@dataclass(frozen=True)
class Job:
    """One evaluation, as every engine takes it: the inputs, how to read and score them
    (the option groups of ``io.options``, the settings, the engine's own options), and what
    to add after scoring. ``api.request`` builds it."""

    inputs: Inputs
    settings: Settings
    columns: Columns = field(default_factory=Columns)
    reading: Reading = field(default_factory=Reading)
    extras: ExtraInputs = field(default_factory=ExtraInputs)  # train, catalog ... and formats
    options: dict[str, Any] = field(default_factory=dict)  # the engine's own options
    breakdown: Breakdown = field(default_factory=Breakdown)
    intervals: tuple[float, int, int] | None = None  # (level, rounds, seed)
    keep_values: bool = False  # every per-user value wanted on this machine (HTML, -q lines)
    quiet: bool = True  # no progress line

    # The fields of the groups, as engines read them
    predictions = _GroupField[Any]("inputs")
    truth = _GroupField[Any]("inputs")
    preds_format = _GroupField[str | None]("inputs")
    truth_format = _GroupField[str | None]("inputs")
    stats = _GroupField[str | None]("breakdown")
    segments = _GroupField[Any]("breakdown")
    segment_by = _GroupField[Sequence[str]]("breakdown")
    gaps = _GroupField[bool]("breakdown")

    @property
    def paths(self) -> list[str]:
        """The inputs given as paths (for checks before reading)."""
        given = [self.predictions, self.truth, *(self.extras.get(n) for n in EXTRA),
                 self.segments]
        return [x for x in given if isinstance(x, str)]


EngineOptions = dict[str, tuple[tuple[str, ...], dict[str, Any]]]


def engine_option(*flags: str, **click: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """One of an engine's own command-line options: its flags and click's keywords."""
    return flags, click


class Engine:
    """Where evaluations run. Subclasses set ``name``, ``help``, ``options`` (their own
    command-line options: name -> (flags, click keywords)) and implement ``score``."""

    name = ""
    help = ""
    # command-line options: name -> (flags, click keywords); the library takes them too
    options: ClassVar[EngineOptions] = {}
    keywords: ClassVar[tuple[str, ...]] = ()  # the library's further keywords (a session, ...)
    # --gold: the engine gives what PPI needs of both judgments' per-query values (#48):
    # here, or added up over its partitions (``gold_parts``)
    gold: ClassVar[bool] = True
    # Reads and scores the inputs in this process: what a verb computes beside the engines
    # on the whole input (the preferences' measures) runs on such an engine alone
    in_process: ClassVar[bool] = True

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

    def gold_parts(self, store, gold, strata, metrics):
        """``--gold`` where the machine values stay on the cluster: per metric and stratum
        the moments of the gold and the other queries, added up over the partitions of
        ``store`` (``engines.distributed.gold``: ``gold`` the gold sample's values,
        ``strata`` each query's stratum or None)."""
        raise NotImplementedError

    def write_per_user(self, result, path: str) -> None:
        """``--per-user PATH``: the result's store writes it (a file here, a dataset where
        an engine keeps the values)."""
        result.write_per_user(path)
