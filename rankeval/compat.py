"""trec_eval's measure names, both ways.

``--compat trec_eval`` (trec_eval's values are the ``trec_eval`` column of the settings table)
reads metric names the way trec_eval does (``-m P.5,10 -m map -m ndcg_cut.10 -m recip_rank``),
and ``-f trec`` prints them so that the two tools' outputs can be diffed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from rankeval.errors import OptionError
from rankeval.foreign_names import (
    CUT,
    JUDGMENT_GROUPS,
    MEASURE,
    QRELS_JG,
    TEXT_ONLY,
    UNCUT,
    other_format,
)
from rankeval.names import MetricSpec, expand, split
from rankeval.presets import PRESETS

# trec_eval's cut-offs for a measure named without one (-m P means P_5 ... P_1000), and the
# measures with cut-offs of their own (-m success means success_1, 5 and 10).
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
OWN_CUTOFFS: dict[str, tuple[int, ...]] = {"success": (1, 5, 10), "unj": (5, 10, 20)}

# trec_eval's groups of measures (-m official, the default; -m set; -m all_trec), by version.
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P")
DEFAULT_MEASURES = OFFICIAL
# The measures a version lacks (its measures.c): -m refuses them, as that version stops with
# "illegal measure", and its groups leave them out. 9.0.8 lacks what 10.0 added.
LACKING: dict[str, tuple[str, ...]] = {
    "trec_eval": (),
    "trec_eval-9": ("dcg", "ideal_dcg", "rbp", "rbp_resid", "unj"),
}
_ALL_TREC = (*OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
             "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
             "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
             "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F")
GROUPS: dict[str, dict[str, tuple[str, ...]]] = {
    version: {name: tuple(m for m in group if m not in lacking)
              for name, group in (("official", OFFICIAL), ("set", _SET),
                                  ("all_trec", _ALL_TREC))}
    for version, lacking in LACKING.items()}

# Measures at levels (recall levels, multiples of R): ``iprec_at_recall_0.10``.
LEVELS = {"iprec_at_recall": "iprec", "Rprec_mult": "r_precision_mult"}
_LEVEL = re.compile(r"^(iprec_at_recall|Rprec_mult)(?:[._]([0-9]*\.?[0-9]+))?$")


# Measures whose parameters are not cut-offs (trec_eval -m NAME.PARAMS): a list of numbers
# (``11pt_avg.0.2,0.5``, ``set_F.0.5``, ``utility.1,-1,0,0``), or NAME=VALUE pairs (a gain per
# grade, ``ndcg.1=3,2=9``; RBP's persistence, ``rbp.p=0.8``). Each becomes a parameter of the
# rankeval metric: trec_eval name -> (rankeval name, the parameter).
NUMBERS = {"11pt_avg": ("iprec_11pt", "levels"), "set_F": ("set_f1", "beta"),
           "utility": ("utility", "coefficients")}
PAIRS = {"ndcg": ("ndcg@all", "gains"), "G": ("g", "gains"), "ndcg_rel": ("ndcg_rel", "gains"),
         "Rndcg": ("r_ndcg", "gains"), "rbp": ("rbp", "p"), "rbp_resid": ("rbp_residual", "p"),
         "dcg": ("dcg@all", "gains"), "ideal_dcg": ("idcg@all", "gains")}
# C's atol and atof, which trec_eval reads its parameters with: the leading number, else 0
_ATOL = re.compile(r"^\s*[+-]?[0-9]+")
_ATOF = re.compile(r"^\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _c_number(text: str, integer: bool, word: str, notes: list[str]) -> float:
    """``text`` as trec_eval reads it (atol/atof: ``23.4`` is the cut-off 23), with a note
    when that is not all of it; an OptionError when no number leads it."""
    match = (_ATOL if integer else _ATOF).match(text)
    if match is None:
        raise OptionError(f"-m {word}: {text!r} is not a number")
    value = int(match.group()) if integer else float(match.group())
    if match.group().strip() != text.strip():
        notes.append(f"-m {word}: {text!r} is read as {value!r}, as trec_eval reads it")
    return value


def _parametrized(root: str, text: str, notes: list[str]) -> list[str]:
    """The rankeval names of trec_eval's ``root.text`` (``P.5,10``, ``ndcg.1=3,2=9``)."""
    word = f"{root}.{text}"
    parts = text.split(",")
    if root in CUT or root in LEVELS:
        values = sorted(_c_number(p, root in CUT, word, notes) for p in parts)
        if root in CUT and values[0] <= 0:
            raise OptionError(f"-m {word}: cut-offs are whole numbers > 0")
        if len(set(values)) < len(values):
            raise OptionError(f"-m {word}: a cut-off is named twice")
        ours = CUT.get(root) or LEVELS[root]
        return [f"{ours}@{v!r}" for v in values]
    if root in NUMBERS:
        ours, param = NUMBERS[root]
        before = len(notes)
        numbers = [_c_number(p, False, word, notes) for p in parts]
        if param == "beta":
            if len(numbers) != 1:
                raise OptionError(f"-m {word}: set_F takes one parameter, beta")
            return [f"{ours}(beta={numbers[0]!r})"]
        exact = len(notes) == before  # as typed, which trec_eval prints (11pt_avg_.25,.5)
        shown = text.replace(" ", "") if exact else ",".join(repr(n) for n in numbers)
        return [f"{ours}({param}={shown!r})"]
    ours, param = PAIRS[root]
    pairs = [p.partition("=") for p in parts]
    if any(not eq or not name.strip() for name, eq, _ in pairs):
        raise OptionError(f"-m {word}: parameters are NAME=VALUE pairs, e.g. {root}."
                          + ("p=0.8" if param == "p" else "1=3,2=9"))
    names = [name.strip() for name, _, _ in pairs]
    values = [_c_number(v, False, word, notes) for _, _, v in pairs]
    if param == "p":
        if names != ["p"]:
            raise OptionError(f"-m {word}: {root} takes p= alone here (trec_eval 10.0 scales "
                              "grade gains for rbp with unset bounds, so they are not read)")
        at = "@all" if "@" in ours else ""
        return [f"{ours.split('@')[0]}(p={values[0]!r}){at}"]
    if not all(re.fullmatch(r"[+-]?[0-9]+", n) for n in names):
        raise OptionError(f"-m {word}: {root} takes GRADE=GAIN pairs, whole-number grades "
                          "(trec_eval ignores other names)")
    gains = ",".join(f"{int(n)}={v!r}" for n, v in zip(names, values, strict=True))
    name, at, k = ours.partition("@")
    return [f"{name}(gains={gains!r}){at}{k}"]


