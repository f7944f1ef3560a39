"""ir_measures' measure names, both ways: ``nDCG(dcg='exp-log2')@10`` read as rankeval's
``ndcg(dcg='exp-log2')@10``, and a metric written back as ir_measures writes it
(``-f ir_measures``).

ir_measures' meaning comes with its spelling: a bare ``AP``, ``RR``, ``nDCG`` or ``Judged`` is
the whole list (``map@all``), where rankeval's ``map`` takes every K. Under
``--compat ir_measures`` its aliases (``MAP``, ``NDCG``, ``MRR``) read the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankeval.errors import OptionError
from rankeval.params import CWL, text


@dataclass(frozen=True)
class Name:
    """An ir_measures measure: rankeval's metric, whether the bare name is the whole list,
    and parameters that choose another metric (``SetP(relative=True)``)."""

    ours: str
    whole: bool = False
    becomes: tuple[tuple[str, Any, str], ...] = ()  # (param, value, metric it then is)
    requires: tuple[str, ...] = ()  # parameters ir_measures refuses the measure without
    at: str | None = None  # what ir_measures refuses it without after the @ (e.g. "10")
    provider: str = "pytrec_eval"  # the first of ir_measures' default providers computing it
    # where another provider computes it: (param, value or None for any, with a cut-off: True,
    # without: False, either: None, the provider); the first row that matches
    providers: tuple[tuple[str | None, Any, bool | None, str], ...] = ()


NAMES: dict[str, Name] = {
    "AP": Name("map", whole=True),
    "P": Name("precision", at="10"),
    "R": Name("recall", at="10"),
    "RR": Name("mrr", whole=True, providers=((None, None, True, "msmarco"),)),
    "nDCG": Name("ndcg", whole=True, providers=(("dcg", "exp-log2", True, "gdeval"),
                                                  ("dcg", "exp-log2", False, "ranx"))),
    "Rprec": Name("r_precision"),
    "Bpref": Name("bpref"),
    "infAP": Name("inf_ap"),
    "IPrec": Name("iprec", at="0.5"),
    "Success": Name("hit_rate", at="10"),
    "SetP": Name("set_precision", becomes=(("relative", True, "set_relative_precision"),)),
    "SetR": Name("set_recall"),
    "SetF": Name("set_f1"),
    "SetAP": Name("set_map"),
    "NumQ": Name("num_q"),
    "NumRel": Name("num_rel"),
    "NumRet": Name("num_ret", becomes=(("rel", None, "num_rel_ret"),)),  # NumRet(rel=1)
    "Judged": Name("judged", whole=True, provider="judged"),
    "ERR": Name("err", at="10", provider="gdeval"),
    # ir_measures: "Unsupported measures {RBP}" without rel=
    "RBP": Name("rbp", requires=("rel",), provider="cwl_eval"),
    "Compat": Name("compat", provider="compat"),
    # cwl_eval's C/W/L measures
    "SDCG": Name("sdcg", requires=("max_rel",), provider="cwl_eval"),
    "INST": Name("inst", requires=("max_rel",), provider="cwl_eval"),
    "INSQ": Name("insq", requires=("max_rel",), provider="cwl_eval"),
    "BPM": Name("bpm", requires=("max_rel",), provider="cwl_eval"),
    "NERR8": Name("nerr8", requires=("max_rel",), provider="cwl_eval"),
    "NERR9": Name("nerr9", requires=("max_rel",), provider="cwl_eval"),
    "NERR10": Name("nerr10", requires=("max_rel",), provider="cwl_eval"),
    "NERR11": Name("nerr11", requires=("max_rel",), provider="cwl_eval"),
    # the intent-aware measures (pyndeval's ndeval); a bare name takes every K, as in rankeval
    "alpha_nDCG": Name("alpha_ndcg", provider="pyndeval"),
    "alpha_DCG": Name("alpha_dcg", provider="pyndeval"),
    "ERR_IA": Name("err_ia", provider="pyndeval"),
    "nERR_IA": Name("nerr_ia", provider="pyndeval"),
    "NRBP": Name("nrbp", provider="pyndeval"),
    "nNRBP": Name("nnrbp", provider="pyndeval"),
    "P_IA": Name("p_ia", provider="pyndeval"),
    "AP_IA": Name("map_ia", provider="pyndeval"),
    "StRecall": Name("subtopic_recall", provider="pyndeval"),
}
# ir_measures' other spellings: always read as below when they say something of their own,
# and under --compat ir_measures also those rankeval reads its own way (MAP: every K).
ALIASES = {"MAP": "AP", "Precision": "P", "Recall": "R", "MRR": "RR", "NDCG": "nDCG",
           "RPrec": "Rprec", "BPref": "Bpref", "MAP_IA": "AP_IA", "α_nDCG": "alpha_nDCG",
           "α_DCG": "alpha_DCG"}
# ir_measures' parameters that are the level written after @ (IPrec(recall=0.5) is IPrec@0.5)
LEVELS = {"IPrec": "recall"}
SPELLED: dict[str, tuple[str, dict[str, Any]]] = {
    "NumRelRet": ("NumRet", {"rel": 1}), "SetRelP": ("SetP", {"relative": True})}
# ir_measures' measures rankeval does not compute yet, and what they are.
MISSING = {
    "Accuracy": "ir_measures' accuracy (of a run's scores against pairwise preferences)",
}


def read(word: str, pairs: list[tuple[str, Any]], compat: bool, at: str | None = None
         ) -> tuple[str, list[tuple[str, Any]], bool] | None:
    """An ir_measures spelling as (rankeval's name, parameters, whether a bare name is the
    whole list), or None when ``word`` is not one (rankeval reads it). ``compat``: under
    --compat ir_measures, where a string ir_measures refuses is refused (``at``: what
    follows its @, if anything)."""
    if word in SPELLED:
        word, fixed = SPELLED[word]
        pairs = [*fixed.items(), *pairs]
    elif word in ALIASES and (compat or word not in ("MAP", "MRR", "NDCG", "Precision",
                                                      "Recall")):
        word = ALIASES[word]
    if word in MISSING:
        raise OptionError(f"ir_measures' {word} ({MISSING[word]}) is not computed by rankeval "
                          "yet; see 'rankeval metrics' for what is")
    name = NAMES.get(word)
    if name is None:
        return None
    missing = [p for p in name.requires if p not in dict(pairs)]
    if compat and missing:
        raise OptionError(f"ir_measures refuses {word} without {missing[0]}= (e.g. "
                          f"{word}({missing[0]}=1)); without --compat ir_measures, "
                          f"{name.ours} takes rankeval's default")
    if compat and name.at is not None and at is None:
        raise OptionError(f"{word} needs a cut-off under --compat ir_measures, which refuses "
                          f"it without one (e.g. {word}@{name.at}); without the preset, "
                          f"{name.ours} takes every K")
    ours = name.ours
    for param, value, metric in name.becomes:
        given = dict(pairs)
        if param in given and (value is None or given[param] == value):
            ours = metric
            if value is not None:
                pairs = [(k, v) for k, v in pairs if k != param]
    return ours, pairs, name.whole


# How each of ir_measures' providers orders tied scores (measured against ir_measures 0.4 on
# tied runs in shuffled file order, tests/test_ir_measures.py): pytrec_eval (trec_eval) and
# gdeval by docno descending; msmarco, judged, compat and pyndeval by docno ascending;
# cwl_eval in the run's order (a stable sort by score). ir_measures' ranx provider fails on
# ranx 0.3.21 (it hands ranx integer query ids): untested, it takes rankeval's rule, as a
# metric ir_measures does not name does (params.PER_METRIC_TIES).
TIES = {"pytrec_eval": "trec", "gdeval": "trec", "msmarco": "item-asc", "judged": "item-asc",
        "compat": "item-asc", "pyndeval": "item-asc", "cwl_eval": "input"}


# Providers whose values ir_measures reads back from printed text: gdeval's Perl script prints
# 5 decimals, so ir_measures' per-query values and their mean are of rounded values.
PRINTED = {"gdeval": 5}


def printed(spec) -> int | None:
    """The decimals ``spec``'s provider prints its values with; None: full precision."""
    found = provider(spec)
    return None if found is None else PRINTED.get(found)


