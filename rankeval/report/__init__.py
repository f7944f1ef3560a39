"""Reports, one module per format, and the registry the command line derives its choices from.

A format is a row of ``FORMATS``: its module (``render(ev)``, and ``render_compare(result)``,
``render_power(result)`` for the other commands that offer it) and the commands that offer
it. A new format is a module plus a row.
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


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("table", "table", ("score", "compare", "validate", "power"),
               "a table for people"),
        Format("json", "json", ("score", "compare", "validate", "power"),
               "every number, for programs"),
        Format("csv", "csv", ("score", "compare", "power"), "one row per metric, full precision"),
        Format("markdown", "markdown", ("score", "compare", "power"), "for pull requests"),
        Format("trec", "trec", ("score",), "trec_eval's 'measure user value' lines"),
        Format("html", "html", ("score", "compare", "power"),
               "one static page with charts (rankeval[report])"),
    )
}


def choices(command: str) -> list[str]:
    """The report formats ``command`` offers."""
    return [f.name for f in FORMATS.values() if command in f.commands]


def module(name: str):
    """The report module of a format."""
    return importlib.import_module(f"{__name__}.{FORMATS[name].module}")
