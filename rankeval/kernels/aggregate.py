"""From per-user values to overall values: exact sums that merge across partitions of users.

A mean must not depend on how users were split (across threads, files or Spark partitions).
``exact_parts`` turns an array into a few floats whose exact sum is the exact sum of the
array (Rump, Ogita and Oishi's error-free extraction, vectorized); partial sums merge by
concatenating their parts, and ``mean`` rounds once, with ``math.fsum``, at the end.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from rankeval.registry import GEOMETRIC, REGISTRY, SUM

_MAX_PASSES = 64  # each pass takes ~30 bits; float64 spans ~2100 bits of exponent


def exact_parts(values: np.ndarray) -> tuple[float, ...]:
    """Floats whose exact (unrounded) sum equals the exact sum of ``values``.

    Each pass splits every value into a high part, a multiple of a power of two chosen so
    that the high parts sum exactly in floating point whatever the order, and an exact
    remainder that the next pass takes; typically two or three passes.
    """
    p = np.asarray(values, dtype=np.float64)
    n = len(p)
    if n == 0:
        return ()
    if not np.isfinite(p).all():
        return (float(np.sum(p)),)
    m = math.ceil(math.log2(n + 2))
    parts: list[float] = []
    p = p.copy()  # the remainders, updated in place
    high = np.empty_like(p)
    for _ in range(_MAX_PASSES):
        mu = float(np.max(np.abs(p)))
        if mu == 0.0:
            return tuple(parts)
        exponent = m + math.frexp(mu)[1]  # 2^exponent >= 2^m * mu
        if exponent >= 1024:  # sigma would overflow: keep the values themselves (exact)
            return (*parts, *p[p != 0].tolist())
        sigma = math.ldexp(1.0, exponent)
        np.add(p, sigma, out=high)
        high -= sigma
        parts.append(float(high.sum()))
        p -= high
    return (*parts, *p[p != 0].tolist())


def mean(parts: Iterable[float], n: int) -> float:
    """The mean over ``n`` users from the exact parts of their sum, correctly rounded, even
    where the sum itself would overflow; NaN (undefined, SPEC section 9) when n is 0."""
    if not n:
        return math.nan
    parts = list(parts)
    try:
        return math.fsum(parts) / n
    except OverflowError:  # the sum passes 2^1024 though every value and the mean do not
        return float(sum(map(Fraction, parts), Fraction(0)) / n)


def overall(spec, parts: Iterable[float], n: int) -> float:
    """A metric's overall value from the exact parts of the sum of its per-user values."""
    how = REGISTRY[spec.name].overall
    if how == SUM:
        return math.fsum(parts)
    if how == GEOMETRIC:
        return math.exp(mean(parts, n))  # exp(NaN): undefined stays undefined
    return mean(parts, n)
