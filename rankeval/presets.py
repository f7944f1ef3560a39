"""The ``--compat`` presets (``PRESETS``, a row per tool whose numbers rankeval reproduces)
and the row type of the conventions table (``Setting``), with the parsers its free values use.

``conventions.TABLE`` holds the rows; this module holds what a row is and how a preset reads
its column of them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankeval.errors import OptionError, name_options

UNSET: Any = object()
_AS_TEN: Any = object()  # trec_eval 9.0.8's value is 10.0's


def file_path(name: str) -> Callable[[Any], Any]:
    """A parser of a file's path, for a row whose value names a file (which the engine
    reads); its ``text`` says the value is text, not a number."""

    def parse(value: Any) -> Any:
        if not isinstance(value, str | os.PathLike) or not os.fspath(value):
            raise OptionError(f"{{option}} takes a file's path, got {value!r}", name)
        return os.fspath(value)
    parse.text = True  # type: ignore[attr-defined]
    return parse


def number_in(name: str, low: float, high: float, low_open: bool, high_open: bool,
            integer: bool = False) -> Callable[[Any], Any]:
    """A parser of a number in an interval, for a row of the table (its ``span`` says the
    interval, for ``--help``)."""
    lo, hi = "(" if low_open else "[", ")" if high_open else "]"
    span = f"{lo}{low:g}, {high:g}{hi}" if math.isfinite(high) else f">= {low:g}"

    def parse(value: Any) -> Any:
        try:
            x = float(value)
        except (TypeError, ValueError):
            x = math.nan
        ok = (x > low if low_open else x >= low) and (x < high if high_open else x <= high)
        if integer and ok:
            ok = x == int(x)
        if not ok:
            what = "a whole number" if integer else "a number"
            raise OptionError(f"{{option}} must be {what} in {span}, got {value!r}", name)
        return int(x) if integer else x
    parse.span = span  # type: ignore[attr-defined]
    parse.integer = integer  # type: ignore[attr-defined]
    return parse


def relevance_threshold(value: Any) -> float | None:
    if value is None:
        return None
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise OptionError(f"{{option}} must be a number, got {value!r}",
                          "relevance_threshold") from None
    if not math.isfinite(t) or t < 0:
        raise OptionError(
            "{option} must be a number >= 0 (0: every judged item is relevant, grade 0 "
            "included, and an item missing from the truth never is; a negative grade marks "
            f"an item unjudged), got {t:g}",
            "relevance_threshold",
        )
    return t


@dataclass(frozen=True)
class Preset:
    """One ``--compat`` preset: the tool whose numbers it reproduces, as data. Every rule a
    preset sets is a field here or a column of ``TABLE`` (``column``), read through
    ``PRESETS``; no code compares a preset's name."""

    name: str
    tool: str  # the tool and version it reproduces, for --help and the docs
    column: str  # the ``Setting`` field holding this preset's value of each convention
    like: str | None  # the preset whose values it takes where ``column`` says _AS_TEN
    trec_measures: bool  # -m words are trec_eval measures (P.5,10, ndcg_cut.10, all_trec)
    ir_measures_names: bool  # -m words are ir_measures' strings (nDCG@10, P(rel=2)@5)
    trec_output: bool  # -f trec prints trec_eval's names, order and -nan lines
    # Where an item listed twice for one user is refused (DUPLICATES): everywhere, or only
    # where the tool looks (trec_eval checks the lists it evaluates, within -M, and the
    # judgements of the queries it evaluates: 10.0 every one, 9.0.8 those with a list).
    duplicates: str = "all"
    comments: bool = True  # a TREC file's '#' lines are comments (trec_eval 10.0), else refused
    # The order in which the intent-aware metrics add an item's subtopic gains, which decides
    # near-ties of the greedy ideal ranking in floating point (kernels/diversity.py): by
    # subtopic number (ndeval), or in the order the truth first names each subtopic (pyndeval,
    # which ir_measures runs, numbers them so).
    subtopic_order: str = "number"
    # The order of the users (queries) in every report: by number when every id is an integer
    # written plainly (1, 2, 10, as people read them), or by their bytes (trec_eval sorts its
    # queries with strcmp: 1000 before 301, and prints -q's lines so)
    user_order: str = "number"
    # A user of the truth missing from the run, scored when missing users are not skipped
    # (trec_eval -c), is evaluated (10.0 scores a made-up ranking: its values are z-scored,
    # -Z) or only counted (9.0.8 adds nothing to its sums: -Z's summary adds the values as
    # they are, 0, and gm_map's log of 0.00001)
    evaluates_missing: bool = True


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("trec_eval", "trec_eval 10.0", "trec_eval", None, True, False, True,
           duplicates="evaluated", user_order="bytes"),
    Preset("trec_eval-9", "trec_eval 9.0.8 (and pytrec_eval)", "trec_eval_9", "trec_eval",
           True, False, True, duplicates="listed", comments=False, user_order="bytes",
           evaluates_missing=False),
    Preset("ir_measures", "ir_measures 0.4 (its default providers)", "ir_measures", None,
           False, True, False, subtopic_order="appearance"),
    Preset("ranx", "ranx 0.3", "ranx", None, False, False, False),
    Preset("recbole", "RecBole 1.2 (its evaluator's metrics)", "recbole", None,
           False, False, False),
    Preset("recommenders", "Microsoft Recommenders 1.2 (python_evaluation)", "recommenders",
           None, False, False, False),
)}


