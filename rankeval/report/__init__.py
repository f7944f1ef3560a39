"""Reports, one module per format, and the registry every command's ``-f`` derives from.

A format is a row of ``FORMATS``: its module and the commands that offer it. The module
renders each command's result with the function ``RENDERERS`` names (``render(ev)`` for score,
``render_compare(result)``, ``render_power(result)``, ``render_validation(result, strict)``,
``render_metrics(registry)``); a format drawn on a console (the table) takes the console as
its second argument. A new format is a module plus a row.

What a command's report says, whatever its format, is its list of sections: ``MODELS`` names
the module and function that make them, so that a format imports only the model of the
result it is given (a score run never loads the off-policy or interleaving reports).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def visible(text: object) -> str:
    """Text from data (ids, names, paths) with control characters shown as escapes, so that
    an id holding an ANSI sequence or a newline cannot act on a terminal or break a layout."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), str(text))


@dataclass(frozen=True)
class Format:
    name: str
    module: str
    commands: tuple[str, ...]
    help: str
    console: bool = False  # drawn on a console (colour on a terminal, plain text in a file)
    per_query: bool = False  # adds per-user lines (score --per-query)
    # needs the optional dependencies its module's check_available() checks
    optional: bool = False


# command -> the function each format's module renders its result with
RENDERERS = {"score": "render", "compare": "render_compare", "power": "render_power",
             "validate": "render_validation", "metrics": "render_metrics",
             "ope": "render_ope", "sampled": "render_sampled", "agree": "render_agree",
             "interleave": "render_interleave"}


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("table", "table", ("score", "compare", "validate", "power", "metrics", "ope",
                           "sampled", "agree", "interleave"),
               "a table for people", console=True),
        Format("json", "json", ("score", "compare", "validate", "power", "metrics", "ope",
                           "sampled", "agree", "interleave"),
               "every number, for programs"),
        Format("csv", "csv", ("score", "compare", "power", "ope", "sampled", "agree", "interleave"),
               "one row per metric, full precision"),
        Format("markdown", "markdown", ("score", "compare", "power", "metrics", "ope",
                                 "sampled", "agree", "interleave"),
               "for pull requests"),
        Format("trec", "trec", ("score",), "trec_eval's 'measure user value' lines",
               per_query=True),
        Format("ir_measures", "ir_measures", ("score",),
               "ir_measures' 'measure value' lines, its names", per_query=True),
        Format("html", "html", ("score", "compare", "power", "ope", "sampled",
                                 "interleave", "agree"),
               "one static page with charts (rankeval[report])", optional=True),
    )
}


@dataclass(frozen=True)
class Model:
    """Where a command's sections are made (``report.<module>.<function>(result)``)."""

    module: str
    function: str
    verdict_last: bool  # in a terminal the gates' verdict is read last


MODELS: dict[str, Model] = {
    "score": Model("sections", "score", verdict_last=True),
    "compare": Model("sections", "compare", verdict_last=True),
    "power": Model("sections", "power", verdict_last=False),
    "ope": Model("offpolicy", "sections", verdict_last=True),
    "sampled": Model("sampled", "sections", verdict_last=False),
    "agree": Model("agreement", "sections", verdict_last=False),
    "interleave": Model("interleaving", "sections", verdict_last=True),
}


def model(command: str):
    """The module that makes ``command``'s sections (its row of ``MODELS``)."""
    return importlib.import_module(f"{__name__}.{MODELS[command].module}")


def parts(command: str, result) -> list:
    """``command``'s result as sections (``report.blocks.Section``), from its model."""
    return getattr(model(command), MODELS[command].function)(result)


def choices(command: str) -> list[str]:
    """The report formats ``command`` offers."""
    return [f.name for f in FORMATS.values() if command in f.commands]


def module(name: str):
    """The report module of a format."""
    return importlib.import_module(f"{__name__}.{FORMATS[name].module}")


def renderer(name: str, command: str):
    """The function format ``name`` renders ``command``'s result with."""
    return getattr(module(name), RENDERERS[command])


def check_available(name: str) -> None:
    """Before reading anything: the optional dependencies of format ``name`` are installed."""
    if FORMATS[name].optional:
        module(name).check_available()
