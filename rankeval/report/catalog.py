"""The metric registry as ``rankeval metrics`` shows it: the rows every format renders (what
follows the @, whether ``--ties expected`` has a closed form) and the JSON records."""

from __future__ import annotations

from textwrap import fill
from typing import Any

from rankeval.conventions import TABLE
from rankeval.foreign_names import (
    EQUAL,
    PEER_TABLE,
    PEERS,
    PREFERENCE_CONVENTIONS,
    PREFERENCE_DEFINITIONS,
    TOOLS,
    trec_eval_names,
)
from rankeval.irmeasures import NAMES
from rankeval.params import PARAMS
from rankeval.presets import PRESETS, UNSET

HEAD = ("metric", "aliases", "definition", "per user", "takes", "--ties expected")


def takes(m) -> str:
    """What follows the @ (a cut-off, a level, or nothing), and its parameters."""
    at = "level (@0.5)" if m.levels else "K (@10, @all)" if m.cutoff else (
        "R" if m.at == "R" else "whole list")
    own = params(m)
    return at + ("; " + ", ".join(f"{p}=" for p in own) if own else "")


def params(m) -> list[str]:
    """The parameters the metric takes (``name(rel=2)``)."""
    return [p.name for p in PARAMS.values() if m.name in p.metrics]


def expected(m) -> str:
    return "closed form" if m.tie_expectation else "no closed form (refused)"


def rows(registry) -> list[tuple[str, ...]]:
    """One row per metric, in ``HEAD``'s order."""
    return [(m.name, ", ".join(m.aliases), m.summary, m.formula, takes(m), expected(m))
            for m in registry.values()]


def records(registry) -> list[dict[str, Any]]:
    """One JSON record per metric (keys are stable: scripts read them)."""
    return [
        {
            "name": m.name,
            "aliases": list(m.aliases),
            "summary": m.summary,
            "formula": m.formula,
            "bounded": m.bounded,
            "takes": takes(m),
            "params": params(m),
            "overall": m.overall,
            "ties_expected": m.tie_expectation,
            "undefined_when": m.undefined_when or None,
        }
        for m in registry.values()
    ]


def _preset_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def presets_markdown() -> str:
    """The Markdown table of every ``--compat`` preset's values (docs/conventions.md): a row
    per setting some preset sets, a column per preset; blank where the preset leaves the
    default."""
    names = list(PRESETS)
    lines = ["| setting | default | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|---|" + "---|" * len(names)]
    for row in TABLE:
        values = [row.preset(n) for n in names]
        if all(v is UNSET for v in values):
            continue
        cells = ["" if v is UNSET else f"`{_preset_value(v)}`" for v in values]
        lines.append(f"| `--{row.name.replace('_', '-')}` | `{_preset_value(row.default)}` | "
                     + " | ".join(cells) + " |")
    tools = "; ".join(f"`{p.name}`: {p.tool}" for p in PRESETS.values())
    return "\n".join(lines) + f"\n\nThe tools: {tools}.\n"