def translate(words: Iterable[str], ks: Iterable[int] | None = None,
              compat: str = "trec_eval", notes: list[str] | None = None) -> list[str]:
    """trec_eval measure names -> rankeval metric names; other names pass through unchanged.

    ``P.5,10`` is P at 5 and 10, as in trec_eval; ``P`` alone takes ``ks`` (``--k``), else
    trec_eval's default cut-offs, like every other name without a K under compat. Parameters
    are read as trec_eval reads them (``ndcg_cut.23.4`` is 23, with a note in ``notes``;
    ``ndcg.1=3,2=9`` a gain per grade). A group (``official``, ``set``, ``all_trec``) is its
    measures in ``compat``'s version; ``runid`` stays as it is (a line of the output).
    """
    notes = [] if notes is None else notes
    given = list(ks) if ks else None
    groups = GROUPS.get(compat, GROUPS["trec_eval"])
    words = [m for word in words for m in groups.get(str(word).strip(), (word,))]
    # A measure named again keeps the first parameters given, as in trec_eval (-m P -m P.5
    # -m P.10 is P_5 alone): a bare name (its defaults) gives way to the first with some.
    named: dict[str, list[str]] = {}
    explicit: set[str] = set()

    def name_once(root: str, outs: list[str], given_here: bool) -> bool:
        if root in explicit or (root in named and not given_here):
            return False
        named[root] = outs
        if given_here:
            explicit.add(root)
        return True

    for word in words:
        root, dot, text = str(word).strip().partition(".")
        refused = other_format(root)
        if refused is not None:
            raise OptionError(f"-m {str(word).strip()}: {refused}")
        if root in TEXT_ONLY:  # relstring.N: N read by atof, the text printed as typed
            if dot and "," in text:
                raise OptionError(f"-m {word}: {root} takes one parameter, the depth N")
            if dot:
                _c_number(text, False, str(word).strip(), notes)
            name_once(root, [f"{root}.{text.strip()}" if dot else root], bool(dot))
            continue
        if dot and (root in CUT or root in LEVELS or root in NUMBERS or root in PAIRS):
            name_once(root, _parametrized(root, text, notes), True)
            continue
        previous: str | None = None
        taken = False
        for part in (p.strip() for p in split(str(word))):
            if not part:
                continue
            if part.isdigit() and previous in CUT:  # the ",10" of "P_5,10"
                if taken:
                    named[previous].append(f"{CUT[previous]}@{part}")
                continue
            if previous in LEVELS and re.fullmatch(r"[0-9]*\.?[0-9]+", part):  # ",0.5"
                if taken:
                    named[previous].append(f"{LEVELS[previous]}@{part}")
                continue
            level = _LEVEL.match(part)
            if level:
                root, ours = level.group(1), LEVELS[level.group(1)]
                at = level.group(2)
                taken = name_once(root, [f"{ours}@{at}" if at else ours], at is not None)
                previous = root
                continue
            match = MEASURE.match(part)
            name, k = (match.group(1), match.group(2)) if match else (part, None)
            previous = None
            if name in CUT:
                cuts = given or OWN_CUTOFFS.get(name, DEFAULT_CUTOFFS)
                outs = [f"{CUT[name]}@{kk}" for kk in ([k] if k else cuts)]
                taken, previous = name_once(name, outs, k is not None), name
            elif name in UNCUT and k is None:
                name_once(name, [UNCUT[name]], False)
            elif name in PAIRS and k is None:  # rbp
                name_once(name, [PAIRS[name][0]], False)
            else:
                named.setdefault(part, [part])
    return [out for outs in named.values() for out in outs]


