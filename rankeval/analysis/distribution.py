"""The distribution of a metric over users (``--stats``): percentiles, spread, the share of
users at 0."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from rankeval.errors import OptionError

# What with_stats gives when named without values: the mean and the shape of the distribution.
STATS = ("mean", "median", "p10", "p90", "std", "zeros")


def parse_stats(stats: str | Iterable[str]) -> tuple[str, ...]:
    """``"mean,median,p90"`` or a list of names -> the names, checked, in the order given."""
    words = stats.split(",") if isinstance(stats, str) else [w for x in stats
                                                              for w in str(x).split(",")]
    names = tuple(dict.fromkeys(w.strip().lower() for w in words if w.strip()))
    for name in names:
        if name in ("mean", "median", "std", "min", "max", "zeros"):
            continue
        if name.startswith("p") and name[1:].isdigit() and 0 <= int(name[1:]) <= 100:
            continue
        raise OptionError(f"{{option}}: unknown statistic {name!r} (known: mean, median, "
                          "p0..p100, std, min, max, zeros)", "stats")
    if not names:
        raise OptionError("{option} needs at least one statistic", "stats")
    return names


def describe(v: np.ndarray, name: str) -> float:
    """One statistic of per-user values (NaN, undefined, for no users)."""
    if not len(v):
        return math.nan
    if name == "mean":
        return float(math.fsum(v) / len(v))
    if name == "std":
        return float(np.std(v, ddof=1)) if len(v) > 1 else 0.0
    if name == "zeros":
        return float(np.count_nonzero(v == 0) / len(v))
    if name in ("min", "max"):
        return float(getattr(np, name)(v))
    q = 50 if name == "median" else int(name[1:])
    return float(np.percentile(v, q))