# rankeval's side of a mapping row, said once whichever tools name the metric
_OURS_NOTES = {
    "mrr@all": "`mrr@10` cuts at 10",
    "hit_rate@{k}": "`-m success` alone: 1, 5, 10, as trec_eval",
    "dcg@{k}": "linear gain, as ranx's Järvelin DCG",
    "gm_map@all": "per user the log of max(AP, 0.00001), as trec_eval's `-q`; overall the exp "
                  "of their mean",
    "gm_bpref": "per user the log of max(bpref, 0.00001)",
    "iprec": "the 11 levels; `iprec@0.1` one of them",
    "r_precision_mult": "10 multiples; `r_precision_mult@2.0` one of them",
    "num_q": "summed over users (1 each)",
    "num_ret": "summed over users", "num_rel": "summed over users",
    "num_rel_ret": "summed over users", "num_nonrel_judged_ret": "summed over users",
    "inf_ap": "a negative relevance in the qrels: in the pool, unjudged",
    "utility": "coefficients 1, -1, 0, 0 (`utility(coefficients='a,b,c,d')`)",
    "yaap": "log((1 + S) / (1 + R - S)), S the sum of the precisions at the relevant items",
    "rbp": "`--compat trec_eval`: p 0.9 and graded gains, as 10.0; `--compat ranx`: the raw "
           "grade as gain; 9.0.8 has no rbp",
    "rbp_residual": "`--compat trec_eval` sets `--rbp-residual-tail if-unjudged`",
    "unjudged@{k}": "trec_eval 10.0 only; `-m unj` alone: 5, 10, 20",
    "dcg@all": "10.0 only", "idcg@all": "10.0 only",
    "bin_g": "gain = grade", "g": "gain = grade", "ndcg_rel": "gain = grade",
    "r_ndcg": "gain = grade",
    "dcg_burges@{k}": "exponential gain whatever `--gain` says",
    "ndcg_burges@{k}": "`ndcg@10 --gain exponential`",
    "judged@{k}": "ir_measures counts a qrels row with a negative grade as judged; rankeval, "
                  "as trec_eval, as pooled but unjudged (compared on qrels without one)",
    "err@{k}": "gdeval's, grades up to 4 (`--err-max-grade`)",
    "compat": "Clarke et al.'s compatibility (`p=`, `normalize=`)",
    "rbp(rel=1)": "cwl_eval's (binary); a bare `RBP` is graded in ir_measures, which none of "
                  "its default providers computes",
    "coverage@{k}": "RecBole: over all items plus its padding id (`--catalog-padding 1`); "
                    "Recommenders: over the training items",
}


def _cell(p) -> str:
    name = f"`{p.name.replace('{k}', '10')}`"
    return name if p.status == EQUAL else f"{name} ({p.status})"


def peers_markdown(tools: tuple[str, ...]) -> str:
    """The mapping table of ``tools`` (docs/trec-eval.md, docs/recommenders.md) from
    ``foreign_names.PEER_TABLE``: a row per rankeval metric, a column per tool (its preset
    named in the header), each name marked where it is not tested equal; 10 stands for any
    cut-off."""
    rows: dict[str, list] = {}
    for p in PEER_TABLE:
        if p.tool in tools:
            rows.setdefault(p.ours, []).append(p)
    lines = ["| rankeval | " + " | ".join(f"{TOOLS[t].title} (`--compat {TOOLS[t].preset}`)"
                                          for t in tools) + " | notes |",
             "|---|" + "---|" * len(tools) + "---|"]
    for ours, peers in rows.items():
        cells = [", ".join(_cell(p) for p in peers if p.tool == t) or "—" for t in tools]
        notes = [_OURS_NOTES[ours]] if ours in _OURS_NOTES else []
        for p in peers:
            said = p.note if len(tools) == 1 else f"{p.tool}: {p.note}"
            if p.note and said not in notes:
                notes.append(said)
        lines.append(f"| `{ours.replace('{k}', '10')}` | " + " | ".join(cells) + " | "
                     + "; ".join(notes) + " |")
    return "\n".join(lines) + "\n"


# The docs' generated tables: (page under docs/, marker, what writes it). `make docs` writes
# each between its page's `<!-- marker:start` and `<!-- marker:end -->` lines;
# tests/test_docs.py checks each page holds what its function writes now.
# What an example command line adds for each input a metric needs (registry ``needs``)
_EXAMPLE_INPUT = {"interactions": "--train train.csv", "catalog": "--catalog items.csv",
                  "item_features": "--item-features features.csv",
                  "item_groups": "--item-groups groups.csv",
                  "propensity": "--propensity propensity.csv",
                  "subtopics": ""}  # the truth's subtopic column: nothing to add


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _peers(m) -> dict[str, list[str]]:
    """Other tools' names for metric ``m``, by tool (only the tools that have one)."""
    ir = [f"{n}@K" + (f" ({n}: the whole list)" if spec.whole else "") if m.cutoff else n
          for n, spec in NAMES.items() if spec.ours == m.name]
    found = {"trec_eval": trec_eval_names(m.name), "ir_measures": ir,
             **{tool: names[m.name] for tool, names in PEERS.items() if m.name in names}}
    return {tool: names for tool, names in found.items() if names}