RUNID = "runid"  # trec_eval's measure that names the run: a line of its output, not a metric


def judgment_group_words(words: Iterable[str] | None) -> list[str]:
    """trec_eval's -R qrels_jg measures (``P_avgjg.5``, the group ``qrels_jg``) as the
    measures of plain qrels they average over the judgment groups (``P.5``), which
    ``judgment_groups`` averages; an OptionError for any other measure and for none, as
    trec_eval stops on them under -R qrels_jg (its default measures among them)."""
    jg = ", ".join(JUDGMENT_GROUPS)
    if not words:
        raise OptionError(f"{{opt:judgment_groups}} under trec_eval's names computes {jg} "
                          "(and runid, num_q) alone, as trec_eval -R qrels_jg: name them with "
                          "-m (-m qrels_jg for all; trec_eval stops on its default measures)")
    out: list[str] = []
    for word in (str(w).strip() for w in words):
        root, dot, text = word.partition(".")
        if word == "qrels_jg":
            out += [JUDGMENT_GROUPS.get(m, m) for m in QRELS_JG]
        elif root in JUDGMENT_GROUPS:
            out.append(f"{JUDGMENT_GROUPS[root]}{dot}{text}")
        elif word in QRELS_JG:  # runid, num_q
            out.append(word)
        else:
            raise OptionError(f"-m {word}: under {{opt:judgment_groups}} trec_eval computes "
                              f"{jg} (and runid, num_q) alone, as -R qrels_jg; it stops on "
                              "the measures of plain qrels")
    return out


def jg_name(name: str) -> str:
    """The -R qrels_jg name of a measure trec_eval prints (``P_5`` -> ``P_avgjg_5``)."""
    for jg, plain in sorted(JUDGMENT_GROUPS.items(), key=lambda kv: -len(kv[1])):
        if name == plain or name.startswith(plain + "_"):
            return jg + name[len(plain):]
    return name


def measures(words: Iterable[str] | None, ks: list[int] | None,
             compat: str, judgment_groups: bool = False
             ) -> tuple[list[MetricSpec], bool, str | None]:
    """``-m`` words under compat (trec_eval's defaults when there are none) as specs,
    whether trec_eval's ``runid`` line is asked for, and its ``relstring``'s parameter as
    typed ("" for the bare name; None: not asked for). ``judgment_groups``: the words are
    -R qrels_jg's (``judgment_group_words``)."""
    if judgment_groups:
        words = judgment_group_words(words)
    names = translate(list(words) if words else list(DEFAULT_MEASURES), ks, compat)
    texts = [n for n in names if n.partition(".")[0] in TEXT_ONLY]
    relstring = texts[0].partition(".")[2] if texts else None
    metrics = [n for n in names if n != RUNID and n not in texts]
    # trec_eval's lines alone (-m runid, -m relstring): no metric, which nothing else allows
    specs = expand(metrics, ks or list(DEFAULT_CUTOFFS)) if metrics or not (
        texts or RUNID in names) else []
    for spec in specs:
        trec = root(spec)
        if trec in LACKING.get(compat, ()):
            tool = " ".join(PRESETS[compat].tool.split()[:2])
            raise OptionError(f"-m {measure_name(spec)}: {tool} has no measure {trec} (it "
                              "stops: 'illegal measure'); --compat trec_eval (10.0) has it")
    return specs, RUNID in names, relstring


