"""Other tools' metric names as data: trec_eval's measures with and without cut-offs, its text
measures, ranx's spellings; and the hint for one of them given where rankeval's names are
read (``names.from_name``). ``compat`` reads trec_eval's names with these tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from rankeval.errors import OptionError

# Measures whose values are text, not numbers: under a trec_eval preset, -f trec prints them in
# its per-query lines (``build/relstring.py``); the other reports hold numbers and leave them
# out with a warning, and outside the presets their names are refused with this hint.
TEXT_ONLY = {"relstring": "trec_eval's per-query string of the grades of the top N items "
                          "(10 unless relstring.N), printed only with -q"}

# trec_eval's measures of preferences (-R prefs and qrels_prefs, which --preferences reads),
# with their groups (-m prefs, all_prefs): trec_eval name -> its -R format. Outside
# --preferences they are refused by name, naming the format.
_PREFS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
          "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
          "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
          "prefs_pair_imp", "prefs_avgjg_imp", "prefs", "all_prefs")
OTHER_FORMATS = {name: "prefs or -R qrels_prefs" for name in _PREFS}

# trec_eval's -R qrels_jg (qrels whose second field is a judgment group) and its measures:
# each the measure of plain qrels scored per group and averaged per query, which
# --judgment-groups does for every metric; their group (-m qrels_jg) is the rest of the row.
# Under -R qrels_jg trec_eval computes these alone: its other measures stop it.
JUDGMENT_GROUPS = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
QRELS_JG = ("runid", "num_q", *JUDGMENT_GROUPS)

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
    if word.partition(".")[0] in (*JUDGMENT_GROUPS, "qrels_jg"):
        return judgment_groups_hint(word.partition(".")[0])
    if word in UNCUT:
        return (f"{word} is trec_eval's name (uncut): here it is {UNCUT[word]}, or use "
                "{opt:compat} trec_eval")
    return None


def _other_format(name: str) -> str:
    return (f"{name} belongs to trec_eval's -R {OTHER_FORMATS[name]}: it reads preferences, "
            "which {opt:preferences} reads (docs/trec-eval.md)")


# trec_eval's prefs_* measures (-R prefs, -R qrels_prefs) in its order, and its groups of them
# (with runid and num_q, as its measures.c lists them)
PREFERENCES = _PREFS[:14]
PREFERENCE_GROUPS = {"all_prefs": ("runid", "num_q", *PREFERENCES),
                     "prefs": ("runid", "num_q", *PREFERENCES[:6])}
# The settings that change a prefs_* value (``rankeval metrics NAME`` lists them; the
# preferences' verb reads them, and no other that changes one)
PREFERENCE_CONVENTIONS = ("max_depth", "skip_missing_users", "dedupe")

# What each prefs_* measure is, for ``rankeval metrics NAME``: the three counts, then each
# ratio as its base and which pairs it counts (no suffix, _ret, _imp). A preference is A over
# B: fulfilled when A is listed above B, or A is listed and B is not.
_PREF_COUNTS = {
    "prefs_num_prefs_poss": "the number of preferences the judgments hold, listed or not "
                            "(summed over users)",
    "prefs_num_prefs_ful": "the number of preferences fulfilled; a pair with neither "
                           "document listed fails (summed over users)",
    "prefs_num_prefs_ful_ret": "the number of preferences fulfilled with both documents "
                               "listed (summed over users)",
}
_PREF_RATIOS = {
    "simp": "preferences fulfilled / preferences held, every preference weighing the same",
    "pair": "the mean over document pairs of the share of the preferences on the pair "
            "that are fulfilled (prefs_simp when no pair is judged by two groups)",
    "avgjg": "preferences fulfilled / preferences held within each judgment group, averaged "
             "over the groups: every group weighs the same, however many preferences it holds",
    "avgjg_Rnonrel": "prefs_avgjg with each group's listed non-relevant documents (level 0) "
                     "counted as many as its listed relevant ones (R), so that many judged "
                     "non-relevant documents do not outweigh the rest",
}
_PREF_PAIRS = {"": "a pair with one document listed counts, one with neither fails",
               "_ret": "only the pairs with both documents listed count",
               "_imp": "a pair with one document listed counts, one with neither is left out"}
PREFERENCE_DEFINITIONS = _PREF_COUNTS | {
    f"prefs_{base}{pairs}": f"{what}; {_PREF_PAIRS[pairs]}"
    for base, what in _PREF_RATIOS.items() for pairs in _PREF_PAIRS
    if f"prefs_{base}{pairs}" in PREFERENCES}


def preference_words(words, judgment_groups: bool = False) -> tuple[tuple[str, ...], bool]:
    """Under ``preferences``: the -m words as trec_eval's prefs measures in its order (with
    ``num_q`` when asked for), and whether its runid line is; an OptionError for any other
    measure and for none, as trec_eval stops on them under -R prefs (its default measures
    among them)."""
    if judgment_groups:
        raise OptionError("{opt:preferences} and {opt:judgment_groups} are two ways to read the "
                          "truth's groups: give one", "preferences")
    every = ", ".join(PREFERENCE_GROUPS)
    words = [words] if isinstance(words, str) else words
    if not words:
        raise OptionError("{opt:preferences} computes trec_eval's prefs_* measures alone, as "
                          f"-R prefs: name them with -m ({every}, or one, prefs_simp; trec_eval "
                          "stops on its default measures)", "preferences")
    asked: set[str] = set()
    for word in (w.strip() for text in words for w in str(text).split(",")):
        if word in PREFERENCE_GROUPS:
            asked.update(PREFERENCE_GROUPS[word])
        elif word in (*PREFERENCES, "runid", "num_q"):
            asked.add(word)
        elif word.partition(".")[0] in PREFERENCES:
            raise OptionError(f"-m {word}: trec_eval's prefs_* measures take no parameter",
                              "preferences")
        else:
            raise OptionError(f"-m {word}: under {{opt:preferences}} trec_eval computes the "
                              f"prefs_* measures alone ({every}), as -R prefs; it stops on the "
                              "measures of qrels", "preferences")
    ordered = tuple(m for m in ("num_q", *PREFERENCES) if m in asked)
    return ordered, "runid" in asked


def judgment_groups_hint(name: str) -> str:
    """How to get trec_eval's -R qrels_jg measure ``name`` (or its group)."""
    return (f"{name} is trec_eval's measure of qrels with judgment groups (-R qrels_jg): give "
            "{opt:judgment_groups} with {opt:compat} trec_eval (docs/trec-eval.md)")