def preset_of(compat: str | None) -> Preset | None:
    """The row of ``compat`` (None: no preset)."""
    return None if compat is None else PRESETS[compat]


@dataclass(frozen=True)
class Setting:
    """One convention: a row of the settings table."""

    name: str
    help: str
    default: Any
    choices: tuple[str, ...] | None = None  # None: a flag (bool) or a free value (``parse``)
    trec_eval: Any = UNSET  # the value under --compat trec_eval; UNSET: not trec_eval's concern
    trec_eval_9: Any = _AS_TEN  # under --compat trec_eval-9, where 9.0.8 differs from 10.0
    ir_measures: Any = UNSET  # under --compat ir_measures; UNSET: rankeval's default
    ranx: Any = UNSET  # under --compat ranx
    recbole: Any = UNSET  # under --compat recbole
    recommenders: Any = UNSET  # under --compat recommenders (Microsoft Recommenders)
    comparable: bool = True  # reports computed with different values cannot be compared
    footer: Callable[[Any], str | None] = lambda value: None
    parse: Callable[[Any], Any] | None = None  # converts and checks a free value
    metavar: str | None = None
    applies_to: tuple[str, ...] = ()  # the metrics it changes; () for all (footer only then)
    # The metrics it changes where ``applies_to`` is () for the footer's sake (the gain is
    # named in every footer): ``rankeval metrics NAME`` lists the row under them alone
    changes: tuple[str, ...] = ()
    # Computes measures of its own in place of the registry's (``--preferences``: trec_eval's
    # prefs_*), so it changes no metric of the registry and is no convention of their lists
    own_measures: bool = False

    @property
    def changed(self) -> tuple[str, ...]:
        """The metrics this row changes; () for every metric's lists."""
        return self.applies_to or self.changes

    @property
    def is_flag(self) -> bool:
        return self.choices is None and self.parse is None

    def preset(self, compat: str) -> Any:
        """The value under ``compat`` (a name of ``PRESETS``); UNSET: the preset leaves it.
        The preset's row says which column holds its values, and whose values it takes where
        that column says _AS_TEN."""
        row: Preset | None = PRESETS[compat]
        value: Any = _AS_TEN
        while value is _AS_TEN and row is not None:
            value = getattr(self, row.column)
            row = PRESETS[row.like] if row.like else None
        return UNSET if value is _AS_TEN else value

    def check(self, value: Any) -> Any:
        """The value as stored, or an OptionError naming the setting."""
        if self.choices is not None:
            word = str(value).lower()
            if word not in self.choices:
                raise OptionError(
                    f"{{option}} must be one of {', '.join(self.choices)}, got {value!r}",
                    self.name,
                )
            return word
        if self.parse is not None:
            return self.parse(value)
        return bool(value)

    def text(self, spell: Callable[[str], str] = str) -> str:
        """The help text naming other options as ``spell`` does: the library's keyword
        (``train``) by default, the command line's flag (``--train``) for ``--help``."""
        return name_options(self.help, spell)

    def describe(self) -> str:
        """The allowed values and default, for ``help(evaluate)``."""
        if self.choices is not None:
            allowed = " | ".join(repr(c) for c in self.choices)
        elif self.is_flag:
            allowed = "True | False"
        else:
            allowed = self.metavar or "value"
        return f"{self.name}: {allowed} (default {self.default!r}). {self.text()}"
