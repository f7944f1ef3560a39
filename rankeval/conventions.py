"""The conventions table: every choice that changes a number, one ``Setting`` row each.

A row gives the library name, the allowed values, the default, trec_eval's value (and 9.0.8's
where it differs), the help text, whether two reports must agree on it to be compared, and how
the table footer shows it. ``settings.Settings`` and everything built on it derive from
``TABLE``; adding a convention is one row here plus its kernel code.
"""

from __future__ import annotations

from rankeval.errors import plural
from rankeval.names import MAX_K
from rankeval.params import parse_gains
from rankeval.presets import (
    PRESETS,
    UNSET,
    Setting,
    file_path,
    number_in,
    relevance_threshold,
)

# The tie rules that give one order (what a converted file can hold); the others score ties
# fairly over their orders when evaluating
TIE_ORDERS = ("trec", "item-asc", "input", "ranx")
# The tie rules that are another tool's own sort, run by that tool's package (an optional
# dependency of rankeval, named when missing): ranx's Run sorts with numba's quicksort
TIE_PACKAGES = {"ranx": "numba"}
# The tie rules whose order depends on the order of the rows in the file
FILE_ORDER_TIES = ("input", "ranx")
# The tie rules that score tied scores fairly over their orders (tie groups of equal score,
# even when the file's ranks order the list)
TIE_AWARE = ("expected", "optimistic", "pessimistic")
# What ordered a run's lists (``build.ordering.ordered_by``): how the footer and the tie
# notes name it where no tie rule had anything to order; absent: the tie rule did
ORDERED_BY = {"rank": "order: the file's ranks", "input": "order: the file's row order"}

