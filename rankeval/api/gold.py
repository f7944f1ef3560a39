"""Machine-judged truth with a human-judged gold sample (#48, SPEC §12): ``evaluate_gold``
(the library's verb, ``rankeval.evaluate_gold``) and ``with_gold`` (what ``score --gold``
adds to the evaluation it ran).

The run is scored twice on the same engine: against the machine-judged truth (every query)
and against the gold file (the gold queries). Per metric, the per-query values of the two
are paired by query id and handed to ``analysis.ppi``: the gold queries are the labelled
set, the truth's other queries the unlabelled one, as ``ppi_py`` takes them. A gold query
whose metric is undefined under either judgments (no relevant item, with the default
``zero_relevant_users='skip'``) is left out of that metric, counted in a notice.

Strata (``gold_strata=COLUMN``): a column of the truth naming each query's stratum (one per
query); the gold file may hold it too, and must then agree. Each stratum's share of the
queries and its sampling rate (its gold queries over its queries) come from the truth.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.analysis.equivalence import Margin, Verdict, judge
from rankeval.analysis.ppi import (
    Moments,
    PPIEstimate,
    gold_needed,
    gold_needed_moments,
    judge_ppi,
    ppi_mean,
    ppi_moments,
    stratified_moments,
    stratified_ppi_mean,
)
from rankeval.api.request import evaluation
from rankeval.engines.distributed.gold import gold_table
from rankeval.engines.interface import Breakdown, Job
from rankeval.engines.pipeline import run
from rankeval.engines.registry import get
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import id_column, read_typed
from rankeval.io.columns import resolve_role
from rankeval.io.formats import STDIN
from rankeval.io.load import open_input
from rankeval.notices import Notice
from rankeval.registry import CORPUS, MEAN, REGISTRY
from rankeval.results.evaluation import Evaluation
from rankeval.results.gold import (
    FEW,
    GoldEstimates,
    GoldMetric,
)
from rankeval.results.store import LocalValues

PER_USER = "gold:{metric}"  # the per-user column of a metric's value under the gold file


@dataclass(frozen=True)
class Queries:
    """The distinct queries of a judgments file, as text, and each one's stratum."""

    label: str
    ids: pa.Array
    strata: pa.Array | None = None


@dataclass(frozen=True)
class GoldRequest:
    """What ``--gold`` asks: the gold file and how to read it, the estimator's options."""

    gold: Any
    gold_format: str | None = None
    lam: float | None = None  # None: PPI++ tunes it
    strata: str | None = None  # the column naming each query's stratum
    level: float = 0.95
    plan: float | None = None  # --gold-plan HALF_WIDTH

    def check(self, job: Job, engine) -> None:
        """Before any input is read: the options, and inputs that can be read twice."""
        if not engine.gold:
            raise OptionError(f"{{opt:gold}} needs the per-query values of both judgments on "
                              f"this machine: the {engine.name} engine does not give them yet "
                              "(use --engine local)")
        self.check_options([job.predictions, job.truth])

    def check_options(self, inputs: Iterable[Any]) -> None:
        """The estimator's options, and ``inputs`` (read twice, as the gold file is) not
        standard input."""
        if self.lam is not None and not 0 <= self.lam <= 1:
            raise OptionError(f"{{opt:ppi_lambda}} must lie in [0, 1], got {self.lam}")
        if self.plan is not None and not self.plan > 0:
            raise OptionError(f"{{opt:gold_plan}} must be above 0, got {self.plan}")
        if STDIN in [x for x in (*inputs, self.gold) if isinstance(x, str)]:  # paths only
            raise OptionError("{opt:gold} scores the runs against TRUTH and the gold file in "
                              "turn: give files, not - (standard input is read once)")

    def applied(self, engine, job: Job, result: Evaluation) -> Evaluation:
        """``score --gold``: ``result`` with the gold estimates (``with_gold``)."""
        return with_gold(engine, job, result, self)

    def margins(self, margins: list[Margin], ev: Evaluation, path: str,
                paired: Mapping[str, tuple[np.ndarray, np.ndarray]], alpha: float,
                run: str = "this run") -> list[Verdict]:
        """``score --gold --non-inferior/--equivalent``: each margin on the PPI estimate of
        the paired difference against the baseline's per-user file at ``path``
        (``margin_verdict``), else on the machine values ``paired``, saying why."""
        baseline = open_input(path, "per-user values", None, None)
        out = []
        for m in margins:
            verdict = margin_verdict(m, ev, baseline, alpha, run)
            out.append(verdict if verdict is not None else dataclasses.replace(
                judge(m, run, *paired[m.metric], alpha),
                judged_by=machine_only(path, m.metric, ev)))
        return out


