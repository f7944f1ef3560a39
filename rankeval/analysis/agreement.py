"""How far a machine judge agrees with human judges (``rankeval agree``): on the labels of the
(query, item) pairs both judged, and on what the two qrels say about systems.

Labels: the confusion matrix (human grades as rows, machine grades as columns), Cohen's kappa
unweighted and weighted by the grades' distance (linear |x - y|, quadratic (x - y)^2, the
grades' own values: a grade no pair holds still counts in the distance), Krippendorff's alpha
(nominal, ordinal, interval; two coders, each pair a unit), the machine's precision and recall
per grade and at the relevance threshold (relevant: relevance >= T, or > 0 without T, as every
metric reads it). Systems: per metric, each run's value over the queries both qrels evaluate,
the two orderings, Kendall's tau-b, tau_AP (Yilmaz, Aslam and Robertson, SIGIR 2008; the human
ordering the reference), Spearman's rho, the pairs of runs the machine orders the other way
with the paired test of ``compare`` under the human qrels, and the per-query correlation of
the metric between the two qrels.

Numbers in (codes, grades, per-query matrices), dataclasses out; no file, no engine. A
statistic that cannot be computed is NaN, and ``undefined`` says why.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankeval.analysis.significance import compare, correct
from rankeval.errors import plural
from rankeval.kernels.aggregate import exact_parts, overall
from rankeval.names import MetricSpec

KAPPAS = ("unweighted", "linear", "quadratic")
ALPHAS = ("nominal", "ordinal", "interval")


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def relevant(grades: np.ndarray, threshold: float | None) -> np.ndarray:
    """Which grades count as relevant: ``relevance >= T``, or ``> 0`` without a threshold
    (the ``relevance_threshold`` setting's meaning, SPEC and ``conventions.TABLE``)."""
    return grades > 0 if threshold is None else grades >= threshold


# --- which pairs each side judged -------------------------------------------------------------

@dataclass(frozen=True)
class Coverage:
    """The judged (query, item) pairs and the queries of each side, and how many only one
    side judged (``*_in_shared``: of those, the pairs of queries both judged)."""

    pairs_both: int
    pairs_human_only: int
    pairs_machine_only: int
    human_only_in_shared: int
    machine_only_in_shared: int
    queries_both: int
    queries_human_only: int
    queries_machine_only: int

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": {"both": self.pairs_both, "human_only": self.pairs_human_only,
                          "machine_only": self.pairs_machine_only,
                          "human_only_in_shared_queries": self.human_only_in_shared,
                          "machine_only_in_shared_queries": self.machine_only_in_shared},
                "queries": {"both": self.queries_both, "human_only": self.queries_human_only,
                            "machine_only": self.queries_machine_only}}


def pair_up(h_user: np.ndarray, h_item: np.ndarray, m_user: np.ndarray, m_item: np.ndarray,
            n_items: int) -> tuple[Coverage, np.ndarray, np.ndarray]:
    """The pairs both sides judged, from user and item codes over shared dictionaries (each
    side's pairs distinct): the coverage, and the rows of each side holding them, in the
    same order."""
    hk = h_user.astype(np.int64) * max(n_items, 1) + h_item
    mk = m_user.astype(np.int64) * max(n_items, 1) + m_item
    _, h_rows, m_rows = np.intersect1d(hk, mk, assume_unique=True, return_indices=True)
    hq, mq = np.unique(h_user), np.unique(m_user)
    shared_q = np.intersect1d(hq, mq, assume_unique=True)
    h_only = np.ones(len(hk), dtype=bool)
    h_only[h_rows] = False
    m_only = np.ones(len(mk), dtype=bool)
    m_only[m_rows] = False
    coverage = Coverage(
        pairs_both=len(h_rows), pairs_human_only=int(h_only.sum()),
        pairs_machine_only=int(m_only.sum()),
        human_only_in_shared=int(np.isin(h_user[h_only], shared_q).sum()),
        machine_only_in_shared=int(np.isin(m_user[m_only], shared_q).sum()),
        queries_both=len(shared_q), queries_human_only=len(hq) - len(shared_q),
        queries_machine_only=len(mq) - len(shared_q))
    return coverage, h_rows, m_rows


