"""An evaluation's result: ``Evaluation`` (means, per-user values through its store, user
counts, notices, and what was asked of it afterwards: intervals, distribution, segments, gates),
the summary of each input it read, and a stochastic run's samples. Immutable and plain: it
computes on its own values only, and is shown through ``report.views``; engines make it
(``engines.finish.evaluation_of``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankeval.errors import plural

if TYPE_CHECKING:
    import pandas as pd

from rankeval.analysis.distribution import STATS, parse_stats
from rankeval.analysis.exposure import Exposure
from rankeval.analysis.gaps import segment_gaps
from rankeval.analysis.gates import Gates, judge
from rankeval.analysis.segments import with_bins
from rankeval.analysis.significance import bootstrap_mean_ci
from rankeval.build.users import UserCounts
from rankeval.errors import OptionError, RankevalError
from rankeval.io.arrow import to_numpy
from rankeval.io.load import open_input
from rankeval.names import ALL, MetricSpec, from_name
from rankeval.notices import Notice
from rankeval.registry import CORPUS, GEOMETRIC, MEAN, REGISTRY
from rankeval.report import views
from rankeval.results.store import Store
from rankeval.settings import Settings

TRACKERS = "rankeval.trackers"  # the entry-point group of rankeval's own trackers


def tracker(name: str) -> Callable[..., str]:
    """The logger of tracker ``name`` (``mlflow``, ``wandb``): ``logger(evaluation, run)``,
    found through rankeval's entry points, so that a result never imports the integrations
    (they import the report, which shows results)."""
    from importlib import metadata  # its import cost (20 ms), paid when a tracker logs

    found = [e for e in metadata.entry_points(group=TRACKERS, name=name)
             if e.value.startswith("rankeval.integrations.")]
    if not found:
        raise RankevalError("rankeval's trackers are not registered: reinstall rankeval "
                            "(pip install -e .)")
    return found[0].load()


@dataclass(frozen=True)
class InputSummary:
    path: str
    format: str
    rows: int
    users: int
    tag: str | None = None  # a TREC run's tag (trec_eval's runid)
    # the predictions: what ordered each list, rank (the file's ranks), score (its scores,
    # tied scores by the tie rule) or input (the file's row order); None: not a run
    order: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """The result of one evaluation: per-user values, means, user counts and warnings.

    Immutable: ``with_intervals`` and ``judged`` return new evaluations.
    """

    settings: Settings
    # "ndcg@10" -> mean over evaluated users; NaN when undefined (``undefined`` says why)
    metrics: dict[str, float]
    users: UserCounts
    inputs: dict[str, InputSummary]
    notices: list[Notice]
    prediction_rows_beyond_k: int
    # the per-user values, wherever the engine keeps them (``results.store``)
    store: Store = field(repr=False)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    # metric -> statistic -> value over users (``with_stats``); empty unless asked for
    distribution: dict[str, dict[str, float]] = field(default_factory=dict)
    # segment column -> one Segment per value (``by_segment``); empty unless asked for
    segments: dict[str, list] = field(default_factory=dict)
    interval_level: float | None = None
    gates: Gates = field(default_factory=Gates)  # what the gates decided (``judged``)
    tied_users: int = 0  # users with tied scores within the scored depth
    # metric -> (pessimistic, optimistic) mean: what the order of tied items alone can do
    tie_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    exposure: Exposure | None = None  # popularity bias, when --train gives a popularity
    samples: Samples | None = None  # a stochastic run: its samples and spread
    # segment column -> the largest gap of each metric between its segments (``by_segment``)
    gaps: dict[str, list] = field(default_factory=dict)
    # awrf metric -> exposure by item group against its target (``kernels.fairness``)
    group_exposure: dict[str, Any] = field(default_factory=dict)
    # --gold: the estimates corrected by a human-judged sample (``results.gold``)
    gold: Any = None
    # trec_eval's relstring (-m relstring under its presets): per user, in the order of
    # ``user_id_array``, a string of the top N items' grades; None when not asked for
    relstrings: Any = None
    # ``zscores``: the values are z-scores (``io.zscores.ZScored``: the file, where each is
    # undefined, trec_eval's summary of them); None when they are the metrics' own
    zscores: Any = None

    @property
    def specs(self) -> list[MetricSpec]:
        """Every metric, per-user and corpus-level, in the order asked for."""
        return list(self.settings.specs)

    @property
    def corpus(self) -> list[str]:
        """The corpus-level metrics: one value for the run, no per-user values."""
        return [str(s) for s in self.specs if REGISTRY[s.name].scope == CORPUS]

    def by_segment(self, segments: Any, by: str | Iterable[str], fmt: str | None = None,
                   reading: dict[str, Any] | None = None, bins: str | int | None = None,
                   gaps: bool | None = None, level: float = 0.95, rounds: int = 2000,
                   seed: int = 0):
        """A copy with every per-user metric averaged within each value of the user
        attributes ``by`` of ``segments`` (a table or path with a user column); users absent
        from it form a counted ``(missing)`` segment; ``"activity:quartiles"`` cuts a numeric
        attribute into quantile bins (also ``:deciles``, ``:N``); ``bins`` does so for every
        column of ``by`` without bins of its own. ``gaps``: also the largest gap of each
        metric between the segments, with a ``level`` bootstrap interval over ``rounds``
        (``analysis.gaps``; default: when the per-user values are on this machine)."""
        table = open_input(segments, "segments", fmt, reading)
        words = with_bins(by, bins)
        segments = self.store.segment_means(table, words)
        if gaps is None:
            gaps = self.store.here
        if not gaps:
            return dataclasses.replace(self, segments=segments)
        return dataclasses.replace(self, segments=segments, gaps=segment_gaps(
            self.store.collect(), self._per_user_specs, table, words, level, rounds, seed))

    def with_stats(self, stats: str | Iterable[str] = STATS):
        """A copy with the distribution over users of every per-user metric: any of
        ``mean``, ``median``, ``p<N>`` (a percentile, numpy's linear interpolation), ``std``
        (sample standard deviation, n - 1), ``min``, ``max``, ``zeros`` (share of users at
        0). Users a metric could not score are left out."""
        return dataclasses.replace(self, distribution=self.store.describe(parse_stats(stats)))

    def with_intervals(self, level: float = 0.95, rounds: int = 10_000, seed: int = 0):
        """A copy with a percentile bootstrap confidence interval (over users) for every mean
        (the per-user values brought here first, ``collect``)."""
        if not 0 < level < 1:
            raise OptionError("{option} must lie strictly between 0 and 1", "confidence")
        if rounds < 100:
            raise OptionError("{option} must be at least 100", "rounds")
        here = self.store.collect()
        intervals = {}
        for s in self._per_user_specs:
            how = REGISTRY[s.name].overall
            v = here.values(s)
            v = v[~np.isnan(v)]  # users a metric could not score (ild) are not resampled
            if how == MEAN:
                intervals[str(s)] = bootstrap_mean_ci(v, rounds, seed, level)
            elif how == GEOMETRIC:  # exp is monotonic: the interval of the mean of the logs
                low, high = bootstrap_mean_ci(v, rounds, seed, level)
                intervals[str(s)] = (math.exp(low), math.exp(high))
        return dataclasses.replace(self, store=here, intervals=intervals, interval_level=level)

    def collect(self) -> Evaluation:
        """A copy with the per-user values on this machine (itself when they are): with an
        engine that keeps them where they were computed (Spark), for ``values``,
        ``user_ids`` and ``per_user_table``."""
        here = self.store.collect()
        return self if here is self.store else dataclasses.replace(self, store=here)

    def write_per_user(self, path: str) -> None:
        """The per-user values to ``path``: a CSV or Parquet file (``-``: stdout), or where
        the engine keeps them, its own kind of output (Spark: a Parquet dataset)."""
        self.store.write(path)

    @property
    def _per_user_specs(self) -> list[MetricSpec]:
        return [s for s in self.specs if REGISTRY[s.name].scope != CORPUS]

    def judged(self, plan):
        """A copy with ``plan``'s gate verdicts (a ``gates.GatePlan``) and baseline deltas."""
        return dataclasses.replace(self, gates=judge(self, plan))

    def with_verdicts(self, verdicts) -> Evaluation:
        """A copy with more gate verdicts (non-inferiority and equivalence gates)."""
        return dataclasses.replace(self, gates=dataclasses.replace(
            self.gates, verdicts=(*self.gates.verdicts, *verdicts)))

    @property
    def undefined(self) -> dict[str, str]:
        """The metrics without a value (NaN in ``metrics``, SPEC section 9): no user to
        average over, or a corpus metric with nothing to measure. Metric -> why."""
        return {n.params["metric"]: n.message for n in self.notices if n.code == "undefined"}

    @property
    def passed(self) -> bool:
        """Whether every gate passed (True when there are none)."""
        return self.gates.passed

    @property
    def warnings(self) -> list[str]:
        return [n.message for n in self.notices]

    def values(self, metric: str | MetricSpec) -> np.ndarray:
        """Per-user values of one metric, in the order of ``per_user``."""
        spec = metric if isinstance(metric, MetricSpec) else from_name(metric)
        if REGISTRY[spec.name].scope == CORPUS:
            raise OptionError(f"{spec} is a corpus-level metric: one value for the run "
                              "(in .metrics), no per-user values")
        return self.store.values(spec)

    @cached_property
    def user_ids(self) -> np.ndarray:
        """The evaluated users' ids (sorted), in the order of every per-user array."""
        return to_numpy(self.store.users())

    @property
    def user_id_array(self) -> pa.Array:
        """``user_ids`` as an Arrow string array."""
        return self.store.users()

    @property
    def per_user(self) -> pd.DataFrame | Any:
        """One row per evaluated user (sorted by id), one column per metric: a pandas
        DataFrame, or the engine's own frame where it keeps the values (Spark: a cached
        Spark DataFrame)."""
        return self.store.frame()

    def log_mlflow(self, run_id: str | None = None) -> str:
        """Log the metrics, settings and reports to MLflow (``rankeval[mlflow]``): the run
        ``run_id``, the active run or a new one; returns the run's id."""
        return tracker("mlflow")(self, run_id)

    def log_wandb(self, run: Any = None) -> str:
        """Log the metrics, settings and per-user values to Weights & Biases
        (``rankeval[wandb]``): ``run``, the active run or a new one; returns the run's id."""
        return tracker("wandb")(self, run)

    def per_user_table(self) -> pa.Table:
        """``per_user`` as an Arrow table (what the command line writes); a value a metric
        leaves undefined (NaN) is null."""
        return self.store.table()

    def summary_rows(self) -> tuple[list[int | str], list[tuple[str, list[float | None]]]]:
        """Means as (columns, [(metric name, one value per column, None where not asked)]);
        NaN is an undefined mean."""
        columns = _columns(self.specs)
        rows: dict[str, list[float | None]] = {}
        for spec in self.specs:
            row = rows.setdefault(spec.row, [None] * len(columns))
            row[columns.index(spec.column)] = self.metrics[str(spec)]
        return columns, list(rows.items())

    @property
    def summary(self) -> pd.DataFrame:
        """Means as a table: one row per metric name, one column per K (NaN where not asked
        or undefined)."""
        import pandas as pd  # import cost: the command line never needs pandas

        columns, rows = self.summary_rows()
        return pd.DataFrame(
            [values for _, values in rows],
            index=pd.Index([name for name, _ in rows], name="metric"),
            columns=pd.Index(columns, name="k"),
            dtype=float,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (keys are stable: CI scripts read them)."""
        return views.score_document(self)

    def __repr__(self) -> str:
        undefined = "".join(f"n/a: {why}\n" for why in self.undefined.values())
        where = ("" if self.store.here else
                 "; per-user values where they were computed: .collect() brings them here")
        return (f"<Evaluation of "
                f"{plural(self.users.evaluated, 'user')}{where}>\n{views.score_text(self)}"
                f"{undefined}")

    def _repr_html_(self) -> str:
        return views.score_notebook(self)


def _columns(specs: list[MetricSpec]) -> list[int | str]:
    """Summary columns: the Ks ascending, then ``all``, then ``R``."""
    cols = {s.column for s in specs}
    return sorted(c for c in cols if isinstance(c, int)) + [c for c in (ALL, "R") if c in cols]


@dataclass(frozen=True)
class Samples:
    """A stochastic run (several sampled rankings per user): each per-user value is the mean
    over the user's samples; ``spread`` is, per metric, the mean over users of the standard
    deviation of their values over their samples (0 for the expected-exposure metrics, whose
    value is one per user)."""

    rankings: int  # sampled rankings evaluated, over every user
    fewest: int  # the fewest and the most sampled rankings one user has
    most: int
    spread: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"rankings": self.rankings, "per_user": {"min": self.fewest, "max": self.most},
                "spread": {m: None if math.isnan(v) else v for m, v in self.spread.items()}}
