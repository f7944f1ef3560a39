"""Distinct values by sorting, and whether any value repeats by hashing (numpy only, usable
by kernels).

numpy 2.4's np.unique hashes integers and is 10-40x slower than one sort on millions of
values, sorted or not, and it imports numpy.ma (10 ms of every run); these helpers are its
uses in rankeval, done by sorting.
"""

from __future__ import annotations

import numpy as np

# Codes that come in runs of this many rows or more on average are marked run by run
_RUN_ROWS = 4


def present(codes: np.ndarray, n: int) -> np.ndarray:
    """Which of the codes 0..n-1 occur in ``codes``. Codes in long runs (a file's users,
    each one's rows together) are marked by each run's first row alone: 10M user codes in
    runs of 26, 35 -> 12 ms; others row by row."""
    out = np.zeros(n, dtype=bool)
    if len(codes) > 1:
        changes = codes[1:] != codes[:-1]
        if (int(np.count_nonzero(changes)) + 1) * _RUN_ROWS <= len(codes):
            out[codes[0]] = True
            out[codes[1:][changes]] = True
            return out
    out[codes] = True
    return out


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values."""
    ordered = np.sort(values)
    return ordered[_starts(ordered)] if len(ordered) else ordered


def count_distinct(values: np.ndarray) -> int:
    """How many distinct values (one pass when they are sorted, as user codes mostly are)."""
    if len(values) < 2:
        return len(values)
    if not (values[1:] >= values[:-1]).all():
        values = np.sort(values)
    return 1 + int(np.count_nonzero(values[1:] != values[:-1]))


def first_index(values: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each distinct value, in value order."""
    order = np.argsort(values, kind="stable")
    return order[_starts(values[order])] if len(values) else order


# Fibonacci hashing: the top bits of the product with 2^64 / phi (odd) spread any keys,
# consecutive ones included, over the table
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def any_repeated(keys: np.ndarray) -> bool:
    """Whether any value of the int64 ``keys`` occurs twice. Each key's place is written into
    a table at its hash (some one of the keys that share a slot is left there), then read
    back: a key that finds another place holding the same key repeats; a key that finds a
    different key holds it with those that lost the same slot, and only those (a few in a
    table twice the keys' size) are sorted. Exact: two equal keys share their slot, so either
    one of them holds it and the other finds it, or both lost it and meet in the sort.
    131k keys (a block of a run's lists): 3.3 -> 1.6 ms, against one stable sort."""
    n = len(keys)
    if n < 2:
        return False
    bits = max(int(2 * n - 1).bit_length(), 10)
    keys = keys.astype(np.int64, copy=False)
    slot = keys.view(np.uint64) * _GOLDEN  # wraps, as multiplicative hashing does
    slot >>= np.uint64(64 - bits)
    at = slot.astype(np.intp)
    del slot
    place = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    table = np.empty(1 << bits, dtype=place.dtype)
    table[at] = place  # each slot holds one of its keys' places
    holder = table[at]
    lost = np.flatnonzero(holder != place)
    if not len(lost):
        return False
    contested = keys[lost]
    if (keys[holder[lost]] == contested).any():
        return True
    contested.sort()
    return bool((contested[1:] == contested[:-1]).any())


def with_inverse(values: np.ndarray, runs: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, each value's index among them). The answer is the same
    whatever the sort; ``runs``: the values come in sorted runs, which a merge sort finds
    (two sorted dictionaries end to end); else numpy's quicksort, 15% faster on values in
    no order (256 groups of 32k: 0.62 -> 0.53 s)."""
    order = np.argsort(values, kind="stable" if runs else "quicksort")
    ordered = values[order]
    starts = _starts(ordered) if len(values) else np.zeros(0, dtype=bool)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def _starts(ordered: np.ndarray) -> np.ndarray:
    return np.concatenate(([True], ordered[1:] != ordered[:-1]))
