"""The library entry point: ``evaluate(predictions, truth, ...)`` -> ``Evaluation``.

The library never prints, exits or reads ``sys.argv``: warnings come back as ``Notice`` data and
problems as ``RankevalError`` exceptions. The command line is a thin shell over this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import pandas as pd

from . import __version__, trec
from .arrow import from_numpy
from .errors import InputError, Notice, OptionError
from .metric_names import ALL, MetricSpec, expand, from_name, parse_ks
from .metrics import AP_DENOMINATORS, GAINS, RR_TARGETS, Conventions, compute
from .ranking import TIES, Built, UserCounts, build
from .readers import MemoryTable, Source, open_table
from .registry import DEFAULT_K, DEFAULT_METRICS
from .validate import Predictions, Truth, load_predictions, load_truth

# Version of the JSON report's layout; bump it when a key changes meaning or disappears.
#   1: rankeval, schema, k, metrics, settings, inputs, users, ci, gates, passed, baseline,
#      warnings, notices.
SCHEMA_VERSION = 1
ZERO_RELEVANT_POLICIES = ("skip", "zero")


@dataclass(frozen=True)
class Settings:
    """Every option that changes a number; reported whole in the JSON ``settings`` block."""

    metrics: tuple[str, ...]
    k: tuple[int, ...]
    gain: str = "linear"
    ap_denominator: str = "min"
    rr_target: str = "first-relevant"
    relevance_threshold: float | None = None
    skip_missing_users: bool = False
    zero_relevant_users: str = "skip"
    ties: str = "trec"
    dedupe: bool = False
    compat: str | None = None

    @property
    def specs(self) -> list[MetricSpec]:
        return expand(self.metrics, self.k)

    @property
    def conventions(self) -> Conventions:
        return Conventions(self.gain, self.ap_denominator, self.rr_target, self.relevance_threshold)


def _choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise OptionError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


# Every convention and its default (SPEC); ``--compat trec_eval`` swaps in trec.CONVENTIONS.
DEFAULTS: dict[str, Any] = {
    "gain": "linear",
    "ap_denominator": "min",
    "rr_target": "first-relevant",
    "relevance_threshold": None,
    "skip_missing_users": False,
    "zero_relevant_users": "skip",
    "ties": "trec",
}


def make_settings(
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    compat: str | None = None,
    dedupe: bool = False,
    **conventions: Any,
) -> Settings:
    """Check options and resolve metric names (``ndcg`` over every K, ``p@5``, ...).

    ``conventions`` are the keys of ``DEFAULTS``; None means "the default". With
    ``compat="trec_eval"`` the defaults are trec_eval's, metric names are read as trec_eval
    measures, and an explicit option that contradicts trec_eval is an error.
    """
    unknown = set(conventions) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    chosen = dict(DEFAULTS)
    if compat is not None:
        chosen.update(trec.CONVENTIONS)
        _choice("compat", compat, trec.COMPAT)
    for name, value in conventions.items():
        if value is None:
            continue
        if compat is not None and value != chosen[name]:
            raise OptionError(
                f"--compat {compat} sets --{name.replace('_', '-')} to {chosen[name]!r}; "
                f"{value!r} contradicts it (drop one of the two)"
            )
        chosen[name] = value
    if isinstance(k, int | str):
        k = [k]
    ks = parse_ks(str(x) for x in k) if k else list(DEFAULT_K)
    if isinstance(metrics, str):
        metrics = [metrics]
    words = list(metrics) if metrics else list(DEFAULT_METRICS)
    if compat is not None:
        words = trec.translate(words)
    specs = expand(words, ks)
    threshold = chosen["relevance_threshold"]
    if threshold is not None:
        threshold = float(threshold)
        if not np.isfinite(threshold) or threshold <= 0:
            raise OptionError(
                "--relevance-threshold must be a number > 0 (items missing from the truth have "
                f"relevance 0 and must not count as relevant), got {threshold}"
            )
    return Settings(
        metrics=tuple(str(s) for s in specs),
        k=tuple(sorted({s.k for s in specs if s.k is not None})),
        gain=_choice("gain", chosen["gain"], GAINS),
        ap_denominator=_choice("ap_denominator", chosen["ap_denominator"], AP_DENOMINATORS),
        rr_target=_choice("rr_target", chosen["rr_target"], RR_TARGETS),
        relevance_threshold=threshold,
        skip_missing_users=bool(chosen["skip_missing_users"]),
        zero_relevant_users=_choice(
            "zero_relevant_users", chosen["zero_relevant_users"], ZERO_RELEVANT_POLICIES
        ),
        ties=_choice("ties", chosen["ties"], TIES),
        dedupe=bool(dedupe),
        compat=compat,
    )


@dataclass(frozen=True)
class InputSummary:
    path: str
    format: str
    rows: int
    users: int


class Evaluation:
    """The result of one evaluation: per-user values, means, user counts and warnings."""

    def __init__(
        self,
        settings: Settings,
        values: dict[MetricSpec, np.ndarray],
        user_ids: pa.Array,
        users: UserCounts,
        inputs: dict[str, InputSummary],
        notices: list[Notice],
        prediction_rows_beyond_k: int = 0,
    ):
        self.settings = settings
        self.specs = list(values)
        self.users = users
        self.inputs = inputs
        self.notices = notices
        self.prediction_rows_beyond_k = prediction_rows_beyond_k
        self._values = values
        self._user_array = user_ids
        self.metrics: dict[str, float] = {str(s): float(v.mean()) for s, v in values.items()}
        self.verdicts: list = []  # gates.Verdict, set by apply_gates
        self.baseline: dict[str, Any] | None = None
        self.intervals: dict[str, tuple[float, float]] = {}  # set by add_intervals
        self.interval_level: float | None = None

    def add_intervals(self, level: float = 0.95, rounds: int = 10_000, seed: int = 0) -> None:
        """A percentile bootstrap confidence interval (over users) for every mean."""
        from .stats import bootstrap_mean_ci

        if not 0 < level < 1:
            raise OptionError("--ci-level must lie strictly between 0 and 1")
        if rounds < 100:
            raise OptionError("--ci-rounds must be at least 100")
        self.interval_level = level
        self.intervals = {
            str(spec): bootstrap_mean_ci(v, rounds, seed, level)
            for spec, v in self._values.items()
        }

    def apply_gates(self, plan) -> list:
        """Judge ``plan`` (a ``gates.GatePlan``) on these results; the verdicts join the report."""
        self.verdicts = plan.check(self.metrics)
        if plan.baseline is not None:
            rows = plan.comparison(self.metrics)
            self.baseline = {
                "path": plan.baseline.path,
                "metrics": {m: b for m, b, _, _ in rows},
                "delta": {m: d for m, _, _, d in rows},
            }
        return self.verdicts

    @property
    def passed(self) -> bool:
        """Whether every gate passed (True when there are none)."""
        return all(v.passed for v in self.verdicts)

    @property
    def warnings(self) -> list[str]:
        return [n.message for n in self.notices]

    def values(self, metric: str | MetricSpec) -> np.ndarray:
        """Per-user values of one metric, in the order of ``per_user``."""
        return self._values[metric if isinstance(metric, MetricSpec) else _spec(metric)]

    @cached_property
    def user_ids(self) -> np.ndarray:
        """The evaluated users' ids (sorted), in the order of every per-user array."""
        return self._user_array.to_numpy(zero_copy_only=False)

    @property
    def user_id_array(self) -> pa.Array:
        """``user_ids`` as an Arrow string array."""
        return self._user_array

    @cached_property
    def per_user(self) -> pd.DataFrame:
        """One row per evaluated user (sorted by id), one column per metric."""
        import pandas as pd  # imported here: the command line never needs pandas

        frame = pd.DataFrame({"user_id": pd.array(self.user_ids, dtype=object)})
        for spec, v in self._values.items():
            frame[str(spec)] = v
        return frame

    def per_user_table(self) -> pa.Table:
        """``per_user`` as an Arrow table (what the command line writes)."""
        columns = {"user_id": self._user_array}
        columns.update({str(spec): from_numpy(v) for spec, v in self._values.items()})
        return pa.table(columns)

    def summary_rows(self) -> tuple[list[int | str], list[tuple[str, list[float]]]]:
        """Means as (columns, [(metric name, one value per column, NaN where not asked)])."""
        columns = _columns(self.specs)
        rows: dict[str, list[float]] = {}
        for spec in self.specs:
            row = rows.setdefault(spec.name, [float("nan")] * len(columns))
            row[columns.index(spec.column)] = self.metrics[str(spec)]
        return columns, list(rows.items())

    @property
    def summary(self) -> pd.DataFrame:
        """Means as a table: one row per metric name, one column per K (NaN where not asked)."""
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
        return {
            "rankeval": __version__,
            "schema": SCHEMA_VERSION,
            "k": list(self.settings.k),
            "metrics": dict(self.metrics),
            "settings": dataclasses.asdict(self.settings),
            "inputs": {
                role: dataclasses.asdict(summary)
                | (
                    {"rows_beyond_k": self.prediction_rows_beyond_k}
                    if role == "predictions"
                    else {}
                )
                for role, summary in self.inputs.items()
            },
            "users": dataclasses.asdict(self.users),
            "ci": (
                {"level": self.interval_level, "intervals": {k: list(v) for k, v in
                                                             self.intervals.items()}}
                if self.intervals
                else None
            ),
            "gates": [v.to_dict() for v in self.verdicts],
            "passed": self.passed,
            "baseline": self.baseline,
            "warnings": self.warnings,
            "notices": [dataclasses.asdict(n) for n in self.notices],
        }


