"""The metric registry's recommender rows (SPEC section 7): the lists against the catalog,
training popularity and item features, and the propensity-weighted metrics. Rows of
``rankeval.registry.REGISTRY``, which imports them in its place."""

from __future__ import annotations

from rankeval.registry.metric import CORPUS, Metric

_NEEDS_TRAIN = frozenset({"interactions"})
# the ips_ metrics: --train (gamma=, the popularity model) or --propensity (check_needs)
_NEEDS_PROPENSITY = frozenset({"propensity"})
_UNDEFINED = "no relevant item with a propensity (with gamma=: none seen in training)"

ROWS: tuple[Metric, ...] = (
    Metric("coverage", ("catalog_coverage",), "share of the catalog found in any top-K list "
           "(corpus: one value for the run)", "|union of L_u| / |catalog|",
           needs=frozenset({"catalog"}), scope=CORPUS, tie_expectation=False),
    Metric("item_coverage", ("distinct_items",), "number of distinct items in all top-K "
           "lists (corpus)", "|union of L_u|", bounded=False, scope=CORPUS,
           tie_expectation=False, count=True),
    Metric("entropy", ("shannon_entropy",), "Shannon entropy in bits of the items' shares "
           "of all top-K slots (corpus)", "-sum_i p_i log2 p_i", bounded=False,
           scope=CORPUS, tie_expectation=False, undefined_when="no list holds an item"),
    Metric("norm_entropy", ("normalized_entropy",), "entropy divided by log2 of the "
           "catalog size (corpus; 1 = every catalog item equally often)",
           "entropy / log2 |catalog|", needs=frozenset({"catalog"}), scope=CORPUS,
           tie_expectation=False,
           undefined_when="no list holds an item, or the catalog has fewer than 2 items"),
    Metric("gini", ("gini_index",), "Gini coefficient of how often each catalog item is "
           "recommended, never-recommended items at 0 (corpus; 0 = equal, 1 = one item)",
           "sum_j (2j - n - 1) c_j / (n sum_j c_j), c ascending, n = |catalog|",
           needs=frozenset({"catalog"}), scope=CORPUS, tie_expectation=False,
           undefined_when="no list holds an item"),
    Metric("personalization", (), "1 - mean overlap |L_u & L_v| / K over all pairs of "
           "users with a list (corpus; from item counts, linear time)",
           "1 - sum_i c_i (c_i - 1) / (K U (U - 1))", scope=CORPUS, tie_expectation=False,
           undefined_when="fewer than 2 users have a list"),
    Metric("arp", ("average_recommendation_popularity",), "mean training popularity of "
           "the top K (see --popularity)", "mean_{i in L_u} pop(i)", bounded=False,
           needs=_NEEDS_TRAIN),
    Metric("long_tail", ("long_tail_share", "aplt"), "share of the top K in the long tail "
           "(outside the most popular items holding 80% of popularity; see --tail-share)",
           "|L_u in tail| / |L_u|", needs=_NEEDS_TRAIN),
    Metric("ild", ("intra_list_diversity", "diversity"), "intra-list diversity: mean "
           "over pairs of the top K of 1 - cosine similarity of their --item-features "
           "(users with fewer than 2 items with features are not scored)",
           "mean_{i<j in L_u} 1 - cos(f_i, f_j)", needs=frozenset({"item_features"}),
           tie_expectation=False,
           undefined_when="fewer than 2 items with features in the top K"),
    Metric("serendipity", (), "mean over the top K of relevance (0/1) x (1 - the item's "
           "mean cosine similarity to the user's training items) (Microsoft "
           "Recommenders; users without training items are not scored)",
           "mean_{i in L_u} rel(i) (1 - mean_{j in train_u} cos(f_i, f_j))",
           needs=frozenset({"item_features", "interactions"}),
           undefined_when="no training items with features"),
    Metric("ips_recall", (), "recall with each relevant item weighted by 1 / P(observed), "
           "P from --propensity FILE, or from training popularity^((gamma+1)/2) with gamma= "
           "(Yang et al. 2018's SNIPS; sn=False: over |R|)", "sum_{hits} w_i / sum_{i in R} w_i",
           needs=_NEEDS_PROPENSITY,
           tie_expectation=False, undefined_when=_UNDEFINED),
    Metric("ips_precision", (), "precision with propensity weights (see ips_recall), "
           "self-normalised over the user's relevant items", "sum_{hits} w_i |R| / "
           "(K sum_{i in R} w_i)", needs=_NEEDS_PROPENSITY, tie_expectation=False,
           undefined_when=_UNDEFINED),
    Metric("ips_dcg", (), "DCG (binary gain) with propensity weights (see ips_recall), "
           "self-normalised over the user's relevant items", "sum_{hits} w_i / log2(j+1) "
           "|R| / sum_{i in R} w_i", bounded=False, needs=_NEEDS_PROPENSITY,
           tie_expectation=False, undefined_when=_UNDEFINED),
    Metric("ips_ndcg", (), "ips_dcg over the ideal DCG of the user's relevant items",
           "ips_dcg / IDCG@K(|R|)", needs=_NEEDS_PROPENSITY, tie_expectation=False,
           undefined_when=_UNDEFINED),
    Metric("pop_recall", ("popularity_stratified_recall",), "popularity-stratified "
           "recall (Steck 2011): each relevant item weighs popularity^-beta, per user",
           "sum_{hits} n_i^-b / sum_{i in R} n_i^-b",
           needs=frozenset({"interactions", "propensity"}),
           tie_expectation=False, undefined_when="no relevant item seen in training"),
    Metric("novelty", ("self_information",), "mean self-information of the top K: "
           "-log2(pop(i) / training users); an unseen item counts log2(users + 1)",
           "mean_{i in L_u} -log2(pop(i) / U_train)", bounded=False, needs=_NEEDS_TRAIN),
)
