"""The metric registry: every metric's canonical name, aliases and definition.

Every list of metric names (``--help``, ``rankeval metrics``, error messages, the README table,
report labels) derives from ``REGISTRY``. This module is pure data so that ``rankeval --help``
stays fast; the numpy kernels live in ``metrics.py`` under the same names.
"""

from __future__ import annotations

from dataclasses import dataclass

PER_USER = "per_user"  # a value per user; the overall value is their mean
CORPUS = "corpus"  # one value for the whole run (coverage, Gini): not a mean over users
# Inputs a metric may need beyond the predictions and the truth.
INPUTS = ("interactions", "item_features", "catalog")


@dataclass(frozen=True)
class Metric:
    """A metric's definition; its kernel in ``metrics.py`` has the same name."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    formula: str
    bounded: bool = True  # value always in [0, 1]
    cutoff: bool = True  # takes a K (``ndcg@10``, ``ndcg@all``); r_precision cuts at R instead
    needs: frozenset[str] = frozenset()  # extra inputs, from INPUTS
    scope: str = PER_USER
    total: bool = False  # the overall value is the sum over users, not the mean (trec_eval's num_*)
    at: str = "all"  # the summary column of a metric without a cut-off: the whole list, or R

    def __post_init__(self) -> None:
        assert self.scope in (PER_USER, CORPUS), self.scope
        assert self.needs <= set(INPUTS), self.needs


REGISTRY: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "precision",
            ("p", "prec", "precision_at_k"),
            "share of the top K that is relevant; divides by K even when the list is shorter",
            "sum_j hit_j / K",
        ),
        Metric(
            "recall",
            ("r", "rec", "recall_at_k"),
            "share of the user's relevant items found in the top K",
            "sum_j hit_j / R",
        ),
        Metric(
            "f1",
            ("f", "f1_score", "fscore"),
            "harmonic mean of precision@K and recall@K (0 when both are 0)",
            "2 P R / (P + R)",
        ),
        Metric(
            "hit_rate",
            ("hr", "hit", "hitrate", "success"),
            "1 if any of the top K is relevant; its mean is the share of users with a hit",
            "max_j hit_j",
        ),
        Metric(
            "mrr",
            ("rr", "reciprocal_rank"),
            "1 / rank of the first relevant item in the top K (see --rr-target), else 0",
            "1 / min{j : hit_j = 1}",
        ),
        Metric(
            "map",
            ("ap", "average_precision", "mean_average_precision"),
            "average precision at each relevant item of the top K (see --ap-denominator)",
            "sum_j hit_j * precision@j / min(R, K)",
        ),
        Metric(
            "r_precision",
            ("rprec", "r_prec", "rprecision"),
            "precision at R, the user's number of relevant items (equals recall at R)",
            "sum_{j <= R} hit_j / R",
            cutoff=False,
            at="R",
        ),
        Metric(
            "cg",
            ("cumulative_gain",),
            "sum of the gains of the top K (see --gain)",
            "sum_j gain(rel_j)",
            bounded=False,
        ),
        Metric(
            "dcg",
            ("discounted_cumulative_gain",),
            "gains of the top K discounted by log2(rank + 1)",
            "sum_j gain(rel_j) / log2(j + 1)",
            bounded=False,
        ),
        Metric(
            "idcg",
            ("ideal_dcg",),
            "DCG of the ideal list: the user's truth relevances sorted descending, cut at K",
            "dcg@K of sorted truth",
            bounded=False,
        ),
        Metric(
            "ndcg",
            ("ndcg_cut", "normalized_dcg"),
            "DCG divided by the ideal DCG (0 when the ideal DCG is 0)",
            "dcg@K / idcg@K",
        ),
    )
}

# Measures of the whole retrieved list (trec_eval's num_* and set_*).
REGISTRY.update({
    m.name: m
    for m in (
        Metric("num_ret", ("num_retrieved",), "number of items in the user's whole list "
               "(overall: the sum over users, as trec_eval)", "n", bounded=False,
               cutoff=False, total=True),
        Metric("num_rel", ("num_relevant",), "number of the user's relevant items in the truth, R "
               "(overall: the sum)", "R", bounded=False, cutoff=False, total=True),
        Metric("num_rel_ret", ("num_relevant_retrieved",), "relevant items anywhere in the "
               "user's list (overall: the sum)", "sum_j hit_j", bounded=False, cutoff=False,
               total=True),
        Metric("set_precision", ("set_p",), "share of the whole list that is relevant "
               "(0 for an empty list)", "num_rel_ret / num_ret", cutoff=False),
        Metric("set_recall", ("set_r",), "share of the relevant items found anywhere in the "
               "list", "num_rel_ret / R", cutoff=False),
        Metric("set_f1", ("set_f",), "harmonic mean of set_precision and set_recall (0 when "
               "both are 0)", "2 P R / (P + R)", cutoff=False),
    )
})

DEFAULT_METRICS: tuple[str, ...] = ("precision", "recall", "hit_rate", "mrr", "map", "ndcg")
DEFAULT_K: tuple[int, ...] = (10,)

# Lower-cased canonical names and aliases -> canonical name.
LOOKUP: dict[str, str] = {}
for _metric in REGISTRY.values():
    for _word in (_metric.name, *_metric.aliases):
        assert _word.lower() not in LOOKUP, f"alias {_word} registered twice"
        LOOKUP[_word.lower()] = _metric.name