def _spec(name: str) -> MetricSpec:
    return from_name(name)


def _columns(specs: list[MetricSpec]) -> list[int | str]:
    """Summary columns: the Ks ascending, then ``all``, then ``R``."""
    cols = {s.column for s in specs}
    return sorted(c for c in cols if isinstance(c, int)) + [c for c in (ALL, "R") if c in cols]


def build_inputs(preds: Predictions, truth: Truth, settings: Settings, problems=None) -> Built:
    """Join, order and cut as ``settings`` say (``problems`` collects errors for validate)."""
    return build(
        preds,
        truth,
        [s.k for s in settings.specs if s.k is not None],
        cut=None if any(s.k is None for s in settings.specs) else max(settings.k),
        ties=settings.ties,
        relevance_threshold=settings.relevance_threshold,
        dedupe=settings.dedupe,
        skip_missing_users=settings.skip_missing_users,
        zero_relevant_users=settings.zero_relevant_users,
        problems=problems,
    )


def evaluate_inputs(preds: Predictions, truth: Truth, settings: Settings) -> Evaluation:
    """Evaluate already loaded and checked inputs."""
    built = build_inputs(preds, truth, settings)
    c = built.counts
    if c.evaluated == 0:
        why = [f"{c.in_truth:,} users in the truth"]
        if c.without_relevant:
            why.append(f"{c.without_relevant:,} without a relevant item")
        if c.without_predictions and settings.skip_missing_users:
            why.append(f"{c.without_predictions:,} without predictions (--skip-missing-users)")
        raise InputError(truth.source.label, "no user can be evaluated: " + ", ".join(why))
    values = compute(built.chunk, settings.specs, settings.conventions)
    inputs = {
        "predictions": _summary(preds.source, c.in_predictions),
        "truth": _summary(truth.source, c.in_truth),
    }
    return Evaluation(
        settings, values, built.users, c, inputs, built.notices, built.prediction_rows_beyond_k
    )