TABLE: tuple[Setting, ...] = (
    Setting(
        "gain",
        "Gain of a relevance r in CG/DCG/NDCG: linear r, exponential 2^r - 1, or binary: 1 "
        "for any r > 0 (RecBole; grades then only decide what is relevant elsewhere).",
        "linear",
        ("linear", "exponential", "binary"),
        trec_eval="linear",
        footer=lambda v: f"gain {v}",
        ir_measures="linear",
        ranx="linear",
        recbole="binary",
        recommenders="binary",
        changes=("cg", "dcg", "idcg", "ndcg"),
    ),
    Setting(
        "ap_denominator",
        "Divide AP@K by min(R, K), or by R, all relevant items (trec_eval).",
        "min",
        ("min", "relevant"),
        trec_eval="relevant",
        footer=lambda v: "AP / " + ("min(R, K)" if v == "min" else "R"),
        ir_measures="relevant",
        ranx="relevant",
        recbole="min",
        recommenders="min",
        changes=("map", "gm_map"),
    ),
    Setting(
        "rr_target",
        "MRR uses the rank of the first relevant item, or of the most relevant one.",
        "first-relevant",
        ("first-relevant", "most-relevant"),
        trec_eval="first-relevant",
        footer=lambda v: f"RR target {v}",
        ir_measures="first-relevant",
        ranx="first-relevant",
        recbole="first-relevant",
        recommenders="first-relevant",
        changes=("mrr",),
    ),
    Setting(
        "relevance_threshold",
        "An item is relevant when relevance >= T (default: relevance > 0); T = 0: every "
        "judged item, grade 0 included, and never one missing from the truth (trec_eval -l 0).",
        None,
        trec_eval=1.0,
        parse=relevance_threshold,
        metavar="T",
        footer=lambda v: "relevant: " + ("relevance > 0" if v is None else "every judged item"
                                         if v == 0 else f"relevance >= {v:g}"),
        ir_measures=1.0,
        ranx=1.0,  # its rel_lvl
    ),
    Setting(
        "ties",
        "Tied scores: ordered by item id descending as trec_eval, item id ascending, file "
        "order, or as ranx's Run orders them (numba's quicksort of the negated scores over each"
        " list in file order; needs numba); or scored fairly: the expected value over all their"
        " orders, or the best or worst order (relevant items first or last); or provider: each "
        "metric ordered as the ir_measures provider computing it orders ties (trec for "
        "pytrec_eval and gdeval, item-asc for msmarco, judged, compat and pyndeval, input for "
        "cwl_eval; trec for a metric ir_measures does not name), the reports naming each "
        "metric's rule.",
        "trec",
        (*TIE_ORDERS, "expected", "optimistic", "pessimistic", "provider"),
        trec_eval="trec",
        footer=lambda v: "ties by ir_measures provider" if v == "provider" else f"ties {v}",
        ir_measures="provider",
        ranx="ranx",  # its Run's sort (numba's quicksort), run by numba
        recommenders="input",  # a stable sort by user, then score
    ),
    Setting(
        "order_by",
        "What orders each list when the run has both a rank and a score column: its ranks, "
        "or its scores (trec_eval, pytrec_eval and ir_measures read scores and never ranks); "
        "a run with one of them is ordered by that one.",
        "rank",
        ("rank", "score"),
        trec_eval="score",
        footer=lambda v: None if v == "rank" else "lists ordered by score",
        ir_measures="score",
        ranx="score",
        # RecBole's lists are its torch.topk order, which the ranks of its exported top-K
        # carry (its order of tied scores; no rule names it from the scores alone)
        recbole="rank",
        recommenders="score",
    ),
    Setting(
        "zero_relevant_users",
        "Users with no relevant item: leave out, or score 0 and average in (trec_eval).",
        "skip",
        ("skip", "zero"),
        trec_eval="zero",
        footer=lambda v: f"users without relevant items: {v}",
        ir_measures="zero",
        ranx="zero",  # its queries with nothing relevant score 0 and count
        recbole="skip",
        recommenders="skip",
    ),
    Setting(
        "skip_missing_users",
        "Leave out users with relevant items but no predictions (default: they score 0; "
        "trec_eval leaves them out unless given -c).",
        False,
        trec_eval=True,
        footer=lambda v: f"users without predictions: {'skip' if v else 'zero'}",
        ir_measures=False,
        ranx=False,
        recbole=False,
        recommenders=True,  # its users are those of both the truth and the predictions
    ),
    Setting(
        "missing_user_counts",
        "num_q and num_rel of a user scored without predictions: counted, as trec_eval -c "
        "counts them, or 0 like every other metric, as ir_measures fills a query missing from "
        "the run.",
        "counted",
        ("counted", "zero"),
        trec_eval="counted",
        ir_measures="zero",
        footer=lambda v: None if v == "counted" else "num_q, num_rel: 0 without predictions",
        applies_to=("num_q", "num_rel"),
    ),
    Setting(
        "max_depth",
        "Only the first N items of each list count, for every metric and K (trec_eval -M).",
        None,
        trec_eval=None,
        parse=number_in("max_depth", 1, MAX_K, False, False, integer=True),
        metavar="N",
        footer=lambda v: None if v is None else f"lists cut at {v}",
        ir_measures=None,
    ),
    Setting(
        "judged_only",
        "Condensed lists: drop the items without a judgement in the truth before cutting at "
        "K, so that the rest move up (trec_eval -J; Sakai 2007).",
        False,
        trec_eval=False,
        footer=lambda v: "judged items only" if v else None,
        ir_measures=False,
    ),
    Setting(
        "rbp_p",
        "Persistence p of rank-biased precision: the chance of reading on to the next item "
        "(trec_eval 10.0: 0.9).",
        0.8,
        trec_eval=0.9,
        trec_eval_9=UNSET,  # 9.0.8 has no rbp
        parse=number_in("rbp_p", 0, 1, True, True),
        metavar="P",
        footer=lambda v: f"RBP p {v:g}",
        applies_to=("rbp", "rbp_residual"),
        ir_measures=0.8,
    ),
    Setting(
        "rbp_gain",
        "What an item earns in RBP: 1 when relevant, or its grade divided by the user's "
        "highest grade when that exceeds 1, whatever the relevance threshold (trec_eval 10.0), "
        "or the grade itself when relevant (raw: ranx).",
        "binary",
        ("binary", "graded", "raw"),
        trec_eval="graded",
        trec_eval_9=UNSET,
        footer=lambda v: f"RBP gain {v}",
        applies_to=("rbp",),
        ir_measures="graded",  # its RBP without rel= is graded
        ranx="raw",
    ),
    Setting(
        "rbp_residual_tail",
        "rbp_residual counts the weight past the list's end always (Moffat and Zobel), or only "
        "when the list holds an unjudged item, else it is 0 (trec_eval 10.0's rbp_resid).",
        "always",
        ("always", "if-unjudged"),
        trec_eval="if-unjudged",
        trec_eval_9=UNSET,  # 9.0.8 has no rbp_resid
        footer=lambda v: f"RBP residual tail: {v}",
        applies_to=("rbp_residual",),
    ),
    Setting(
        "patience",
        "The expected-exposure reader's patience p: an item at rank i gets exposure p^(i-1) "
        "(Diaz et al. 2020; the paper's 0.5).",
        0.5,
        parse=number_in("patience", 0, 1, True, True),
        metavar="P",
        footer=lambda v: f"exposure patience {v:g}",
        applies_to=("ee_l", "ee_d", "ee_r", "ee_l_norm", "ee_d_norm", "ee_r_norm"),
    ),
    Setting(
        "gains",
        "The gain of each grade in the DCG family, as GRADE=GAIN pairs (e.g. {opt:gains} "
        "1=1,2=3); a grade not named keeps its own value, and the gain function then applies "
        "(trec_eval's ndcg.1=1,2=3).",
        None,
        trec_eval=None,
        parse=parse_gains,
        metavar="G=V,...",
        footer=lambda v: None if v is None else f"gains {v}",
        applies_to=("ndcg", "dcg", "idcg", "g", "ndcg_rel", "r_ndcg"),
        ir_measures=None,
    ),
    Setting(
        "collection_size",
        "Items in the collection, read by utility's fourth coefficient (the non-relevant items "
        "not retrieved) alone (trec_eval -N).",
        None,
        trec_eval=None,
        parse=number_in("collection_size", 1, 2**53, False, False, integer=True),  # exact floats
        metavar="N",
        footer=lambda v: None if v is None else f"collection of {plural(v, 'item')}",
        applies_to=("utility",),
        ir_measures=None,
    ),
    Setting(
        "recall_rounding",
        "How iprec turns a recall level L into a number of relevant items: round(L R) "
        "(trec_eval 10.0), or floor(L R + 0.9) (trec_eval 9.0.8, pytrec_eval, ir_measures).",
        "plus-0.9",
        ("plus-0.9", "round"),
        trec_eval="round",
        trec_eval_9="plus-0.9",
        footer=lambda v: "recall levels " + ("rounded" if v == "round" else "+0.9 truncated"),
        applies_to=("iprec",),
        ir_measures="plus-0.9",
    ),
    Setting(
        "err_max_grade",
        "Highest relevance grade of ERR: a grade g stops the reader with probability "
        "(2^g - 1) / 2^max (gdeval and ir_measures use 4); higher grades are an error.",
        4.0,
        parse=number_in("err_max_grade", 0, 1024, True, False),
        metavar="G",
        footer=lambda v: f"ERR max grade {v:g}",
        applies_to=("err",),
        ir_measures=4.0,
    ),
    Setting(
        "exclude_seen",
        "Drop predicted (user, item) pairs present in {opt:train} before cutting at K; the rest "
        "move up.",
        False,
        footer=lambda v: "seen items excluded" if v else None,
    ),
    Setting(
        "exclude_seen_truth",
        "Also drop truth rows whose (user, item) pair is in {opt:train}.",
        False,
        footer=lambda v: "seen truth excluded" if v else None,
    ),
    Setting(
        "popularity",
        "Item popularity from {opt:train}: its distinct users, or its interactions (rows, or the "
        "sum of the count column).",
        "users",
        ("users", "interactions"),
        footer=lambda v: f"popularity: {v}",
        applies_to=("arp", "long_tail", "novelty"),
        recbole="interactions",
        recommenders="interactions",
    ),
    Setting(
        "tail_share",
        "long_tail: the tail's share S, of all popularity (the short head, the most popular "
        "items, holds 1 - S) or of the training items (see {opt:tail_by}).",
        0.2,
        parse=number_in("tail_share", 0, 1, True, True),
        metavar="S",
        footer=lambda v: f"long tail share {v:g}",
        applies_to=("long_tail",),
        recbole=0.1,  # its tail_ratio
    ),
    Setting(
        "tail_by",
        "long_tail: what {opt:tail_share} measures: the tail's share of all popularity (the "
        "short head holds the rest), or its share of the items seen in training, the least "
        "popular ones, ties by id (RecBole's TailPercentage; unseen items are not tail).",
        "popularity",
        ("popularity", "items"),
        footer=lambda v: f"tail by {v}",
        applies_to=("long_tail",),
        recbole="items",
    ),
    Setting(
        "novelty_model",
        "novelty's item probability: the share of training users who met the item "
        "(discovery), or the item's share of all training popularity (choice; Castells et al. "
        "2011, Microsoft Recommenders with {opt:popularity} interactions).",
        "discovery",
        ("discovery", "choice"),
        footer=lambda v: f"novelty: {v} model",
        applies_to=("novelty",),
        recommenders="choice",
    ),
    Setting(
        "novelty_unseen",
        "novelty of an item unseen in training: the rarest, log2(N + 1) with N the model's "
        "denominator, or 0 (Microsoft Recommenders leaves it out of the sum, not the count).",
        "rarest",
        ("rarest", "zero"),
        footer=lambda v: None if v == "rarest" else "unseen items: novelty 0",
        applies_to=("novelty",),
        recommenders="zero",
    ),
    Setting(
        "catalog_padding",
        "Items added to the catalog's size in coverage, gini and norm_entropy (RecBole "
        "counts its padding item: 1).",
        0,
        parse=number_in("catalog_padding", 0, 2**31, False, False, integer=True),
        metavar="N",
        footer=lambda v: f"catalog padded by {v}" if v else None,
        applies_to=("coverage", "gini", "norm_entropy"),
        recbole=1,
    ),
    Setting(
        "entropy_unit",
        "entropy in bits (log2) or nats (natural log, RecBole).",
        "bits",
        ("bits", "nats"),
        footer=lambda v: f"entropy in {v}",
        applies_to=("entropy",),
        recbole="nats",
    ),
    Setting(
        "entropy_per_item",
        "Divide entropy by the number of distinct recommended items (RecBole's "
        "ShannonEntropy).",
        False,
        footer=lambda v: "entropy per recommended item" if v else None,
        applies_to=("entropy",),
        recbole=True,
    ),
    Setting(
        "dedupe",
        "Keep the best-ranked of repeated (user, item) predictions instead of failing.",
        False,
        comparable=False,
    ),
    Setting(
        "judgment_groups",
        "The truth's second field (a qrels file's; a subtopic column) names a judgment group, "
        "a judge: each group's judgments score the user's list apart and the user's value is "
        "their mean (trec_eval -R qrels_jg and its P_avgjg, map_avgjg, Rprec_mult_avgjg).",
        False,
        footer=lambda v: "judgment groups averaged per user" if v else None,
    ),
    Setting(
        "zscores",
        "A file of each user's mean and standard deviation of each metric over reference "
        "runs ('qid measure mean stddev' lines, the metric as the report names it): every "
        "value is reported as its z-score, (value - mean) / stddev, and each overall value "
        "is the z-scores' mean (trec_eval -Z).",
        None,
        parse=file_path("zscores"),
        metavar="FILE",
        footer=lambda v: None if v is None else f"z-scores against {v}",
    ),
    Setting(
        "preferences",
        "The truth is preferences between documents (trec_eval -R prefs: qid group "
        "subgroup docno level lines; plain qrels read as preferences, -R qrels_prefs): only "
        "the prefs_* measures are computed (-m prefs, all_prefs, prefs_simp, ...).",
        False,
        footer=lambda v: "preferences (trec_eval's prefs_* measures)" if v else None,
        own_measures=True,
    ),
)
ROWS: dict[str, Setting] = {s.name: s for s in TABLE}
COMPAT = tuple(PRESETS)  # the names --compat takes

