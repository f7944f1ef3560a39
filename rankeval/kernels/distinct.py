"""Distinct values by sorting (numpy only, usable by kernels).

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