def _summary(source: Source, users: int) -> InputSummary:
    return InputSummary(source.path, source.format, source.rows, users)


Data = Any  # a pandas DataFrame, an Arrow table, or a path


def _open(data: Data, label: str, fmt: str | None):
    if isinstance(data, pa.Table) or type(data).__module__.startswith("pandas"):
        return MemoryTable(data, label)
    flag = "--preds-format" if label == "predictions" else "--truth-format"
    return open_table(data, fmt, flag, role=label)


def evaluate(
    predictions: Data,
    truth: Data,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    gain: str | None = None,
    ap_denominator: str | None = None,
    rr_target: str | None = None,
    relevance_threshold: float | None = None,
    skip_missing_users: bool | None = None,
    zero_relevant_users: str | None = None,
    ties: str | None = None,
    compat: str | None = None,
    dedupe: bool = False,
    user_col: str | None = None,
    item_col: str | None = None,
    rank_col: str | None = None,
    score_col: str | None = None,
    relevance_col: str | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
) -> Evaluation:
    """Evaluate a ranking against ground truth.

    ``predictions`` and ``truth`` are pandas DataFrames, Arrow tables or file paths. Columns
    are found by name or alias (``user_id``/``qid``, ``item_id``/``docno``, ``rank``, ``score``,
    ``relevance``/``rating``) unless named with ``*_col``.

    >>> result = evaluate(preds_df, truth_df, metrics=["ndcg", "map"], k=[5, 10])
    >>> result.metrics["ndcg@10"], result.per_user.head()
    """
    settings = make_settings(
        metrics,
        k,
        gain=gain,
        ap_denominator=ap_denominator,
        rr_target=rr_target,
        relevance_threshold=relevance_threshold,
        skip_missing_users=skip_missing_users,
        zero_relevant_users=zero_relevant_users,
        ties=ties,
        compat=compat,
        dedupe=dedupe,
    )
    preds = load_predictions(
        _open(predictions, "predictions", preds_format), user_col, item_col, rank_col, score_col
    )
    gold = load_truth(_open(truth, "truth", truth_format), user_col, item_col, relevance_col)
    return evaluate_inputs(preds, gold, settings)
