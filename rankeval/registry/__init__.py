"""The metric registry: every metric's canonical name, aliases and definition.

Every list of metric names (``--help``, ``rankeval metrics``, error messages, the README table,
report labels) derives from ``REGISTRY``. This module is pure data so that ``rankeval --help``
stays fast; the numpy kernels live in ``kernels/metrics.py`` under the same names.
"""

from __future__ import annotations

from rankeval.registry.metric import (
    CORPUS,
    GEOMETRIC,
    INPUTS,
    MEAN,
    PER_USER,
    SUM,
    Metric,
)
from rankeval.registry.recommender import ROWS as _RECOMMENDER

__all__ = ["CORPUS", "DEFAULT_K", "DEFAULT_METRICS", "GEOMETRIC", "INPUTS", "LOOKUP", "MEAN",
           "PER_USER", "REGISTRY", "SUM", "Metric", "reads"]


_SUBTOPICS = frozenset({"subtopics"})
# iprec's undefined case: a recall level that needs no relevant item (level R rounds to 0)
# on a list the exclusions emptied is the precision of no item, 0/0 (trec_eval: -nan)
_EMPTIED = ("a level that needs no relevant item, on a list emptied by judged-only "
            "condensing or seen-item exclusion: the precision of no item, which trec_eval "
            "prints as -nan")

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
               cutoff=False, overall=SUM),
        Metric("num_rel", ("num_relevant",), "number of the user's relevant items in the truth, R "
               "(overall: the sum)", "R", bounded=False, cutoff=False, overall=SUM),
        Metric("num_rel_ret", ("num_relevant_retrieved",), "relevant items anywhere in the "
               "user's list (overall: the sum)", "sum_j hit_j", bounded=False, cutoff=False,
               overall=SUM),
        Metric("set_precision", ("set_p",), "share of the whole list that is relevant "
               "(0 for an empty list)", "num_rel_ret / num_ret", cutoff=False),
        Metric("set_recall", ("set_r",), "share of the relevant items found anywhere in the "
               "list", "num_rel_ret / R", cutoff=False),
        Metric("set_f1", ("set_f",), "harmonic mean of set_precision and set_recall (0 when "
               "both are 0)", "2 P R / (P + R)", cutoff=False),
        Metric("set_map", (), "unranked average precision: set_precision times set_recall "
               "(trec_eval's set_map)", "num_rel_ret^2 / (num_ret R)", cutoff=False),
        Metric("set_relative_precision", ("set_relative_p",), "relevant items found over the "
               "most the list could hold (trec_eval's set_relative_P)",
               "num_rel_ret / min(num_ret, R)", cutoff=False),
        Metric("num_nonrel_judged_ret", (), "judged non-relevant items anywhere in the user's "
               "list (overall: the sum)", "sum_j judged_j (1 - hit_j)", bounded=False,
               cutoff=False, overall=SUM, judgements=True),
    )
})

