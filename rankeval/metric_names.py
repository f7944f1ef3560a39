"""Metric names: ``name[@K]`` parsed into ``MetricSpec``, expanded over the cut-offs of ``--k``."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import OptionError
from .registry import LOOKUP, REGISTRY

_NAME_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:@\s*([^\s]*))?\s*$")


@dataclass(frozen=True, order=True)
class MetricSpec:
    """One metric at one cut-off; ``str(spec)`` is the canonical name, e.g. ``ndcg@10``."""

    name: str
    k: int

    def __str__(self) -> str:
        return f"{self.name}@{self.k}"


def parse_k(text: str) -> int:
    """One cut-off: a positive integer."""
    word = text.strip()
    if not re.fullmatch(r"[0-9]+", word) or int(word) < 1:
        raise OptionError(f"K must be a positive integer, got {text!r}")
    return int(word)


def parse_ks(values: Iterable[str]) -> list[int]:
    """``--k`` values, each one K or a comma list (``5,10,20``): sorted, without repeats."""
    ks = {parse_k(part) for value in values for part in str(value).split(",") if part.strip()}
    if not ks:
        raise OptionError("--k needs at least one positive integer")
    return sorted(ks)


def suggest(word: str) -> str:
    """A 'did you mean' hint for an unknown metric name, or the list of known names."""
    close = difflib.get_close_matches(word.lower(), list(LOOKUP), n=3, cutoff=0.6)
    names = sorted({LOOKUP[c] for c in close}, key=list(REGISTRY).index)
    if names:
        return "did you mean " + " or ".join(repr(n) for n in names) + "?"
    return "known metrics: " + ", ".join(REGISTRY) + " (see 'rankeval metrics')"


def parse(text: str) -> tuple[str, int | None]:
    """``'nDCG@10'`` -> ``('ndcg', 10)``; ``'p'`` -> ``('precision', None)``."""
    match = _NAME_RE.match(text)
    if not match:
        raise OptionError(f"cannot read metric {text!r}: expected a name such as ndcg or ndcg@10")
    word, k = match.group(1), match.group(2)
    name = LOOKUP.get(word.lower())
    if name is None:
        raise OptionError(f"unknown metric {word!r}: {suggest(word)}")
    if k is None:
        return name, None
    try:
        return name, parse_k(k)
    except OptionError:
        raise OptionError(f"metric {text.strip()!r}: K must be a positive integer") from None


def expand(texts: Iterable[str], ks: Iterable[int]) -> list[MetricSpec]:
    """Metric words (each may be a comma list) -> specs; a name without ``@K`` takes every K.

    Order follows first mention, then K ascending; repeats are dropped.
    """
    ks = sorted(set(ks))
    specs: dict[MetricSpec, None] = {}
    for text in texts:
        for part in str(text).split(","):
            if not part.strip():
                continue
            name, k = parse(part)
            for kk in [k] if k is not None else ks:
                specs[MetricSpec(name, kk)] = None
    if not specs:
        raise OptionError("no metrics selected")
    return list(specs)