def evaluate_gold(predictions: Any, truth: Any, gold: Any,
                  metrics: str | Iterable[str] | None = None,
                  k: int | str | Iterable[int | str] | None = None, *,
                  gold_format: str | None = None, ppi_lambda: float | None = None,
                  gold_strata: str | None = None, confidence: float = 0.95,
                  gold_plan: float | None = None, **options: Any) -> Evaluation:
    """Evaluate ``predictions`` against machine-judged ``truth`` (every query) corrected by
    ``gold``, human judgments of a uniform random sample of the queries (SPEC §12).

    The result is ``evaluate``'s (its ``metrics`` the machine-only means) with ``.gold``: per
    metric the PPI++ estimate and its ``confidence`` interval, the gold-only and machine-only
    means, the judge's bias (machine minus gold on the gold queries: positive, it overrates)
    and the effective number of gold queries. ``ppi_lambda``: a fixed weight (1 classic PPI,
    0 the gold sample alone); ``gold_strata``: the truth's column naming each query's
    stratum, for stratified PPI; ``gold_plan``: a half-width, for the gold queries it calls
    for. ``gold_format``: the gold file's format (default ``truth_format``'s). The other
    keywords are ``evaluate``'s.

    >>> ev = evaluate_gold("run.csv", "llm.qrels", "human.qrels", "ndcg@10")
    >>> ev.gold.metrics["ndcg@10"].estimate.ppi
    """
    request = GoldRequest(gold, gold_format, ppi_lambda, gold_strata, confidence, gold_plan)
    if request.lam is not None and not 0 <= request.lam <= 1:
        raise OptionError(f"{{option}} must lie in [0, 1], got {request.lam}", "ppi_lambda")
    if request.plan is not None and not request.plan > 0:
        raise OptionError(f"{{option}} must be above 0, got {request.plan}", "gold_plan")
    if not get(options.get("engine")).gold:
        raise OptionError(f"gold needs the per-query values of both judgments: the "
                          f"{options.get('engine')} engine does not give them yet "
                          "(use engine='local')")
    columns = {c: options.get(c) for c in ("user_col", "item_col", "relevance_col",
                                           "subtopic_col")}
    truth_format = options.get("truth_format")
    inputs = queries_of(truth, gold, request, truth_format, columns, {})
    engine, engine_options = options.pop("engine", "local"), options.pop("engine_options", None)
    machine = evaluation(predictions, truth, metrics, k, options, engine, engine_options)
    human = evaluation(predictions, gold, metrics, k,
                       {**options, "truth_format": gold_format or truth_format}, engine,
                       engine_options)
    if isinstance(machine.store, LocalValues):
        return _combined(machine, human, inputs, request)
    # a cluster engine: the gold sample's values come here, the machine values stay there
    return _from_parts(get(engine), machine, human.collect(), inputs, request)


def with_gold(engine, job: Job, result: Evaluation, request: GoldRequest) -> Evaluation:
    """``score --gold``: ``result`` (the job run against the machine-judged truth) with the
    gold estimates, the job run again against the gold file on the same engine."""
    inputs = queries_of(job.truth, request.gold, request, job.truth_format, job.columns,
                         job.reading)
    gold_job = dataclasses.replace(
        job, inputs=dataclasses.replace(job.inputs, truth=request.gold,
                                        truth_format=request.gold_format or job.truth_format),
        breakdown=Breakdown(), intervals=None, keep_values=True, quiet=True)
    human = run(engine, gold_job)
    if isinstance(result.store, LocalValues):
        return _combined(result, human, inputs, request)
    return _from_parts(engine, result, human, inputs, request)


