"""The command line's value types: each checks its value when the option is read, before any
work, and says in ``--help`` what it takes (a range, an engine name, cut-offs, a settings
row's value); and the bounds of the count options."""

from __future__ import annotations

import math
from typing import Any

import click

from rankeval.engines import ENGINES
from rankeval.names import parse_ks


class EngineChoice(click.ParamType):
    """An engine name, checked against the registry when the option is read (an engine
    registered after import is a choice too)."""

    name = "engine"

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(ENGINES) + "]"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.lower() in ENGINES:
            return value.lower()
        self.fail(f"{value!r} is not one of {', '.join(map(repr, ENGINES))}", param, ctx)


def numeric(param: click.Parameter) -> bool:
    """Whether an option takes a number: its type is one, or says so (-k's cut-offs, the
    settings table's numbers)."""
    return isinstance(param.type, click.types.IntParamType | click.types.FloatParamType) or (
        getattr(param.type, "numeric", False))


# The upper bounds of the count options: past any real use, and low enough that no value an
# option accepts makes a command run for hours, exhaust memory or overflow.
MAX_SEED = 2**63 - 1  # what every random generator in use (numpy, Java's) takes
MAX_USERS_SHOWN = 1_000_000  # --top-changes: the per-user file holds them all


class FiniteRange(click.FloatRange):
    """A float in a range, never NaN (which no comparison refuses) nor infinite."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False, integer: bool = False) -> click.ParamType:
    """The click type of a numeric option: the range is checked when the option is read,
    before any work, and ``--help`` shows it."""
    if integer:
        return click.IntRange(None if low is None else int(low),
                              None if high is None else int(high),
                              min_open=low_open, max_open=high_open)
    return FiniteRange(low, high, min_open=low_open, max_open=high_open)


class Cutoffs(click.ParamType):
    """-k's cut-offs (``5``, ``5,10``, ``1..20``, ``10..100:10``), checked when read (each K
    at most ``names.MAX_K``) and kept as written, for ``parse_ks``."""

    name = "cut-offs"
    numeric = True

    def convert(self, value, param, ctx):
        parse_ks([str(value)])  # an OptionError, in the words the library uses
        return value


CUTOFFS = Cutoffs()


class RowValue(click.ParamType):
    """A free value of a settings row (a number, the gains' GRADE=GAIN pairs), converted and
    checked by the row's own parser when the option is read (before any work): the table
    says what a value may be, for the command line and config files alike."""

    def __init__(self, row) -> None:
        self.row = row
        self.name = row.metavar or "value"
        self.numeric = getattr(row.parse, "span", None) is not None  # a number in a range

    def convert(self, value: Any, param, ctx) -> Any:
        return self.row.check(value)  # an OptionError naming the option: one line, exit 2

    def __repr__(self) -> str:
        return f"setting {self.row.name}"
