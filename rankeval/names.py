"""The metric-name grammar: ``name[@K]`` parsed into ``MetricSpec``, expanded over the K list."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rankeval import irmeasures, params
from rankeval.errors import OptionError, plural
from rankeval.foreign_names import foreign
from rankeval.registry import CORPUS, LOOKUP, REGISTRY

_NAME_RE = re.compile(r"^\s*([A-Za-z_α][A-Za-z0-9_.:-]*)\s*(?:\((.*)\))?\s*(?:@\s*([^\s]*))?\s*$")


ALL = "all"


@dataclass(frozen=True)
class MetricSpec:
    """One metric at one cut-off; ``str(spec)`` is the canonical name, e.g. ``ndcg@10``.

    ``k`` is None for the whole list (``ndcg@all``) and for metrics without a cut-off
    (``r_precision``, which cuts each list at the user's R). ``level`` is the recall level or
    multiple of a metric measured at levels (``iprec@0.5``), else None.
    """

    name: str
    k: int | None
    level: float | None = None
    # ``name(rel=2)``: parameters of this metric alone (``params.PARAMS``), sorted by name
    params: tuple[tuple[str, bool | int | float | str], ...] = ()

    def __str__(self) -> str:
        if self.level is not None:
            return self.row  # with its level
        if not REGISTRY[self.name].cutoff:
            return self.row
        return f"{self.row}@{ALL if self.k is None else self.k}"

    @property
    def column(self) -> int | str:
        """Where the value goes in a metric x K table: K, ``all``, or ``R``."""
        if self.k is not None:
            return self.k
        return ALL if REGISTRY[self.name].cutoff else REGISTRY[self.name].at

    @property
    def row(self) -> str:
        """The row of a metric x K table: the name with its parameters (``precision(rel=2)``),
        and its level for a level metric."""
        name = self.name
        if self.params:
            name = f"{name}({params.text(self.params)})"
        return name if self.level is None else f"{name}@{format_level(self.level)}"


def format_level(level: float) -> str:
    """``0.5`` -> ``'0.5'``, ``1`` -> ``'1.0'``: always with a point, so that a level never
    reads as a cut-off."""
    text = f"{level:g}"
    return text if any(c in text for c in ".en") else text + ".0"


def parse_level(name: str, text: str) -> float:
    low, high = REGISTRY[name].level_range
    try:
        level = float(text)
    except ValueError:
        level = math.nan
    if not low <= level <= high:
        example = format_level(REGISTRY[name].levels[5])
        raise OptionError(f"metric '{name}@{text}': the level must be a number from "
                          f"{low:g} to {high:g}, e.g. {name}@{example}")
    return level


# The largest cut-off (and list depth): no list is that long, and every count stays exact
MAX_K = 1_000_000_000


def parse_k(text: str) -> int:
    """One cut-off: a positive integer, at most ``MAX_K``."""
    word = text.strip()
    if not re.fullmatch(r"[0-9]+", word) or not 1 <= int(word) <= MAX_K:
        raise OptionError(f"K must be a positive integer up to {MAX_K:,}, got {text!r}", "k")
    return int(word)


def from_name(text: str, ir_measures: bool = False) -> MetricSpec:
    """A canonical or alias name with its K (``'ndcg@10'``, ``'map@all'``, ``'rprec'``,
    ``'precision(rel=2)@10'``); ``ir_measures``: its aliases read as it reads them."""
    name, k, given = parse(text, ir_measures)
    if isinstance(k, float):
        return MetricSpec(name, None, k, given)
    if k is None and REGISTRY[name].levels:
        raise OptionError(f"metric {text!r} needs a level, e.g. {name}@"
                          f"{format_level(REGISTRY[name].levels[5])}")
    if k is None and REGISTRY[name].cutoff:
        raise OptionError(f"metric {text!r} needs a cut-off, e.g. {name}@10")
    return MetricSpec(name, None if k in (None, ALL) else int(k), None, given)



def is_corpus(metric: str) -> bool:
    """Whether a metric has one value per run (nothing per user to pair and test)."""
    return REGISTRY[from_name(metric).name].scope == CORPUS


_RANGE_RE = re.compile(r"^\s*([0-9]+)\s*\.\.\s*([0-9]+)\s*(?::\s*([0-9]+)\s*)?$")
_MAX_KS = 10_000


def parse_k_range(text: str) -> list[int]:
    """``5`` -> [5]; ``1..20`` -> 1, 2, ..., 20; ``10..100:10`` -> 10, 20, ..., 100 (the end
    is included when the step reaches it)."""
    if ".." not in text:
        return [parse_k(text)]
    match = _RANGE_RE.match(text)
    shown = f"{{option}}: the K range {text.strip()!r}"
    if not match:
        raise OptionError(f"{shown} cannot be read: write FIRST..LAST or FIRST..LAST:STEP, "
                          "e.g. 1..20 or 10..100:10", "k")
    first, last, step = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
    if first < 1 or last < first or step < 1 or last > MAX_K:
        raise OptionError(f"{shown} needs 1 <= FIRST <= LAST <= {MAX_K:,} and a STEP >= 1",
                          "k")
    ks = list(range(first, last + 1, step))
    if len(ks) > _MAX_KS:
        raise OptionError(f"{shown} has {plural(len(ks), 'cut-off')} (at most {_MAX_KS:,})", "k")
    return ks


def k_runs(ks: list[int], sep: str = ", ") -> str:
    """Sorted cut-offs with consecutive ones as a range (``1..20``, ``11, 12``), joined by
    ``sep``: the inverse of ``parse_k_range`` for display."""
    parts, start = [], 0
    for i in range(1, len(ks) + 1):
        if i == len(ks) or ks[i] != ks[i - 1] + 1:
            a, b = ks[start], ks[i - 1]
            parts.append(f"{a}" if a == b else f"{a}{sep}{b}" if b == a + 1 else f"{a}..{b}")
            start = i
    return sep.join(parts)


def parse_ks(values: Iterable[str]) -> list[int]:
    """``--k`` values, each one K, a comma list (``5,10,20``) or a range (``1..20``,
    ``10..100:10``): sorted, without repeats."""
    ks = {k for value in values for part in str(value).split(",") if part.strip()
          for k in parse_k_range(part)}
    if not ks:
        raise OptionError("{option} needs at least one positive integer", "k")
    return sorted(ks)


def suggest(word: str) -> str:
    """A 'did you mean' hint for an unknown metric name, or the list of known names."""
    close = difflib.get_close_matches(word.lower(), list(LOOKUP), n=3, cutoff=0.6)
    names = sorted({LOOKUP[c] for c in close}, key=list(REGISTRY).index)
    if names:
        return "did you mean " + " or ".join(repr(n) for n in names) + "?"
    return "known metrics: " + ", ".join(REGISTRY) + " (see 'rankeval metrics')"


def split(text: str) -> list[str]:
    """A comma list of metric names, split at the commas outside parentheses, braces and
    quotes (``'ndcg(gains={1:1,2:3})@10,map'`` is two names)."""
    parts, depth, start, quote = [], 0, 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
            continue
        if ch in "'\"":
            quote = ch
        depth += (ch in "({[") - (ch in ")}]")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def parse(text: str, ir_measures: bool = False
          ) -> tuple[str, int | float | str | None, tuple]:
    """``'nDCG@10'`` -> ``('ndcg', 10, ())``; ``'map@all'`` -> ``('map', 'all', ())``;
    ``'p'`` -> ``('precision', None, ())``; ``'iprec@0.5'`` -> ``('iprec', 0.5, ())``;
    ``'P(rel=2)@10'`` -> ``('precision', 10, (('rel', 2),))``. ir_measures' spellings read as
    it does (``AP`` is ``map@all``); ``ir_measures``: its aliases too (``MAP``)."""
    match = _NAME_RE.match(text)
    if not match:
        raise OptionError(f"cannot read metric {text!r}: expected a name such as ndcg, "
                          "ndcg@10 or P(rel=2)@10")
    word, ptext, k = match.group(1), match.group(2), match.group(3)
    shown = f"metric {text.strip()!r}"
    pairs = params.literal(shown, ptext) if ptext is not None else []
    level = irmeasures.LEVELS.get(word)
    if level is not None and k is None and level in dict(pairs):  # IPrec(recall=0.5)
        k = repr(float(dict(pairs)[level]))
        pairs = [(n, v) for n, v in pairs if n != level]
    whole = False
    irm = irmeasures.read(word, pairs, ir_measures, k)
    if irm is not None:
        word, pairs, whole = irm
    name = LOOKUP.get(word.lower())
    if name is None:
        hint = foreign(text.strip()) or foreign(word)
        raise OptionError(f"unknown metric {word!r}: {hint or suggest(word)}")
    checked = params.check(name, pairs, shown)
    if k is None:
        return name, ALL if whole and REGISTRY[name].cutoff else None, checked
    if REGISTRY[name].levels:
        return name, parse_level(name, k), checked
    if not REGISTRY[name].cutoff:
        whole_list = "it cuts at R" if REGISTRY[name].at == "R" else "it takes the whole list"
        raise OptionError(f"{shown}: {name} takes no cut-off ({whole_list})")
    if k.lower() == ALL:
        return name, ALL, checked
    try:
        return name, parse_k(k), checked
    except OptionError:
        raise OptionError(f"{shown}: K must be a positive integer or 'all'") from None


def expand(texts: Iterable[str], ks: Iterable[int], ir_measures: bool = False
           ) -> list[MetricSpec]:
    """Metric words (each may be a comma list) -> specs; a name without ``@K`` takes every K
    (an ir_measures spelling: its own meaning, ``AP`` is ``map@all``).

    Order follows first mention, then K ascending; repeats are dropped. ``name@all`` and
    metrics without a cut-off give one spec with ``k=None``.
    """
    ks = sorted(set(ks))
    specs: dict[MetricSpec, None] = {}
    for text in texts:
        for part in split(str(text)):
            name, k, given = parse(part, ir_measures)
            if REGISTRY[name].levels:
                for level in [k] if isinstance(k, float) else REGISTRY[name].levels:
                    specs[MetricSpec(name, None, level, given)] = None
                continue
            if not REGISTRY[name].cutoff or k == ALL:
                specs[MetricSpec(name, None, None, given)] = None
                continue
            assert k is None or isinstance(k, int)  # levels and "all" are handled above
            for kk in [k] if k is not None else ks:
                specs[MetricSpec(name, kk, None, given)] = None
    if not specs:
        raise OptionError("no metrics selected")
    return list(specs)