def _from_parts(engine, machine: Evaluation, human: Evaluation,
                inputs: tuple[Queries, Queries], request: GoldRequest) -> Evaluation:
    """``_combined`` where the machine values stay on the cluster (Spark, Ray): the gold
    values (the gold job's, brought here: a sample) go to the partitions, which give the
    moments PPI needs (``engine.gold_parts``), added up. The estimates are the local
    engine's to rounding; the per-user values keep the machine column alone."""
    every, sample = inputs
    wanted, skipped = _estimable(machine)
    gold = gold_table(sample.ids, human.user_id_array,
                      {str(spec): human.values(spec) for spec in wanted})
    strata = (None if every.strata is None else
              pa.table({"user_id": every.ids, "stratum": every.strata}))
    parts = engine.gold_parts(machine.store, gold, strata, [str(s) for s in wanted])
    out: dict[str, GoldMetric] = {}
    notices: list[Notice] = []
    for spec in wanted:
        metric = str(spec)
        found = parts.get(metric, {})
        pooled_gold, pooled_other = Moments(), Moments()
        for g, o in found.values():
            pooled_gold, pooled_other = pooled_gold + g, pooled_other + o
        if strata is None:
            estimate = ppi_moments(pooled_gold, pooled_other, request.level, request.lam)
        else:
            short = {s: g.n for s, (g, _) in found.items() if g.n < 2}
            if short:
                _strata_short(short, request.strata, sample.label)
            estimate = stratified_moments(found, request.level, request.lam)
        plan = (None if request.plan is None else
                gold_needed_moments(pooled_gold, pooled_other, request.plan, request.level,
                                    request.lam))
        out[metric] = _metric(metric, estimate, len(sample.ids) - pooled_gold.n, plan,
                              sample.label, notices)
    estimates = _estimates(out, skipped, inputs, request, notices)
    return dataclasses.replace(machine, gold=estimates,
                               inputs={**machine.inputs, "gold": human.inputs["truth"]},
                               notices=[*machine.notices, *notices])


def queries_of(truth: Any, gold: Any, request: GoldRequest, truth_format: str | None,
                columns: Mapping[str, Any], reading: Mapping[str, Any]
                ) -> tuple[Queries, Queries]:
    """The truth's and the gold file's queries, checked: the gold file holds judged pairs,
    of the truth's queries only, and agrees with the truth on each query's stratum."""
    every = _queries(truth, truth_format, columns, reading, request.strata, required=True)
    sample = _queries(gold, request.gold_format or truth_format, columns, reading,
                      request.strata, required=False)
    outside = pc.invert(pc.is_in(sample.ids, value_set=every.ids))
    if pc.any(outside).as_py():
        stray = pc.filter(sample.ids, outside)
        raise InputError(sample.label, f"{_some(stray)} not in the truth {every.label}: the "
                         "gold queries must be a sample of the truth's")
    if sample.strata is not None and every.strata is not None:
        theirs = pc.take(every.strata, pc.index_in(sample.ids, value_set=every.ids))
        differ = pc.not_equal(theirs, sample.strata)
        if pc.any(differ).as_py():
            raise InputError(sample.label, f"{_some(pc.filter(sample.ids, differ))} in another "
                             f"stratum than in the truth {every.label}", column=request.strata)
    return every, sample


def _queries(data: Any, fmt: str | None, columns: Mapping[str, Any], reading: Mapping[str, Any],
             strata: str | None, required: bool) -> Queries:
    """The distinct queries of a judgments file (its user column), and with ``strata`` the
    stratum of each (``required``: the file must have the column); one stratum per query."""
    table = open_input(data, "truth", fmt, reading)
    label = table.label
    user = resolve_role(table.columns, "truth", columns, label)["user"]
    assert user is not None  # required: resolve_role raises without it
    named = strata if strata is not None and strata in table.columns else None
    if strata is not None and required and named is None:
        raise InputError(label, f"no column {strata!r} to read the strata from "
                         f"({{opt:gold_strata}}); its columns: {', '.join(table.columns)}")
    types: dict[str, pa.DataType] = {user: ID}
    if named is not None:
        types[named] = ID
    read = read_typed(table, types)
    ids = _flat(id_column(read, user, label).cast(pa.string()))
    if named is None:
        return Queries(label, _flat(pc.unique(ids)))
    pairs = pa.table([ids, _flat(id_column(read, named, label).cast(pa.string()))],
                     names=["q", "s"])
    grouped = pairs.group_by("q").aggregate([("s", "count_distinct"), ("s", "min")])
    mixed = _flat(grouped["s_count_distinct"]).to_numpy() > 1
    if mixed.any():
        raise InputError(label, f"{_some(_flat(grouped['q']).filter(pa.array(mixed)))} in more "
                         "than one stratum: a stratum is a property of the query", column=named)
    return Queries(label, _flat(grouped["q"]), _flat(grouped["s_min"]))