# --- labels -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class GradeRow:
    """One grade: how often each side gave it, and the machine's precision and recall on it
    (the human's grade the truth)."""

    grade: float
    human: int
    machine: int
    both: int  # pairs both gave this grade
    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, Any]:
        return {"grade": self.grade, "human": self.human, "machine": self.machine,
                "both": self.both, "precision": _finite(self.precision),
                "recall": _finite(self.recall), "f1": _finite(self.f1)}


@dataclass(frozen=True)
class Binary:
    """Relevant or not at the threshold: the 2x2 counts and the machine's precision, recall,
    F1 and kappa."""

    threshold: float | None
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    kappa: float

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold,
                "relevant": "relevance > 0" if self.threshold is None
                else f"relevance >= {self.threshold:g}",
                "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": _finite(self.precision), "recall": _finite(self.recall),
                "f1": _finite(self.f1), "kappa": _finite(self.kappa)}


@dataclass(frozen=True)
class Labels:
    """Agreement on the labels of the pairs both sides judged."""

    grades: tuple[float, ...]  # every grade either side gave to a shared pair, ascending
    confusion: np.ndarray  # [human grade, machine grade] -> pairs
    observed: float  # share of pairs with the same grade
    kappa: dict[str, float]  # KAPPAS
    alpha: dict[str, float]  # ALPHAS
    per_grade: tuple[GradeRow, ...]
    binary: Binary
    mean_human: float
    mean_machine: float
    machine_higher: int  # pairs the machine graded above the human
    machine_lower: int
    undefined: dict[str, str] = field(default_factory=dict)  # statistic -> why

    def to_dict(self) -> dict[str, Any]:
        return {"grades": list(self.grades),
                "confusion": self.confusion.tolist(),
                "observed_agreement": _finite(self.observed),
                "kappa": {k: _finite(v) for k, v in self.kappa.items()},
                "krippendorff_alpha": {k: _finite(v) for k, v in self.alpha.items()},
                "per_grade": [g.to_dict() for g in self.per_grade],
                "at_threshold": self.binary.to_dict(),
                "mean_grade": {"human": _finite(self.mean_human),
                               "machine": _finite(self.mean_machine)},
                "machine_higher": self.machine_higher, "machine_lower": self.machine_lower,
                "undefined": dict(self.undefined)}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=np.asarray(den) > 0)
    return out


def kappa(confusion: np.ndarray, distance: np.ndarray) -> float:
    """Cohen's kappa from a confusion matrix and a disagreement weight per cell (0 on the
    diagonal): 1 - sum(w O) / sum(w E), E the counts chance gives from the two margins. NaN
    when chance disagrees nowhere (both sides used one grade)."""
    c = confusion.astype(np.float64)
    n = c.sum()
    expected = np.outer(c.sum(axis=1), c.sum(axis=0)) / n if n else c
    chance = float((distance * expected).sum())
    return 1.0 - float((distance * c).sum()) / chance if chance > 0 else math.nan