def left_out(words: Iterable[str], compat: str | None, text_lines: bool,
             judgment_groups: bool = False) -> list[str]:
    """Parameters read as trec_eval reads them (``23.4`` as 23), and the text measures a
    report without trec_eval's lines (not ``text_lines``) leaves out, as warnings."""
    words = [str(w).strip() for w in words]
    notes: list[str] = []
    if compat not in GROUPS:
        return notes
    if judgment_groups:
        words = judgment_group_words(words)
    names = translate(words, None, compat, notes)
    if not text_lines:
        notes += [f"-m {root} is left out of this report: it is {TEXT_ONLY[root]}; -f trec "
                  "--per-query prints it" for name in names
                  if (root := name.partition(".")[0]) in TEXT_ONLY]
    return notes


_NAMES = {v: k for k, v in CUT.items()}
def _number(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else repr(float(x))


# How trec_eval prints a parameter after the measure's name (ndcg_1=3,2=9, rbp_p=0.8)
_PRINTED: dict[str, Callable[[Any], str]] = {
    "gains": str, "p": lambda v: f"p={_number(v)}", "beta": _number, "levels": str,
    "coefficients": str}


def measure_name(spec: MetricSpec) -> str:
    """trec_eval's output name of a metric (``P_5``, ``map``, ``ndcg_cut_10``,
    ``ndcg_1=3,2=9``), else our own."""
    if spec.params:
        if not all(name in _PRINTED for name, _ in spec.params):
            return str(spec)  # rel=, judged_only=, dcg=: no trec_eval spelling
        name = measure_name(dataclasses.replace(spec, params=()))
        return f"{name}_{','.join(_PRINTED[n](v) for n, v in spec.params)}"
    uncut = {v: k for k, v in UNCUT.items()}
    if spec.level is not None:
        trec = {v: k for k, v in LEVELS.items()}[spec.name]
        return f"{trec}_{spec.level:.2f}"
    if str(spec) in uncut:
        return uncut[str(spec)]
    if spec.k is not None and spec.name in _NAMES:
        return f"{_NAMES[spec.name]}_{spec.k}"
    return str(spec)


# trec_eval's own order of its measures: its output follows it, whatever the order of -m, and
# each measure's cut-offs or levels ascend.
ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
         "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
         "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg",
         "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
         "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "yaap",
         "rbp", "rbp_resid", "unj")


def _placed(spec: MetricSpec) -> tuple[str, float] | None:
    """trec_eval's measure of a metric and its cut-off or level, or None (rankeval's own)."""
    name = measure_name(spec)
    for trec in sorted(ORDER, key=len, reverse=True):
        rest = name[len(trec) + 1:]
        if name == trec:
            return trec, 0.0
        if name.startswith(trec + "_") and re.fullmatch(r"[0-9]*\.?[0-9]+", rest):
            return trec, float(rest)
        if spec.params and name.startswith(trec + "_"):  # ndcg_1=3,2=9
            return trec, 0.0
    return None


def root(spec: MetricSpec) -> str | None:
    """trec_eval's measure a metric is (``unj`` for unjudged@5), or None."""
    placed = _placed(spec)
    return None if placed is None else placed[0]


RELSTRING_KEY = (ORDER.index("relstring"), 0.0)  # where -f trec prints relstring's lines


def relstring_name(parameter: str) -> str:
    """trec_eval's name of relstring with its parameter as typed (``relstring_20``)."""
    return f"relstring_{parameter}" if parameter else "relstring"


def output_key(spec: MetricSpec) -> tuple[int, float]:
    """Where trec_eval prints a measure: its place in ``ORDER``, then its cut-off or level;
    rankeval's own measures after trec_eval's."""
    placed = _placed(spec)
    return (len(ORDER), 0.0) if placed is None else (ORDER.index(placed[0]), placed[1])