def _flat(values: Any) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _combined(machine: Evaluation, human: Evaluation, inputs: tuple[Queries, Queries],
              request: GoldRequest) -> Evaluation:
    """The machine evaluation with the gold estimates and the per-query gold values."""
    every, sample = inputs
    ids = machine.user_id_array.cast(pa.string())
    gold_ids = human.user_id_array.cast(pa.string())
    in_sample = pc.is_in(ids, value_set=sample.ids).to_numpy(zero_copy_only=False)
    where = pc.index_in(ids, value_set=gold_ids)
    found = pc.is_valid(where).to_numpy(zero_copy_only=False)
    rows = to_numpy(where.fill_null(0))
    strata = strata_of(every, ids)
    out: dict[str, GoldMetric] = {}
    per_user: dict[str, np.ndarray] = {}
    notices: list[Notice] = []
    wanted, skipped = _estimable(machine)
    for spec in wanted:
        metric = str(spec)
        a = machine.values(spec)
        h = np.where(found, human.values(spec)[rows], np.nan)
        per_user[PER_USER.format(metric=metric)] = np.where(in_sample, h, np.nan)
        gold, other, estimate = ppi_of(h, a, in_sample, strata, request, sample.label)
        plan = (None if request.plan is None else
                gold_needed(h[gold], a[gold], a[other], request.plan, request.level,
                            request.lam))
        out[metric] = _metric(metric, estimate, len(sample.ids) - int(gold.sum()), plan,
                              sample.label, notices)
    estimates = _estimates(out, skipped, inputs, request, notices)
    store = machine.store
    if isinstance(store, LocalValues):  # the engines that give --gold keep values here
        store = LocalValues(store.arrays, store.ids, {**store.extra, **per_user})
    return dataclasses.replace(machine, gold=estimates, store=store,
                               inputs={**machine.inputs, "gold": human.inputs["truth"]},
                               notices=[*machine.notices, *notices])


def _estimable(machine: Evaluation) -> tuple[list, dict[str, str]]:
    """The metrics PPI estimates (means over queries), and why each other one is not."""
    wanted, skipped = [], {}
    for spec in machine.specs:
        row = REGISTRY[spec.name]
        if row.scope == CORPUS or row.overall != MEAN:
            skipped[str(spec)] = ("one value for the run, no per-query values" if
                                  row.scope == CORPUS else "not a mean over queries")
        else:
            wanted.append(spec)
    return wanted, skipped


def _metric(metric: str, estimate, left: int, plan, label: str,
            notices: list[Notice]) -> GoldMetric:
    """One metric's estimates; the gold queries it left out, a notice."""
    if left:
        notices.append(Notice("gold_left_out", left, {"path": label, "metric": metric}))
    return GoldMetric(metric, estimate, left, plan)


def _estimates(out: dict[str, GoldMetric], skipped: dict[str, str],
               inputs: tuple[Queries, Queries], request: GoldRequest,
               notices: list[Notice]) -> GoldEstimates:
    """Every metric's estimates together; too few gold queries, a notice first."""
    every, sample = inputs
    if len(sample.ids) < FEW:
        notices.insert(0, Notice("few_gold", len(sample.ids), {"path": sample.label}))
    return GoldEstimates(sample.label, request.level, request.lam, len(every.ids),
                         len(sample.ids), out, request.strata, request.plan, skipped,
                         sample, every)


def strata_of(every: Queries, ids: pa.Array) -> np.ndarray | None:
    """Each of ``ids``' stratum (text), None when the queries have no strata."""
    if every.strata is None:
        return None
    return to_numpy(every.strata.take(pc.index_in(ids, value_set=every.ids))).astype(str)


def ppi_of(h: np.ndarray, a: np.ndarray, in_sample: np.ndarray, strata: np.ndarray | None,
         request: GoldRequest, label: str) -> tuple[np.ndarray, np.ndarray, PPIEstimate]:
    """The PPI++ estimate of the mean of the human values ``h`` per query, from the
    machine's ``a`` (NaN: undefined there): the gold queries (in the sample, both defined),
    the others (out of it, the machine's defined), and the estimate, per stratum when
    ``strata`` (each stratum checked to have two gold queries)."""
    gold = in_sample & ~np.isnan(a) & ~np.isnan(h)
    other = ~in_sample & ~np.isnan(a)
    if strata is None:
        return gold, other, ppi_mean(h[gold], a[gold], a[other], request.level, request.lam)
    strata_checked(strata[gold], strata[other], request.strata, label)
    return gold, other, stratified_ppi_mean(h[gold], a[gold], a[other], strata[gold],
                                            strata[other], request.level, request.lam)