def other_format(name: str) -> str | None:
    """Why trec_eval's ``name`` is refused: the relevance format it needs, or None."""
    if name in (*JUDGMENT_GROUPS, "qrels_jg"):
        return judgment_groups_hint(name)
    return _other_format(name) if name in OTHER_FORMATS else None



# Every other tool's measure that rankeval can reproduce, as data: the tool's spelling, rankeval's
# metric and whether the numbers are equal under the tool's preset (``TOOLS``). The mapping tables
# of docs/trec-eval.md and docs/recommenders.md are generated from it (``make docs``;
# ``report.catalog.peers_markdown``), ``rankeval metrics NAME`` lists the names (``PEERS``), and
# tests/test_peer_table.py checks every row marked EQUAL against the tool itself (ranx,
# pytrec_eval, ir_measures), trec_eval 10.0's committed outputs, or RecBole's and Microsoft
# Recommenders' formulas written out from their source (tests/test_peer_presets.py): a claim of
# equality without a test fails there. ``{k}`` stands for any cut-off.
EQUAL, DIFFERS, UNCHECKED = "equal", "differs", "not checked"


@dataclass(frozen=True)
class Peer:
    tool: str  # a key of TOOLS
    name: str  # the tool's own spelling (trec_eval: its -m word; pytrec_eval: its result key)
    ours: str  # rankeval's metric
    status: str  # EQUAL (a test checks it), DIFFERS (``note`` says how), UNCHECKED (no test)
    note: str = ""


class Tool(NamedTuple):
    preset: str  # the --compat preset that reproduces it
    title: str  # its name and version in the docs
    # ``rankeval metrics NAME`` lists its names from PEER_TABLE (``PEERS``); trec_eval's and
    # ir_measures' come from their own tables (``CUT``, ``UNCUT``, ``irmeasures.NAMES``)
    listed: bool


