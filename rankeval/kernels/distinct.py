"""Distinct values by sorting (numpy only, usable by kernels).

numpy 2.4's np.unique hashes integers and is 10-40x slower than one sort on millions of
values, sorted or not, and it imports numpy.ma (10 ms of every run); these helpers are its
uses in rankeval, done by sorting.
"""

from __future__ import annotations

import numpy as np


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


def _starts(ordered: np.ndarray) -> np.ndarray:
    return np.concatenate(([True], ordered[1:] != ordered[:-1]))