def provider(spec) -> str | None:
    """The ir_measures provider that computes ``spec`` (its first default provider that
    supports it: ``RR@10`` is msmarco's, ``RR`` pytrec_eval's); None for a metric ir_measures
    does not name."""
    word = _WORDS.get(spec.name)
    if word is None:
        return None
    name = NAMES[word]
    given = dict(spec.params)
    for param, value, cut, other in name.providers:
        if ((param is None or (param in given and (value is None or given[param] == value)))
                and (cut is None or cut == (spec.k is not None))):
            return other
    return name.provider


def tie_rule(spec) -> str | None:
    """The --ties rule of ``spec``'s ir_measures provider; None when it has none."""
    found = provider(spec)
    return None if found is None else TIES.get(found)


_DEFAULTS = {"rel": 1, "judged_only": False, "p": 0.8, "dcg": "log2", "beta": 1.0,
             "alpha": 0.5, "T": 1.0, "min_rel": 0}
# ir_measures' defaults of one measure, where they differ from the others'
_OWN_DEFAULTS = {("nrbp", "beta"): 0.5, ("nnrbp", "beta"): 0.5, ("compat", "p"): 0.95,
                 ("compat", "normalize"): True, ("nerr10", "p"): 0.9}
_OURS = {name.ours: word for word, name in NAMES.items()}
# the ir_measures name of each metric, those a parameter makes another metric included
_WORDS = {**{metric: word for word, name in NAMES.items() for _, _, metric in name.becomes},
          **_OURS}


def write(spec) -> str:
    """A metric as ir_measures writes it: ``P(rel=2)@10``, ``AP``, ``NumRet(rel=1)``;
    parameters at ir_measures' defaults left out, as it does."""
    params = [(k, _identity_gains_left_out(v) if k == "gains" else v)
              for k, v in spec.params
              if _OWN_DEFAULTS.get((spec.name, k), _DEFAULTS.get(k, object())) != v
              or (k == "rel" and spec.name == "rbp")]  # RBP without rel= is graded
    word = _OURS.get(spec.name)
    if spec.name == "set_relative_precision":
        word, params = "SetP", [("relative", True), *params]
    elif spec.name == "num_rel_ret":
        word, params = "NumRet", [("rel", dict(spec.params).get("rel", 1)),
                                  *[(k, v) for k, v in params if k != "rel"]]
    elif spec.name in CWL and "max_rel" not in dict(params):  # ir_measures requires it
        params = [*params, ("max_rel", 1)]
    if word is None:
        return str(spec)
    out = word + (f"({text(tuple(params))})" if params else "")
    if spec.level is not None:
        return f"{out}@{float(spec.level)!r}"
    return out if spec.k is None else f"{out}@{spec.k}"


def _identity_gains_left_out(text) -> str:
    """ir_measures writes a gains dict without its pairs that change nothing (``2:2``)."""
    pairs = [p for p in str(text).split(",") if float(p.split("=")[0]) != float(p.split("=")[1])]
    return ",".join(pairs)