def alpha(confusion: np.ndarray, grades: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of two coders with a value each for every unit, from their
    coincidence matrix o = C + C^T: 1 - (n - 1) sum(o d^2) / sum(n_c n_k d^2), n = 2 units,
    d^2 the level's distance (nominal: c != k; interval: (c - k)^2; ordinal: the values
    between c and k counted, (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2). NaN when every value is
    one (no expected disagreement)."""
    o = (confusion + confusion.T).astype(np.float64)
    counts = o.sum(axis=1)
    n = counts.sum()
    if level == "nominal":
        d2 = 1.0 - np.eye(len(grades))
    elif level == "interval":
        d2 = np.subtract.outer(grades, grades) ** 2
    elif level == "ordinal":
        cum = np.cumsum(counts)
        lo = np.minimum.outer(np.arange(len(grades)), np.arange(len(grades)))
        hi = np.maximum.outer(np.arange(len(grades)), np.arange(len(grades)))
        between = cum[hi] - cum[lo] + counts[lo]  # sum of n_g for g from c to k
        d2 = (between - (counts[:, None] + counts[None, :]) / 2) ** 2
    else:
        raise ValueError(f"level must be one of {', '.join(ALPHAS)}")
    expected = float((np.outer(counts, counts) * d2).sum())
    if not expected > 0:
        return math.nan
    return 1.0 - (n - 1) * float((o * d2).sum()) / expected


def labels(human: np.ndarray, machine: np.ndarray, threshold: float | None = None) -> Labels:
    """Agreement between the grades of the same pairs (``human[i]`` and ``machine[i]``)."""
    human = np.asarray(human, dtype=np.float64)
    machine = np.asarray(machine, dtype=np.float64)
    grades = np.unique(np.concatenate([human, machine]))
    g = len(grades)
    hi, mi = np.searchsorted(grades, human), np.searchsorted(grades, machine)
    confusion = np.bincount(hi * g + mi, minlength=g * g).reshape(g, g).astype(np.int64)
    n = int(confusion.sum())
    undefined: dict[str, str] = {}
    spread = np.subtract.outer(grades, grades)
    weights = {"unweighted": 1.0 - np.eye(g), "linear": np.abs(spread),
               "quadratic": spread ** 2}
    kappas = {k: kappa(confusion, weights[k]) for k in KAPPAS}
    for k, v in kappas.items():
        if math.isnan(v):
            undefined[f"kappa.{k}"] = ("chance agreement is total: each side gave every pair "
                                       "one grade")
    alphas = {a: alpha(confusion, grades, a) for a in ALPHAS}
    for a, v in alphas.items():
        if math.isnan(v):
            undefined[f"krippendorff_alpha.{a}"] = ("every label is one grade: no "
                                                    "disagreement is expected")
    diag = np.diag(confusion)
    rows, cols = confusion.sum(axis=1), confusion.sum(axis=0)
    precision, recall = _ratio(diag, cols), _ratio(diag, rows)
    f1 = _ratio(2 * diag, rows + cols)
    per_grade = tuple(GradeRow(float(grades[i]), int(rows[i]), int(cols[i]), int(diag[i]),
                               float(precision[i]), float(recall[i]), float(f1[i]))
                      for i in range(g))
    for i, row in enumerate(per_grade):
        if not cols[i]:
            undefined[f"per_grade.{row.grade:g}.precision"] = "the machine never gave it"
        if not rows[i]:
            undefined[f"per_grade.{row.grade:g}.recall"] = "the humans never gave it"
    binary = _binary(confusion, grades, threshold, undefined)
    return Labels(
        grades=tuple(float(x) for x in grades), confusion=confusion,
        observed=float(diag.sum()) / n if n else math.nan, kappa=kappas, alpha=alphas,
        per_grade=per_grade, binary=binary,
        mean_human=float(human.mean()) if n else math.nan,
        mean_machine=float(machine.mean()) if n else math.nan,
        machine_higher=int(np.count_nonzero(machine > human)),
        machine_lower=int(np.count_nonzero(machine < human)), undefined=undefined)


def _binary(confusion: np.ndarray, grades: np.ndarray, threshold: float | None,
            undefined: dict[str, str]) -> Binary:
    rel = relevant(grades, threshold)
    tp = int(confusion[np.ix_(rel, rel)].sum())
    fp = int(confusion[np.ix_(~rel, rel)].sum())
    fn = int(confusion[np.ix_(rel, ~rel)].sum())
    tn = int(confusion[np.ix_(~rel, ~rel)].sum())
    two = np.array([[tn, fp], [fn, tp]])
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else math.nan
    k = kappa(two, 1.0 - np.eye(2))
    if not tp + fp:
        undefined["at_threshold.precision"] = "the machine judged no pair relevant"
    if not tp + fn:
        undefined["at_threshold.recall"] = "the humans judged no pair relevant"
    if not tp + fp + fn:
        undefined["at_threshold.f1"] = "neither side judged a pair relevant"
    if math.isnan(k):
        undefined["at_threshold.kappa"] = ("chance agreement is total: each side judged every "
                                           "pair alike (all relevant or all not)")
    return Binary(threshold, tp, fp, fn, tn, precision, recall, f1, k)


# --- systems ----------------------------------------------------------------------------------

def tau_ap(reference: np.ndarray, other: np.ndarray) -> float:
    """Yilmaz, Aslam and Robertson's AP correlation of ``other``'s ordering (descending)
    against ``reference``'s: 2 / (N - 1) sum_{i=2..N} C(i) / (i - 1) - 1, C(i) the items
    above rank i in ``other`` that ``reference`` also puts above it. NaN with fewer than two
    items or a tie in either (the definition orders strictly)."""
    x, y = np.asarray(reference, np.float64), np.asarray(other, np.float64)
    n = len(x)
    if n < 2 or len(np.unique(x)) < n or len(np.unique(y)) < n:
        return math.nan
    xs = x[np.argsort(-y, kind="stable")]
    above = np.tril(xs[None, :] > xs[:, None], -1)  # [i, j]: j above i in both
    c = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (c / np.arange(1, n)).sum() - 1.0)


def correlation(x: np.ndarray, y: np.ndarray, kind: str) -> tuple[float, str | None]:
    """Pearson's r, Spearman's rho or Kendall's tau-b (scipy) of paired values, and why it is
    undefined (fewer than two pairs, a side constant)."""
    from scipy import stats  # import cost: scipy.stats, only where a correlation is asked

    if len(x) < 2:
        return math.nan, f"{plural(len(x), 'value')}: a correlation needs two"
    if np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan, "one side is constant: no order to correlate"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "pearson":
            value = stats.pearsonr(x, y).statistic
        elif kind == "spearman":
            value = stats.spearmanr(x, y).statistic
        else:
            value = stats.kendalltau(x, y).statistic
    return float(value), None


@dataclass(frozen=True)
class Swap:
    """Two runs the machine orders the other way from the humans: ``above`` is ahead under the
    human qrels; the paired test of ``compare`` on the human per-query values."""

    above: str
    below: str
    human: tuple[float, float]
    machine: tuple[float, float]
    queries: int
    p_value: float
    p_adjusted: float
    significant: bool | None  # None: the test is undefined

    def to_dict(self) -> dict[str, Any]:
        return {"above": self.above, "below": self.below,
                "human": [_finite(v) for v in self.human],
                "machine": [_finite(v) for v in self.machine], "queries": self.queries,
                "p_value": _finite(self.p_value), "p_adjusted": _finite(self.p_adjusted),
                "significant_under_human": self.significant}


@dataclass(frozen=True)
class Ordering:
    """One metric: each run's value under each qrels (the queries both evaluate), how the two
    orderings agree, the swapped pairs, and the per-query correlation of the metric."""

    metric: str
    runs: tuple[str, ...]
    human: tuple[float, ...]
    machine: tuple[float, ...]
    queries: int
    kendall_tau: float
    tau_ap: float
    spearman: float
    swaps: tuple[Swap, ...]
    pairs: int  # pairs of runs with a value under both
    tied: int  # pairs tied under exactly one of the qrels
    query_pairs: int  # (run, query) values compared per query
    query_pearson: float
    query_spearman: float
    per_run: dict[str, tuple[int, float, float]]  # run -> (queries, pearson, spearman)
    undefined: dict[str, str] = field(default_factory=dict)

    def order(self, side: str) -> list[str]:
        """The runs best first under ``side`` (``human`` or ``machine``), undefined last."""
        values = np.asarray(getattr(self, side))
        key = np.where(np.isfinite(values), -values, np.inf)
        return [self.runs[i] for i in np.argsort(key, kind="stable")]

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "queries": self.queries,
                "runs": {r: {"human": _finite(h), "machine": _finite(m)}
                         for r, h, m in zip(self.runs, self.human, self.machine, strict=True)},
                "order": {"human": self.order("human"), "machine": self.order("machine")},
                "kendall_tau": _finite(self.kendall_tau), "tau_ap": _finite(self.tau_ap),
                "spearman": _finite(self.spearman), "pairs": self.pairs,
                "tied_under_one": self.tied, "swaps": [s.to_dict() for s in self.swaps],
                "per_query": {"values": self.query_pairs,
                              "pearson": _finite(self.query_pearson),
                              "spearman": _finite(self.query_spearman),
                              "per_run": {r: {"queries": q, "pearson": _finite(p),
                                              "spearman": _finite(s)}
                                          for r, (q, p, s) in self.per_run.items()}},
                "undefined": dict(self.undefined)}


def system_value(spec: MetricSpec, values: np.ndarray) -> float:
    """A run's value of a metric from its per-query values as score makes it (mean, sum or
    geometric mean per the registry), queries the metric leaves undefined left out."""
    v = values[np.isfinite(values)]
    return overall(spec, exact_parts(v), len(v))


def ordering(spec: MetricSpec, runs: Sequence[str], human: np.ndarray, machine: np.ndarray,
             test: str = "t", rounds: int = 10_000, seed: int = 0, alpha: float = 0.05,
             correction: str = "holm") -> Ordering:
    """One metric's orderings from per-query values, ``human[r, q]`` and ``machine[r, q]``
    (run r, query q: the same queries under both). Swaps are tested with ``compare``'s
    paired test on the human values and corrected over the swaps of the metric."""
    names = list(runs)
    n = len(names)
    h_sys = np.array([system_value(spec, row) for row in human]) if n else np.zeros(0)
    m_sys = np.array([system_value(spec, row) for row in machine]) if n else np.zeros(0)
    undefined: dict[str, str] = {}
    ok = np.isfinite(h_sys) & np.isfinite(m_sys)
    x, y = h_sys[ok], m_sys[ok]
    if not ok.all():
        undefined["runs"] = (f"{int((~ok).sum())} run(s) without a value under both qrels "
                             "are left out of the correlations")
    tau, why = correlation(x, y, "kendall")
    if why:
        undefined["kendall_tau"] = why
    rho, why = correlation(x, y, "spearman")
    if why:
        undefined["spearman"] = why
    tap = tau_ap(x, y)
    if math.isnan(tap):
        undefined["tau_ap"] = ("tied values: tau_AP orders strictly" if len(x) >= 2 else
                               "fewer than two runs")
    # every pair of runs at once: the sign of each difference under each qrels
    i, j = np.triu_indices(n, 1)
    i, j = i[ok[i] & ok[j]], j[ok[i] & ok[j]]
    dh, dm = np.sign(h_sys[i] - h_sys[j]), np.sign(m_sys[i] - m_sys[j])
    swapped = dh * dm < 0
    tied = int(np.count_nonzero((dh == 0) != (dm == 0)))
    si, sj = i[swapped], j[swapped]
    above = np.where(dh[swapped] > 0, si, sj)
    below = np.where(dh[swapped] > 0, sj, si)
    tests = [_paired(human[a], human[b], test, rounds, seed) for a, b in zip(above, below,
                                                                                strict=True)]
    adjusted = correct([p for p, _ in tests], correction) if tests else []
    swaps = tuple(
        Swap(names[a], names[b], (float(h_sys[a]), float(h_sys[b])),
             (float(m_sys[a]), float(m_sys[b])), q, p, adj,
             None if not math.isfinite(adj) else bool(adj < alpha))
        for a, b, (p, q), adj in zip(above, below, tests, adjusted, strict=True))
    flat = np.isfinite(human) & np.isfinite(machine)
    qp, why = correlation(human[flat], machine[flat], "pearson")
    if why:
        undefined["per_query.pearson"] = why
    qs, why = correlation(human[flat], machine[flat], "spearman")
    if why:
        undefined["per_query.spearman"] = why
    per_run = {}
    for r, name in enumerate(names):
        keep = flat[r]
        (p, why), (s, _) = (correlation(human[r, keep], machine[r, keep], kind)
                            for kind in ("pearson", "spearman"))
        per_run[name] = (int(keep.sum()), p, s)
        if why:
            undefined[f"per_query.per_run.{name}"] = why
    return Ordering(str(spec), tuple(names), tuple(float(v) for v in h_sys),
                    tuple(float(v) for v in m_sys), human.shape[1] if human.ndim == 2 else 0,
                    tau, tap, rho, swaps, len(i), tied, int(flat.sum()), qp, qs, per_run,
                    undefined)


def _paired(a: np.ndarray, b: np.ndarray, test: str, rounds: int, seed: int
            ) -> tuple[float, int]:
    """The p-value of ``compare``'s paired test of two runs' values (queries both define)."""
    keep = np.isfinite(a) & np.isfinite(b)
    n = int(keep.sum())
    return compare(a[keep], b[keep], test, rounds, seed).p_value, n
