"""The library entry point: ``evaluate(predictions, truth, ...)`` -> an immutable ``Evaluation``.

The library never prints, exits or reads ``sys.argv``: warnings come back as ``Notice`` data and
problems as ``RankevalError`` exceptions. The command line is a thin shell over this module.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import pandas as pd

from rankeval.analysis.distribution import STATS, parse_stats
from rankeval.analysis.exposure import Exposure
from rankeval.analysis.gates import Gates
from rankeval.build.stages import UserCounts
from rankeval.engines.partition import (
    Partial,
)
from rankeval.engines.sampled import Samples, sample_columns, samples_of
from rankeval.engines.store import LocalValues, Store
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.cast import numeric_order
from rankeval.io.columns import COLUMN_OPTIONS
from rankeval.io.extras import check_needs
from rankeval.kernels.aggregate import overall
from rankeval.names import ALL, MetricSpec, from_name
from rankeval.notices import Notice
from rankeval.registry import CORPUS, GEOMETRIC, MEAN, REGISTRY
from rankeval.report import views
from rankeval.settings import EvaluateOptions, Settings, make_settings


@dataclass(frozen=True)
class InputSummary:
    path: str
    format: str
    rows: int
    users: int
    tag: str | None = None  # a TREC run's tag (trec_eval's runid)


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
    # the per-user values, wherever the engine keeps them (``engines.store``)
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

    @classmethod
    def from_partial(cls, partial: Partial, settings, inputs: dict[str, InputSummary],
                     corpus: dict[str, float] | None = None):
        """Users in display order: by number when every id is an integer written plainly
        (1, 2, 10 rather than 1, 10, 2), else as byte strings."""
        n = partial.counts.evaluated  # also when the per-user values live elsewhere (Spark)
        order = numeric_order(partial.users)
        if order is not None:
            partial = dataclasses.replace(
                partial, users=partial.users.take(from_numpy(order)),
                values={s: v[order] for s, v in partial.values.items()})
        return cls(
            settings=settings,
            metrics={str(s): overall(s, partial.sums[s], partial.scored.get(s, n))
                     if s in partial.sums else (corpus or {})[str(s)] for s in settings.specs},
            users=partial.counts,
            inputs=inputs,
            notices=list(partial.notices),
            prediction_rows_beyond_k=partial.rows_beyond_k,
            store=LocalValues(partial.values, partial.users, sample_columns(partial)),
            tied_users=partial.tied_users,
            tie_range={str(s): (overall(s, low, partial.scored.get(s, n)),
                                overall(s, high, partial.scored.get(s, n)))
                       for s, (low, high) in partial.tie_bounds.items()},
            samples=samples_of(partial),
            group_exposure={str(s): t for s, t in partial.group_exposure.items()},
        )

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
        from rankeval.analysis.segments import with_bins
        from rankeval.io.load import open_input

        table = open_input(segments, "segments", fmt, reading)
        words = with_bins(by, bins)
        segments = self.store.segment_means(table, words)
        if gaps is None:
            gaps = self.store.here
        if not gaps:
            return dataclasses.replace(self, segments=segments)
        from rankeval.analysis.gaps import segment_gaps

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
        from rankeval.analysis.significance import bootstrap_mean_ci
        from rankeval.errors import OptionError

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
        from rankeval.analysis.gates import judge

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
            from rankeval.errors import OptionError

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
        from rankeval.integrations.mlflow import log_evaluation

        return log_evaluation(self, run_id)

    def log_wandb(self, run: Any = None) -> str:
        """Log the metrics, settings and per-user values to Weights & Biases
        (``rankeval[wandb]``): ``run``, the active run or a new one; returns the run's id."""
        from rankeval.integrations.wandb import log_evaluation

        return log_evaluation(self, run)

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
        import pandas as pd

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
        return (f"<Evaluation of {self.users.evaluated:,} users{where}>\n{views.score_text(self)}"
                f"{undefined}")

    def _repr_html_(self) -> str:
        return views.score_notebook(self)


