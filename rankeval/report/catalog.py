"""The metric registry as ``rankeval metrics`` shows it: the rows every format renders (what
follows the @, whether ``--ties expected`` has a closed form) and the JSON records."""

from __future__ import annotations

from typing import Any

from rankeval.conventions import PRESETS, TABLE, UNSET
from rankeval.params import PARAMS

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