def explain(registry, name: str) -> dict[str, Any]:
    """Everything ``rankeval metrics NAME`` says about one metric (canonical ``name``): its
    definition, parameters, the conventions that change it (its own, and those of every
    list), other tools' names for it and an example command line."""
    m = registry[name]
    own = [s for s in TABLE if name in s.changed]
    every = [s for s in TABLE if not s.changed and not s.own_measures]
    needs = " ".join(x for x in (_EXAMPLE_INPUT[n] for n in sorted(m.needs)) if x)
    at = "@10" if m.cutoff else "@0.5" if m.levels else ""
    return {
        "name": m.name,
        "aliases": list(m.aliases),
        "summary": m.summary,
        "formula": m.formula,
        "takes": takes(m),
        "params": {p: PARAMS[p].help for p in params(m)},
        "range": "[0, 1]" if m.bounded else "any number" if m.signed else ">= 0",
        "overall": m.overall,
        "undefined_when": m.undefined_when or None,
        "ties_expected": m.tie_expectation,
        "conventions": {_flag(s.name): _default(s) for s in own},
        "conventions_of_every_list": [_flag(s.name) for s in every],
        "peers": _peers(m),
        "example": f"rankeval score preds.csv truth.csv -m {m.name}{at}"
                   + (f" {needs}" if needs else ""),
    }


def _default(row) -> str:
    """A settings row's values and default, as ``rankeval metrics NAME`` lists them."""
    values = "|".join(row.choices) if row.choices else (row.metavar or "on/off")
    return f"{values} (default {_preset_value(row.default)})"


def explain_preference(name: str) -> dict[str, Any]:
    """``explain`` for one of trec_eval's prefs_* measures (``--preferences``), which the
    registry does not hold: the same keys."""
    counted = name.startswith("prefs_num_")
    return {
        "name": name,
        "aliases": [],
        "summary": PREFERENCE_DEFINITIONS[name],
        "formula": "counted on the preferences of each user's judgment groups (trec_eval -R "
                   "prefs, or qrels read as preferences: -R qrels_prefs)",
        "takes": "nothing (the whole list, cut at --max-depth)",
        "params": {},
        "range": ">= 0" if counted else "[0, 1]",
        "overall": "sum" if counted else "mean",
        "undefined_when": None,
        "ties_expected": False,
        "conventions": {"--preferences": "required (the truth read as preferences)"},
        "conventions_of_every_list": [_flag(s) for s in PREFERENCE_CONVENTIONS],
        "peers": {"trec_eval": [name]},
        "example": f"rankeval score run.trec prefs.txt --preferences -m {name} -f trec",
    }


def explain_text(info: dict[str, Any], width: int) -> str:
    """``explain``'s dictionary as wrapped lines, a label and its text each."""
    lines = [("metric", info["name"] + (f" ({', '.join(info['aliases'])})"
                                         if info["aliases"] else "")),
             ("definition", info["summary"]), ("per user", info["formula"]),
             ("takes", info["takes"]),
             *((f"{p}=", text) for p, text in info["params"].items()),
             ("values", f"{info['range']}; overall the {info['overall']} over users"),
             *((("undefined when", info["undefined_when"]),) if info["undefined_when"] else ()),
             ("--ties expected", "closed form" if info["ties_expected"]
              else "no closed form (refused)"),
             ("changed by", "; ".join(f"{k} {v}" for k, v in info["conventions"].items())
              or "none of its own"),
             ("and by", "the conventions of every list: "
              + ", ".join(info["conventions_of_every_list"])),
             *((("note", info["note"]),) if info.get("note") else ()),
             *((f"{tool}", ", ".join(names)) for tool, names in info["peers"].items()),
             ("example", info["example"])]
    pad = max(len(label) for label, _ in lines) + 2
    return "\n".join(fill(text, max(width, pad + 20), initial_indent=f"{label}:".ljust(pad),
                          subsequent_indent=" " * pad, break_long_words=False,
                          break_on_hyphens=False)
                     for label, text in lines) + "\n"