TOOLS: dict[str, Tool] = {
    "trec_eval": Tool("trec_eval", "trec_eval 10.0", False),
    "pytrec_eval": Tool("trec_eval-9", "pytrec_eval (trec_eval 9.0.8)", False),
    "ir_measures": Tool("ir_measures", "ir_measures 0.4", False),
    "ranx": Tool("ranx", "ranx 0.3", True),
    "RecBole": Tool("recbole", "RecBole 1.2", True),
    "Recommenders": Tool("recommenders", "Microsoft Recommenders 1.2", True),
}


def _rows(tool: str, status: str, pairs: str, note: str = "") -> list[Peer]:
    """``name:ours`` pairs separated by spaces, all of one tool and status."""
    return [Peer(tool, name, ours, status, note)
            for name, ours in (pair.split(":", 1) for pair in pairs.split())]


PEER_TABLE: tuple[Peer, ...] = (
    *_rows("trec_eval", EQUAL,
           "P.{k}:precision@{k} recall.{k}:recall@{k} success.{k}:hit_rate@{k} "
           "recip_rank:mrr@all map:map@all map_cut.{k}:map@{k} ndcg:ndcg@all "
           "ndcg_cut.{k}:ndcg@{k} Rprec:r_precision bpref:bpref gm_map:gm_map@all "
           "gm_bpref:gm_bpref infAP:inf_ap iprec_at_recall:iprec 11pt_avg:iprec_11pt "
           "Rprec_mult:r_precision_mult num_q:num_q num_ret:num_ret num_rel:num_rel "
           "num_rel_ret:num_rel_ret num_nonrel_judged_ret:num_nonrel_judged_ret "
           "set_P:set_precision set_recall:set_recall set_F:set_f1 set_map:set_map "
           "set_relative_P:set_relative_precision relative_P.{k}:relative_precision@{k} "
           "binG:bin_g G:g ndcg_rel:ndcg_rel Rndcg:r_ndcg utility:utility yaap:yaap "
           "rbp:rbp rbp_resid:rbp_residual unj.{k}:unjudged@{k} dcg:dcg@all "
           "ideal_dcg:idcg@all"),
    *_rows("trec_eval", EQUAL, "P_avgjg.{k}:precision@{k} map_avgjg:map@all "
           "Rprec_mult_avgjg:r_precision_mult",
           "the _avgjg names: -R qrels_jg, under --judgment-groups (each query's mean over "
           "its judgment groups)"),
    *_rows("pytrec_eval", EQUAL,
           "P_{k}:precision@{k} recall_{k}:recall@{k} success_{k}:hit_rate@{k} "
           "recip_rank:mrr@all map:map@all map_cut_{k}:map@{k} ndcg:ndcg@all "
           "ndcg_cut_{k}:ndcg@{k} Rprec:r_precision bpref:bpref gm_map:gm_map@all "
           "gm_bpref:gm_bpref infAP:inf_ap iprec_at_recall_0.10:iprec@0.1 "
           "11pt_avg:iprec_11pt Rprec_mult_0.20:r_precision_mult@0.2 num_q:num_q "
           "num_ret:num_ret num_rel:num_rel num_rel_ret:num_rel_ret "
           "num_nonrel_judged_ret:num_nonrel_judged_ret set_P:set_precision "
           "set_recall:set_recall set_F:set_f1 set_map:set_map "
           "set_relative_P:set_relative_precision relative_P_{k}:relative_precision@{k} "
           "binG:bin_g G:g ndcg_rel:ndcg_rel Rndcg:r_ndcg utility:utility"),
    *_rows("ir_measures", EQUAL,
           "P@{k}:precision@{k} R@{k}:recall@{k} Success@{k}:hit_rate@{k} RR:mrr@all "
           "RR@{k}:mrr@{k} AP:map@all AP@{k}:map@{k} nDCG:ndcg@all nDCG@{k}:ndcg@{k} "
           "Rprec:r_precision Bpref:bpref infAP:inf_ap IPrec@0.1:iprec@0.1 NumQ:num_q "
           "NumRet:num_ret NumRel:num_rel NumRet(rel=1):num_rel_ret SetP:set_precision "
           "SetR:set_recall SetF:set_f1 SetAP:set_map "
           "SetP(relative=True):set_relative_precision Judged@{k}:judged@{k} "
           "RBP(rel=1):rbp(rel=1) Compat:compat SDCG(max_rel=3)@{k}:sdcg(max_rel=3)@{k} "
           "INST(max_rel=3):inst(max_rel=3) INSQ(max_rel=3):insq(max_rel=3) "
           "BPM(max_rel=3)@{k}:bpm(max_rel=3)@{k} NERR8(max_rel=3)@{k}:nerr8(max_rel=3)@{k} "
           "NERR9(max_rel=3)@{k}:nerr9(max_rel=3)@{k} NERR10(max_rel=3):nerr10(max_rel=3) "
           "NERR11(max_rel=3):nerr11(max_rel=3) alpha_nDCG@{k}:alpha_ndcg@{k} "
           "alpha_DCG@{k}:alpha_dcg@{k} ERR_IA@{k}:err_ia@{k} nERR_IA@{k}:nerr_ia@{k} "
           "NRBP:nrbp nNRBP:nnrbp P_IA@{k}:p_ia@{k} AP_IA:map_ia "
           "StRecall@{k}:subtopic_recall@{k}"),
    *_rows("ir_measures", EQUAL, "nDCG(dcg='exp-log2')@{k}:ndcg(dcg='exp-log2')@{k} "
           "ERR@{k}:err@{k}", "to gdeval's 5 printed decimals"),
    *_rows("ranx", EQUAL,
           "precision@{k}:precision@{k} recall@{k}:recall@{k} f1@{k}:f1@{k} "
           "hit_rate@{k}:hit_rate@{k} mrr:mrr@all mrr@{k}:mrr@{k} map:map@all map@{k}:map@{k} "
           "ndcg:ndcg@all ndcg@{k}:ndcg@{k} dcg@{k}:dcg@{k} ndcg_burges@{k}:ndcg_burges@{k} "
           "dcg_burges@{k}:dcg_burges@{k} r-precision:r_precision rbp.8:rbp"),
    Peer("ranx", "bpref", "bpref", DIFFERS,
         "ranx's bpref is not trec_eval's: 0 or NaN for some queries (a relevant document "
         "above every judged non-relevant one); the preset keeps trec_eval's"),
    Peer("ranx", "hits@{k}", "precision@{k}", DIFFERS,
         "ranx's hits is a count, precision@K times K (rankeval's hit_rate is ranx's hit_rate)"),
    *_rows("RecBole", EQUAL,
           "Precision@{k}:precision@{k} Recall@{k}:recall@{k} Hit@{k}:hit_rate@{k} "
           "MRR@{k}:mrr@{k} MAP@{k}:map@{k} NDCG@{k}:ndcg@{k} "
           "ItemCoverage@{k}:coverage@{k} AveragePopularity@{k}:arp@{k} "
           "GiniIndex@{k}:gini@{k} ShannonEntropy@{k}:entropy@{k} "
           "TailPercentage@{k}:long_tail@{k}"),
    *_rows("Recommenders", EQUAL,
           "precision_at_k:precision@{k} recall_at_k:recall@{k} ndcg_at_k:ndcg@{k} "
           "map_at_k:map@{k} novelty:novelty@{k} catalog_coverage:coverage@{k} "
           "distributional_coverage:entropy@{k}"),
    *_rows("Recommenders", UNCHECKED,
           "r_precision_at_k:r_precision diversity:ild@{k} serendipity:serendipity@{k}"),
)

# Other libraries' names for rankeval's metrics (``rankeval metrics NAME``), by tool and metric:
# ranx's, RecBole's and Microsoft Recommenders' from PEER_TABLE (trec_eval's and ir_measures'
# come from their own tables: ``CUT``, ``UNCUT``, ``irmeasures.NAMES``). A name whose numbers
# differ, or are not checked, says so.
PEERS: dict[str, dict[str, list[str]]] = {}
for _p in PEER_TABLE:
    if TOOLS[_p.tool].listed:
        PEERS.setdefault(_p.tool, {}).setdefault(re.split(r"[@(]", _p.ours)[0], []).append(
            _p.name.replace("{k}", "K") + ("" if _p.status == EQUAL else f" ({_p.status})"))


def trec_eval_names(metric: str) -> list[str]:
    """trec_eval's measures that are ``metric`` (``P.K``; ``recip_rank``, uncut)."""
    cut = [f"{t}.K" for t, ours in CUT.items() if ours == metric]
    return cut + [t for t, ours in UNCUT.items() if ours.partition("@")[0] == metric]