def strata_checked(gold: np.ndarray, other: np.ndarray, column: str | None,
                    label: str) -> None:
    """Every stratum has at least two gold queries (else no variance to estimate from)."""
    names, counts = np.unique(gold, return_counts=True)
    known = dict(zip(names.tolist(), counts.tolist(), strict=True))
    short = {s: known.get(s, 0) for s in np.unique(np.concatenate([gold, other])).tolist()
             if known.get(s, 0) < 2}
    if short:
        _strata_short(short, column, label)


def _strata_short(short: Mapping[str, int], column: str | None, label: str) -> None:
    """The error of strata with fewer than two gold queries (stratum -> its gold queries)."""
    shown = ", ".join(f"{s!r} ({plural(n, 'gold query', 'gold queries')})"
                      for s, n in sorted(short.items())[:5])
    raise InputError(label, f"{plural(len(short), 'stratum', 'strata')} with fewer than "
                     f"two gold queries, e.g. {shown}: stratified PPI estimates each "
                     "stratum's variance from its own gold queries", column=column)


def _some(queries: pa.Array) -> str:
    """``3 queries (e.g. 'q7', 'q9', 'q12')``."""
    shown = ", ".join(repr(q) for q in queries[:5].to_pylist())
    return f"{plural(len(queries), 'query', 'queries')} (e.g. {shown})"


def margin_verdict(margin: Margin, ev: Evaluation, baseline: Any, alpha: float,
                   run: str = "this run") -> Verdict | None:
    """``score --gold --non-inferior/--equivalent``: the margin judged on the PPI estimate of
    the paired difference (SPEC §12) between this run and the baseline's per-user file
    (``baseline``, as opened), the users paired by id: the gold queries are the gold file's
    with a gold value (``gold:METRIC``) in both, the others those outside the gold file.
    None where the baseline's file has no ``gold:METRIC`` column (it was not written by a
    ``--gold`` run), or where this run's values hold no gold column (a cluster engine's):
    the machine values are then all there is to pair."""
    g = ev.gold
    column = PER_USER.format(metric=margin.metric)
    if g is None or margin.metric not in g.metrics or column not in baseline.columns:
        return None
    current = ev.per_user_table()
    if column not in current.column_names:  # a cluster engine keeps the machine values alone
        return None
    types = {"user_id": pa.string(), margin.metric: pa.float64(), column: pa.float64()}
    base = baseline.read(types)
    at = pc.index_in(current.column("user_id").cast(pa.string()),
                     value_set=base.column("user_id"))
    both = pc.is_valid(at)
    ids = _flat(current.column("user_id").cast(pa.string())).filter(both)
    rows = _flat(at).filter(both)
    a_b, h_b = (to_numpy(_flat(base.column(c)).take(rows)).astype(np.float64)
                for c in (margin.metric, column))
    a_c, h_c = (to_numpy(_flat(current.column(c)).filter(both)).astype(np.float64)
                for c in (margin.metric, column))
    in_sample = pc.is_in(ids, value_set=g.sample.ids).to_numpy(zero_copy_only=False)
    a, h = a_c - a_b, h_c - h_b
    gold = in_sample & ~np.isnan(a) & ~np.isnan(h)
    other = ~in_sample & ~np.isnan(a)
    base_mean = ppi_mean(h_b[gold], a_b[gold], a_b[other], lam=g.lam).ppi.value
    strata = None
    if g.every is not None and g.every.strata is not None:
        named = to_numpy(g.every.strata.take(pc.index_in(ids, value_set=g.every.ids))
                         ).astype(str)
        strata_checked(named[gold], named[other], g.strata_column, g.path)
        strata = (named[gold], named[other])
    return judge_ppi(margin, run, h[gold], a[gold], a[other], base_mean, alpha, g.lam, strata)


def machine_only(path: str, metric: str, ev: Evaluation) -> str:
    """Why a margin of a ``--gold`` score was judged on the machine judgments alone."""
    column = PER_USER.format(metric=metric)
    if ev.gold is not None and metric not in ev.gold.metrics:
        return f"the machine judgments alone: {metric} has no PPI estimate"
    if column not in ev.per_user_table().column_names:
        return (f"the machine judgments alone: this engine keeps no per-query {column} "
                "(the local engine does)")
    return (f"the machine judgments alone: {path} has no {column} column (write it with "
            "score --gold --per-user)")