def _columns(specs: list[MetricSpec]) -> list[int | str]:
    """Summary columns: the Ks ascending, then ``all``, then ``R``."""
    cols = {s.column for s in specs}
    return sorted(c for c in cols if isinstance(c, int)) + [c for c in (ALL, "R") if c in cols]


def evaluate(
    predictions: Any,
    truth: Any,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    compat: str | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
    train: Any = None,
    catalog: Any = None,
    item_features: Any = None,
    item_groups: Any = None,
    propensity: Any = None,
    engine: str = "local",
    engine_options: Mapping[str, Any] | None = None,
    **options: Unpack[EvaluateOptions],
) -> Evaluation:
    """Evaluate a ranking against ground truth.

    ``predictions`` and ``truth`` are pandas or polars DataFrames, Arrow tables or record
    batches, or file paths. Columns are found by name or alias (``user_id``/``qid``,
    ``item_id``/``docno``, ``rank``, ``score``, ``relevance``/``rating``) unless named with
    ``user_col``, ``item_col``, ``rank_col``, ``score_col``, ``relevance_col``.
    ``metrics``: names such as ``"ndcg"`` (every K) or ``"map@5"``; ``k``: one or more cut-offs.
    ``compat="trec_eval"``: trec_eval's conventions and measure names.
    ``train``: training interactions (user, item, optional ``count``), for seen-item exclusion
    and the popularity metrics; ``catalog``: the item universe (coverage, gini);
    ``item_features``: per-item vectors or tags (ild, serendipity); ``item_groups``: the
    group(s) of each item, per group column (awrf); ``propensity``: each item's (or each
    user-item pair's) probability of being observed (ips_recall, ... without gamma=). Any
    form the two main inputs take (``train_format``, ..., ``propensity_format`` for paths).
    ``engine``: where to compute (``rankeval.engines.ENGINES``: ``"local"``, or ``"spark"``
    with Spark DataFrames or paths); ``engine_options``: the engine's own (``{"spark":
    session, "partitions": 64}``).

    The settings (keywords; None means the default):

    - gain: 'linear' | 'exponential' (default 'linear'). Gain of a relevance r in
      CG/DCG/NDCG: linear r, or exponential 2^r - 1.
    - ap_denominator: 'min' | 'relevant' (default 'min'). Divide AP@K by min(R, K), or by
      R, all relevant items (trec_eval).
    - rr_target: 'first-relevant' | 'most-relevant' (default 'first-relevant'). MRR uses
      the rank of the first relevant item, or of the most relevant one.
    - relevance_threshold: T (default None). An item is relevant when relevance >= T
      (default: relevance > 0).
    - ties: 'trec' | 'item-asc' | 'input' | 'expected' | 'optimistic' | 'pessimistic'
      (default 'trec'). Tied scores: ordered by item id descending as trec_eval, item id
      ascending, or file order; or scored fairly: the expected value over all their
      orders, or the best or worst order (relevant items first or last).
    - order_by: 'rank' | 'score' (default 'rank'). What orders each list when the
      run has both a rank and a score column: its ranks, or its scores (trec_eval,
      pytrec_eval and ir_measures read scores and never ranks); a run with one of
      them is ordered by that one.
    - zero_relevant_users: 'skip' | 'zero' (default 'skip'). Users with no relevant item:
      leave out, or score 0 and average in (trec_eval).
    - skip_missing_users: True | False (default False). Leave out users with relevant
      items but no predictions (default: they score 0; trec_eval leaves them out unless
      given -c).
    - missing_user_counts: 'counted' | 'zero' (default 'counted'). num_q and num_rel of a
      user scored without predictions: counted, as trec_eval -c counts them, or 0 like every
      other metric, as ir_measures fills a query missing from the run.
    - max_depth: N (default None). Only the first N items of each list count, for every
      metric and K (trec_eval -M).
    - judged_only: True | False (default False). Condensed lists: drop the items without a
      judgement in the truth before cutting at K, so that the rest move up (trec_eval -J;
      Sakai 2007).
    - rbp_p: P (default 0.8). Persistence p of rank-biased precision: the chance of
      reading on to the next item (trec_eval 10.0: 0.9).
    - rbp_gain: 'binary' | 'graded' (default 'binary'). What an item earns in RBP: 1 when
      relevant, or its grade divided by the user's highest grade when that exceeds 1,
      whatever the relevance threshold (trec_eval 10.0).
    - rbp_residual_tail: 'always' | 'if-unjudged' (default 'always'). rbp_residual counts
      the weight past the list's end always (Moffat and Zobel), or only when the list holds
      an unjudged item, else it is 0 (trec_eval 10.0's rbp_resid).
    - patience: P (default 0.5). The expected-exposure reader's patience p: an item at
      rank i gets exposure p^(i-1) (Diaz et al. 2020; the paper's 0.5).
    - gains: G=V,... (default None). The gain of each grade in the DCG family, as
      GRADE=GAIN pairs (e.g. gains 1=1,2=3); a grade not named keeps its own value, and
      the gain function then applies (trec_eval's ndcg.1=1,2=3).
    - collection_size: N (default None). Items in the collection, read by utility's fourth
      coefficient (the non-relevant items not retrieved) alone (trec_eval -N).
    - recall_rounding: 'plus-0.9' | 'round' (default 'plus-0.9'). How iprec turns a recall
      level L into a number of relevant items: round(L R) (trec_eval 10.0), or floor(L R +
      0.9) (trec_eval 9.0.8, pytrec_eval, ir_measures).
    - err_max_grade: G (default 4.0). Highest relevance grade of ERR: a grade g stops the
      reader with probability (2^g - 1) / 2^max (gdeval and ir_measures use 4); higher
      grades are an error.
    - exclude_seen: True | False (default False). Drop predicted (user, item) pairs
      present in train before cutting at K; the rest move up.
    - exclude_seen_truth: True | False (default False). Also drop truth rows whose (user,
      item) pair is in train.
    - popularity: 'users' | 'interactions' (default 'users'). Item popularity from train:
      its distinct users, or its interactions (rows, or the sum of the count column).
    - tail_share: S (default 0.2). long_tail: the short head is the most popular items
      holding 1 - S of all popularity.
    - dedupe: True | False (default False). Keep the best-ranked of repeated (user, item)
      predictions instead of failing.

    Column options: ``user_col``, ``item_col``, ``rank_col``, ``score_col``,
    ``relevance_col``, ``count_col`` (train), ``propensity_col``; formats: ``train_format``,
    ``catalog_format``, ``item_features_format``, ``item_groups_format``,
    ``propensity_format``.

    >>> result = evaluate(preds_df, truth_df, metrics=["ndcg", "map"], k=[5, 10])
    >>> result.metrics["ndcg@10"], result.per_user.head()
    """
    from rankeval.engines import EXTRA, Job, get, run
    from rankeval.engines import engine_options as own_options

    chosen = get(engine)
    given = own_options(chosen, dict(engine_options or {}))
    rest: dict[str, Any] = dict(options)
    columns = {name: rest.pop(name, None) for name in COLUMN_OPTIONS}
    extras = {"train": train, "catalog": catalog, "item_features": item_features,
              "item_groups": item_groups, "propensity": propensity,
              **{f"{n}_format": rest.pop(f"{n}_format", None) for n in EXTRA}}
    settings = make_settings(metrics, k, compat=compat, **rest)
    check_needs(settings, {n for n in EXTRA if extras[n] is not None})
    job = Job(predictions, truth, settings, columns, {}, preds_format, truth_format, extras,
              given)
    chosen.check(job)
    return run(chosen, job)

