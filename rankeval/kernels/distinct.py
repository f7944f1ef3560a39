"""Distinct values by sorting (numpy only, usable by kernels).

numpy 2.4's np.unique hashes integers and is 10-40x slower than one sort on millions of
values, sorted or not, and it imports numpy.ma (10 ms of every run); these helpers are its
uses in rankeval, done by sorting.
"""

from __future__ import annotations

import numpy as np

from rankeval.kernels.threads import each, halves


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


def with_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, each value's index among them)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = _starts(ordered) if len(values) else np.zeros(0, dtype=bool)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def dense_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values as int64, each value's int32 index among them) of integers.

    ``values`` is used up: when it is int32 its memory is overwritten with the codes, so the
    column costs one int32 per row. Values spanning a range not much larger than their count
    (catalog and user ids usually do) are found by direct addressing (a flag and a code per
    value of the range: at most about 3x the values' own memory, plus 64 MiB), else by one
    sort."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if 5 * span > 16 * len(values) + (64 << 20):  # the span's flags and codes: 5 bytes each
        found = distinct(values)
        return found.astype(np.int64), np.searchsorted(found, values).astype(np.int32)
    values -= values.dtype.type(low)  # offsets into the span, in place
    present = np.zeros(span, dtype=bool)
    present[values] = True
    found = np.flatnonzero(present) + low
    code = np.cumsum(present, dtype=np.int32) - 1
    del present
    # Random reads across the span: two threads keep twice as many cache misses in flight.
    each(lambda ab: _gather_in_place(code, values, *ab), halves(len(values)))
    return found.astype(np.int64), values if values.dtype == np.int32 else values.astype(np.int32)


def _gather_in_place(code: np.ndarray, values: np.ndarray, start: int, stop: int) -> None:
    """``values[start:stop] = code[values[start:stop]]``, a cache-sized block at a time."""
    step = 1 << 16
    for a in range(start, stop, step):
        block = values[a : min(a + step, stop)]
        block[...] = code[block]


def _starts(ordered: np.ndarray) -> np.ndarray:
    return np.concatenate(([True], ordered[1:] != ordered[:-1]))
