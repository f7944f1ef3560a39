"""Other tools' metric names as data: trec_eval's measures with and without cut-offs, its text
measures, ranx's spellings; and the hint for one of them given where rankeval's names are
read (``names.from_name``). ``compat`` reads trec_eval's names with these tables."""

from __future__ import annotations

import re

# Measures whose values are text, not numbers: under a trec_eval preset, -f trec prints them in
# its per-query lines (``build/relstring.py``); the other reports hold numbers and leave them
# out with a warning, and outside the presets their names are refused with this hint.
TEXT_ONLY = {"relstring": "trec_eval's per-query string of the grades of the top N items "
                          "(10 unless relstring.N), printed only with -q"}

# trec_eval's measures of the relevance formats rankeval does not read (-R qrels_jg: judgment
# groups; -R prefs and qrels_prefs: preferences), with their groups (-m qrels_jg, prefs,
# all_prefs): trec_eval name -> its -R format. Refused by name, naming the format.
_PREFS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
          "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
          "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
          "prefs_pair_imp", "prefs_avgjg_imp", "prefs", "all_prefs")
OTHER_FORMATS = {**{name: "qrels_jg" for name in ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg",
                                                  "qrels_jg")},
                 **{name: "prefs or -R qrels_prefs" for name in _PREFS}}

# Measures that take cut-offs: trec_eval name -> rankeval name.
CUT = {
    "P": "precision",
    "recall": "recall",
    "map_cut": "map",
    "ndcg_cut": "ndcg",
    "success": "hit_rate",
    "relative_P": "relative_precision",
    "unj": "unjudged",
}
# Measures over the whole list.
UNCUT = {"map": "map@all", "ndcg": "ndcg@all", "recip_rank": "mrr@all", "Rprec": "r_precision",
         "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
         "set_P": "set_precision", "set_recall": "set_recall", "set_F": "set_f1",
         "bpref": "bpref", "gm_map": "gm_map@all", "set_map": "set_map",
         "set_relative_P": "set_relative_precision", "11pt_avg": "iprec_11pt",
         "num_nonrel_judged_ret": "num_nonrel_judged_ret", "gm_bpref": "gm_bpref",
         "num_q": "num_q", "binG": "bin_g", "G": "g", "ndcg_rel": "ndcg_rel",
         "Rndcg": "r_ndcg", "infAP": "inf_ap", "utility": "utility",
         "rbp_resid": "rbp_residual", "yaap": "yaap", "dcg": "dcg@all",
         "ideal_dcg": "idcg@all"}

MEASURE = re.compile(r"^([A-Za-z_]+?)(?:[._]([0-9]+))?$")


# Other tools' names that mean something else here, or nothing: what to write instead.
_RANX = {"r-precision": ("r_precision", ""),
         "hits": ("hit_rate", " (the share of users with a hit, not a count of hits)")}


def foreign(word: str) -> str | None:
    """A precise suggestion for another tool's metric name (``P_10``, ``recall_10``,
    ``map_cut_10``, ``recip_rank``, ranx's ``r-precision``), or None."""
    name, at, k = word.partition("@")
    if name.lower() in _RANX:
        ours, how = _RANX[name.lower()]
        return f"ranx's {word} is {ours}{at}{k}{how} here"
    match = MEASURE.match(word)
    if match and match.group(1) in CUT:
        ours = f"{CUT[match.group(1)]}@{match.group(2) or 10}"
        return f"{word} is trec_eval's name: here it is {ours}, or use {{opt:compat}} trec_eval"
    if word.partition(".")[0] in TEXT_ONLY:
        return (f"{word} is {TEXT_ONLY[word.partition('.')[0]]}; rankeval prints it under "
                "{opt:compat} trec_eval with -f trec --per-query")
    if word.partition(".")[0] in OTHER_FORMATS:
        return _other_format(word.partition(".")[0])
    if word in UNCUT:
        return (f"{word} is trec_eval's name (uncut): here it is {UNCUT[word]}, or use "
                "{opt:compat} trec_eval")
    return None


def _other_format(name: str) -> str:
    return (f"{name} belongs to trec_eval's -R {OTHER_FORMATS[name]}: rankeval does not read "
            "that relevance format yet (docs/trec-eval.md)")


def other_format(name: str) -> str | None:
    """Why trec_eval's ``name`` is refused: the relevance format it needs, or None."""
    return _other_format(name) if name in OTHER_FORMATS else None


# Other libraries' names for rankeval's metrics (``rankeval metrics NAME``), as each library's
# metric list spells them (the tables of docs/trec-eval.md and docs/recommenders.md): ranx 0.3
# (its metric strings), RecBole 1.2 (recbole/evaluator/metrics.py), Microsoft Recommenders 1.2
# (evaluation/python_evaluation.py). Each name is that library's, not always its formula:
# the conventions a preset sets (--compat ranx, recbole, recommenders) make the numbers match.
# trec_eval's and ir_measures' names come from their own tables (``CUT``, ``UNCUT``,
# ``irmeasures.NAMES``).
PEERS: dict[str, dict[str, str]] = {
    "ranx": {"precision": "precision@k", "recall": "recall@k", "f1": "f1@k",
             "hit_rate": "hit_rate@k", "mrr": "mrr@k", "map": "map@k",
             "r_precision": "r-precision", "ndcg": "ndcg@k", "dcg": "dcg@k",
             "ndcg_burges": "ndcg_burges@k", "dcg_burges": "dcg_burges@k", "bpref": "bpref"},
    "RecBole": {"precision": "Precision", "recall": "Recall", "hit_rate": "Hit",
                "mrr": "MRR", "map": "MAP", "ndcg": "NDCG", "coverage": "ItemCoverage",
                "arp": "AveragePopularity", "gini": "GiniIndex", "entropy": "ShannonEntropy",
                "long_tail": "TailPercentage"},
    "Recommenders": {"precision": "precision_at_k", "recall": "recall_at_k",
                     "map": "map_at_k", "ndcg": "ndcg_at_k", "r_precision": "r_precision_at_k",
                     "coverage": "catalog_coverage", "entropy": "distributional_coverage",
                     "novelty": "novelty", "ild": "diversity", "serendipity": "serendipity"},
}


def trec_eval_names(metric: str) -> list[str]:
    """trec_eval's measures that are ``metric`` (``P.K``; ``recip_rank``, uncut)."""
    cut = [f"{t}.K" for t, ours in CUT.items() if ours == metric]
    return cut + [t for t, ours in UNCUT.items() if ours.partition("@")[0] == metric]