# trec_eval's other measures, and those of ir_measures and ranx.
REGISTRY.update({
    m.name: m
    for m in (
        Metric("bpref", (), "share of judged non-relevant items ranked below each retrieved "
               "relevant item (Buckley and Voorhees 2004; unjudged items are ignored)",
               "1/R sum_{rel j} (1 - min(n_j, R) / min(N, R)), n_j judged non-relevant above j",
               cutoff=False, judgements=True),
        Metric("gm_map", ("gm_ap",), "geometric mean of AP over users (trec_eval; per user "
               "the log of max(AP, 0.00001))", "exp(mean_u log max(AP_u, 1e-5))",
               bounded=False, overall=GEOMETRIC, tie_expectation=False),
        Metric("iprec", ("iprec_at_recall", "interpolated_precision"), "interpolated "
               "precision at a recall level: the best precision at that recall or beyond "
               "(iprec@0.5; iprec alone gives trec_eval's 11 levels)",
               "max_{j : recall@j >= level} precision@j", cutoff=False,
               levels=(*(float(f"0.{i}") for i in range(10)), 1.0), tie_expectation=False,
               undefined_when=_EMPTIED, trec_nan=True),
        Metric("iprec_11pt", ("eleven_point_average",), "the mean of iprec at the 11 recall "
               "levels 0, 0.1, ..., 1 (trec_eval's 11pt_avg)", "1/11 sum_level iprec@level",
               cutoff=False, tie_expectation=False, undefined_when=_EMPTIED, trec_nan=True),
        Metric("relative_precision", ("relative_p",), "precision against the most the top K "
               "could hold (trec_eval's relative_P)", "hits@K / min(K, R)"),
        Metric("gm_bpref", (), "geometric mean of bpref over users (trec_eval; per user the log "
               "of max(bpref, 0.00001))", "exp(mean_u log max(bpref_u, 1e-5))", bounded=False,
               cutoff=False, overall=GEOMETRIC, judgements=True, tie_expectation=False),
        Metric("r_precision_mult", ("rprec_mult",), "precision at a multiple of R "
               "(r_precision_mult@2.0 is precision at 2R, as trec_eval's Rprec_mult_2.00)",
               "hits@c / c, c = floor(m R + 0.9)", cutoff=False,
               levels=tuple(float(f"{i / 5:.1f}") for i in range(1, 11)),
               level_range=(0.0, 1e6)),
        Metric("rbp", ("rank_biased_precision",), "rank-biased precision over the whole list: "
               "a user reads on with probability p (see --rbp-p; Moffat and Zobel 2008)",
               "(1 - p) sum_j hit_j p^(j-1)", cutoff=False),
        Metric("rbp_residual", (), "how much RBP could still rise if every unjudged item in "
               "the list, and every item past its end, were relevant", "(1 - p) sum_{unjudged j}"
               " p^(j-1) + p^n", cutoff=False, judgements=True),
        Metric("err", ("expected_reciprocal_rank",), "expected reciprocal rank of graded "
               "relevance (Chapelle et al. 2009; see --err-max-grade)",
               "sum_j R_j / j prod_{i<j} (1 - R_i), R = (2^rel - 1) / 2^max_grade",
               tie_expectation=False),
        # Intent-aware (TREC Web track diversity task): as ndeval computes them, over
        # subtopic judgements; alpha is the redundancy penalty, c_js the items above j relevant
        # to subtopic s, M the user's subtopics with a relevant item.
        Metric("alpha_ndcg", ("alpha-ndcg", "a_ndcg"), "alpha-nDCG (Clarke et al. 2008): "
               "subtopic gains that fall by (1 - alpha) each time a subtopic is covered again, "
               "over ndeval's greedy ideal ranking (see alpha=)",
               "alpha-DCG@K / ideal alpha-DCG@K, alpha-DCG = sum_j sum_s rel_js (1 - alpha)^"
               "c_js / log2(j + 1)", needs=_SUBTOPICS, tie_expectation=False),
        Metric("alpha_dcg", ("alpha-dcg",), "alpha-DCG normalized as ndeval does, by M "
               "subtopics covered at every rank (collection-independent)",
               "alpha-DCG@K / (M sum_{j<=K} (1 - alpha)^(j-1) / log2(j + 1))",
               needs=_SUBTOPICS, tie_expectation=False),
        Metric("err_ia", ("err-ia",), "intent-aware ERR as ndeval computes it: the alpha "
               "gains over the rank, normalized by M subtopics covered at every rank",
               "sum_j sum_s rel_js (1 - alpha)^c_js / j / (M sum_{j<=K} (1 - alpha)^(j-1) / j)",
               needs=_SUBTOPICS, tie_expectation=False),
        Metric("nerr_ia", ("nerr-ia",), "intent-aware ERR over the greedy ideal ranking's "
               "(ndeval's nERR-IA)", "ERR-IA@K / ideal ERR-IA@K", needs=_SUBTOPICS,
               tie_expectation=False),
        Metric("nrbp", (), "novelty- and rank-biased precision (Clarke et al. 2009) over the "
               "whole list: a reader who goes on with probability beta (see alpha=, beta=)",
               "(1 - (1 - alpha) beta) / M sum_j beta^(j-1) sum_s rel_js (1 - alpha)^c_js",
               cutoff=False, needs=_SUBTOPICS, tie_expectation=False),
        Metric("nnrbp", (), "NRBP over the greedy ideal ranking's (ndeval's nNRBP)",
               "NRBP / ideal NRBP", cutoff=False, needs=_SUBTOPICS, tie_expectation=False),
        Metric("p_ia", ("p-ia", "precision_ia"), "intent-aware precision (Agrawal et al. "
               "2009): the mean over subtopics of precision at K",
               "sum_{j<=K} sum_s rel_js / (K M)", needs=_SUBTOPICS, tie_expectation=False),
        Metric("map_ia", ("map-ia", "ap_ia"), "intent-aware average precision: the mean over "
               "subtopics of AP over the whole list", "1/M sum_s AP_s", cutoff=False,
               needs=_SUBTOPICS, tie_expectation=False),
        Metric("subtopic_recall", ("s_recall", "strec", "s-recall"), "subtopic recall (Zhai "
               "et al. 2003): the share of the subtopics covered by the top K",
               "|{s: some j <= K has rel_js}| / M", needs=_SUBTOPICS, tie_expectation=False),
        Metric("judged", ("judged_at_k",), "share of the top K that has a judgement in the "
               "truth (of the list, when shorter than K)", "judged items in top K / min(K, n)",
               judgements=True),
        Metric("num_q", ("numq",), "the users averaged over: 1 per user, summed (trec_eval's "
               "num_q)", "1", bounded=False, cutoff=False, overall=SUM, measured=False),
        Metric("bin_g", ("bing", "binary_g"), "each retrieved relevant item earns 1 / log2(2 + "
               "the non-relevant items above it), summed over R (trec_eval's binG)",
               "1/R sum_{rel j} 1 / log2(2 + j - hits@j)", cutoff=False, tie_expectation=False),
        Metric("g", ("g_measure",), "normalised gain that discounts an item by how far the list "
               "lags the ideal one at its place (trec_eval's G; gain = grade)",
               "sum_j g_j / log2(2 + sum_{i<=j} max(ig_i, 1) - sum_{i<=j} g_i) / sum ig",
               cutoff=False, tie_expectation=False),
        Metric("ndcg_rel", (), "NDCG at each item with a gain, averaged over the ideal list's "
               "items with a gain; one never retrieved counts the whole list's NDCG (trec_eval)",
               "1/P (sum_{g_j > 0} ndcg@j + (P - found) ndcg@n)", cutoff=False,
               tie_expectation=False),
        Metric("r_ndcg", ("rndcg",), "NDCG averaged over the depths where the ideal list's "
               "grade changes, and the whole list when it runs past them (trec_eval's Rndcg)",
               "mean_{d in changes} ndcg@d", cutoff=False, tie_expectation=False,
               undefined_when="relevant items, none with a gain (a threshold of 0 on a user "
               "whose judged items are all grade 0): no depth to average over, which trec_eval "
               "prints as -nan", trec_nan=True),
        Metric("inf_ap", ("infap", "inferred_ap"), "inferred AP (Yilmaz and Aslam 2006): "
               "precision at each relevant item estimated from the judged items above it; "
               "items in the truth with a negative relevance are in the pool but unjudged",
               "1/R sum_{rel j} E[precision@j]", cutoff=False, judgements=True,
               tie_expectation=False),
        Metric("unjudged", ("unj",), "share of the top K without a judgement in the truth, "
               "over K (trec_eval's unj: a shorter list is filled with judged items)",
               "(min(K, n) - judged items in top K) / K", judgements=True),
        Metric("utility", (), "relevant items retrieved minus non-relevant ones (trec_eval's "
               "utility with its default coefficients 1, -1, 0, 0)",
               "num_rel_ret - (num_ret - num_rel_ret)", bounded=False, signed=True,
               cutoff=False),
        Metric("yaap", ("yet_another_ap",), "Robertson's smoothed AP (trec_eval's yaap): the "
               "log-odds of the precision mass S found at the relevant items",
               "log((1 + S) / (1 + R - S)), S = sum_{rel j} precision@j", bounded=False,
               signed=True, cutoff=False, tie_expectation=False),
        Metric("compat", ("compatibility",), "compatibility (Clarke et al. 2020): rank-biased "
               "overlap of the list with the ideal ranking (relevant items by grade, equal "
               "grades in the list's order), normalized by the ideal's own (see p=, normalize=)",
               "RBO_p(L, I) / RBO_p(I, I), RBO = sum_{d<=D} p^(d-1) |L_d & I_d| / d, "
               "D = max(n, R)", cutoff=False, tie_expectation=False),
        # cwl_eval's C/W/L measures: the expected gain per item a reader model sees, over 1000
        # ranks, gains scaled to [0, 1] by min_rel= and max_rel= (default 0 and 1)
        Metric("sdcg", ("scaled_dcg",), "scaled DCG (cwl_eval): DCG@K of the [0, 1] gains "
               "over the sum of the first K discounts", "sum_{j<=K} g_j / log2(j + 1) / "
               "sum_{j<=K} 1 / log2(j + 1)", tie_expectation=False),
        Metric("inst", (), "INST (Moffat et al. 2015): a reader who wants T of gain reads on "
               "with probability ((j + a - 1) / (j + a))^2, a = 2T - gain so far (cwl_eval)",
               "sum_j W_j g_j, W_j prop. to prod_{i<j} C_i", cutoff=False,
               tie_expectation=False),
        Metric("insq", (), "INSQ (Moffat et al. 2012): INST's reader whatever the gain so far, "
               "C_j = ((j + 2T - 1) / (j + 2T))^2 (cwl_eval)",
               "sum_j W_j g_j, W_j prop. to prod_{i<j} C_i", cutoff=False,
               tie_expectation=False),
        Metric("bpm", ("bejeweled",), "the static Bejeweled Player Model (Zhang et al. 2017) "
               "with unit costs: a reader who stops at T of gain or after K items (cwl_eval)",
               "gain to the stop / items to the stop", tie_expectation=False),
        Metric("nerr8", ("nerr_eq8",), "not-quite ERR, eq. 8 of Azzopardi et al. 2021: a reader "
               "who stops on a gain, C_j = 1 - g_j, to rank K (cwl_eval)",
               "sum_j W_j g_j, C_j = 1 - g_j", tie_expectation=False),
        Metric("nerr9", ("nerr_eq9",), "not-quite ERR, eq. 9: C_j = j / (j + 1) (1 - g_j), to "
               "rank K (cwl_eval)", "sum_j W_j g_j, C_j = j (1 - g_j) / (j + 1)",
               tie_expectation=False),
        Metric("nerr10", ("nerr_eq10",), "not-quite ERR, eq. 10: C_j = p (1 - g_j), RBP's "
               "patience (cwl_eval; p= default 0.9)", "sum_j W_j g_j, C_j = p (1 - g_j)",
               cutoff=False, tie_expectation=False),
        Metric("nerr11", ("nerr_eq11",), "not-quite ERR, eq. 11: INSQ's patience times (1 - "
               "g_j) (cwl_eval)", "sum_j W_j g_j, C_j = ((j + 2T - 1)/(j + 2T))^2 (1 - g_j)",
               cutoff=False, tie_expectation=False),
        # Expected exposure (Diaz et al. 2020, SPEC section 11): e = each item's exposure
        # p^(rank-1) (p= default 0.5; model='dcg': 1/log2(rank+1)) averaged over the user's
        # sampled rankings, e* = the mean exposure of the ideal ranks of its grade
        Metric("ee_l", ("expected_exposure_loss", "eel"), "expected exposure loss (Diaz et al. "
               "2020): squared distance of the items' expected exposure over the sampled "
               "rankings from the exposure their grades deserve; 0 is ideal",
               "||e - e*||^2", bounded=False, tie_expectation=False, grades=True,
               lower_better=True, over_samples=True),
        Metric("ee_d", ("expected_exposure_disparity", "eed"), "expected exposure disparity: "
               "the sum of the squared expected exposures; lower spreads exposure more evenly "
               "over the items", "||e||^2", bounded=False, tie_expectation=False, grades=True,
               lower_better=True, over_samples=True),
        Metric("ee_r", ("expected_exposure_relevance", "eer"), "expected exposure relevance: "
               "the exposure the sampled rankings give items in proportion to their target",
               "e . e*", bounded=False, tie_expectation=False, grades=True,
               over_samples=True),
        Metric("awrf", ("attention_weighted_rank_fairness",), "attention-weighted rank "
               "fairness (Sapiezynski et al. 2019, TREC Fair Ranking 2021-22): how close the "
               "groups the top K exposes, attention 1/log2(max(j, 2)), are to a target "
               "(by= a group column of --item-groups; target= 'relevant', 'catalog' or given "
               "shares; background=, mix= as TREC 2022)",
               "1 - JSD(sum_j a_j w_j / sum_j a_j, target), natural log",
               needs=frozenset({"item_groups"}), tie_expectation=False,
               undefined_when="no item in the top K, or a target with no group"),
        Metric("exposure_ratio", ("min_max_exposure",), "the worst-exposed item group's "
               "exposure-to-target ratio over the best-exposed one's, among the groups with a "
               "target (awrf's attention, by=, target=, background=): 1 when each gets its "
               "share, 0 when one gets none; the reciprocal of the best / worst ratio",
               "min_g (a_g / t_g) / max_g (a_g / t_g) over groups with t_g > 0",
               needs=frozenset({"item_groups"}), tie_expectation=False,
               undefined_when="no item in the top K, fewer than two groups with a target, or "
               "none of them exposed"),
        Metric("ee_l_norm", (), "ee_l scaled by expeval's bounds (-C): 0 for the ideal, 1 for "
               "the reverse static ranking of the judged items", "(ee_l - 0) / (U - 0), U = "
               "sum_{i<n} (w_i - e*_(i))^2, e* ascending", bounded=False,
               tie_expectation=False, grades=True, lower_better=True, over_samples=True,
               undefined_when="its bounds coincide"),
        Metric("ee_d_norm", (), "ee_d scaled by expeval's bounds (-C): 0 for a uniformly random "
               "ranking of the judged items, 1 for a static one", "(ee_d - (sum_{i<n} w_i)^2 "
               "/ n) / (sum_{i<n} w_i^2 - (sum_{i<n} w_i)^2 / n)", bounded=False, signed=True,
               tie_expectation=False, grades=True, lower_better=True, over_samples=True,
               undefined_when="its bounds coincide"),
        Metric("ee_r_norm", (), "ee_r scaled by expeval's bounds (-C): 0 for the reverse static "
               "ranking of the judged items, 1 for the target", "(ee_r - L) / (||e*||^2 - L), "
               "L = sum_{i<n} w_i e*_(i), e* ascending", bounded=False, signed=True,
               tie_expectation=False,
               grades=True, over_samples=True,
               undefined_when="its bounds coincide (the judged items share one grade)"),
        Metric("dcg_burges", (), "DCG with exponential gain whatever --gain says (ranx)",
               "sum_j (2^rel_j - 1) / log2(j + 1)", bounded=False),
        Metric("ndcg_burges", (), "NDCG with exponential gain whatever --gain says (ranx)",
               "dcg_burges@K / its ideal"),
    )
})

# Beyond accuracy (SPEC section 7): the recommender rows, a module of their own
REGISTRY.update({m.name: m for m in _RECOMMENDER})


def reads(specs, what: str) -> bool:
    """Whether a metric among ``specs`` reads ``what``: ``grades`` (every judged grade:
    expected exposure), or a need: ``item_groups`` (awrf), ``subtopics`` (intent-aware)."""
    return any(REGISTRY[s.name].grades if what == "grades" else what in REGISTRY[s.name].needs
               for s in specs)


DEFAULT_METRICS: tuple[str, ...] = ("precision", "recall", "hit_rate", "mrr", "map", "ndcg")
DEFAULT_K: tuple[int, ...] = (10,)

# Lower-cased canonical names and aliases -> canonical name.
LOOKUP: dict[str, str] = {}
for _metric in REGISTRY.values():
    for _word in (_metric.name, *_metric.aliases):
        assert _word.lower() not in LOOKUP, f"alias {_word} registered twice"
        LOOKUP[_word.lower()] = _metric.name
