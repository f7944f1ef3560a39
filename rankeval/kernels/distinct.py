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
    return ordered[run_starts(ordered)] if len(ordered) else ordered


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
    return order[run_starts(values[order])] if len(values) else order


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
    (two sorted dictionaries end to end: 1.2M values, 0.01 s); else integers are ordered by
    one sort of plain numbers (``_packed_order``: 6x faster than the merge sort on values
    in no order), others by numpy's quicksort."""
    order = None if runs else _packed_order(values)
    if order is None:
        order = np.argsort(values, kind="stable" if runs else "quicksort")
    ordered = values[order]
    starts = run_starts(ordered) if len(values) else np.zeros(0, dtype=bool)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def run_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values starts, as flags (the first always set)."""
    flags = np.empty(len(ordered), dtype=bool)
    if len(ordered):
        flags[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=flags[1:])
    return flags


def kept_shift(offset: np.ndarray, bits: int) -> np.uint64:
    """How far to shift unsigned offsets so that what is left fits above ``bits`` bits of
    position (0 when they fit whole: then no two distinct offsets share their kept bits)."""
    return np.uint64(max(0, int(offset.max()).bit_length() - (64 - bits)))


def packed_keys(offset: np.ndarray, bits: int, shift: np.uint64) -> np.ndarray:
    """Each unsigned offset's kept high bits (``kept_shift``) packed above its position
    (``bits`` bits), sorted: one sort of plain numbers, which numpy does with SIMD where its
    argsort does not; the positions in that order are the keys' low bits, ties between
    equal kept bits in position order."""
    keys = offset >> shift
    keys <<= np.uint64(bits)
    keys |= np.arange(len(offset), dtype=np.uint64)
    keys.sort()
    return keys


# Integers up to this many are ordered by ``_packed_order``: past it the kept bits of 64-bit
# values are too few to tell most of them apart, and its three arrays would cost memory
_PACKED_MAX = 1 << 22


def _packed_order(values: np.ndarray) -> np.ndarray | None:
    """A permutation that sorts integers, from one sort of plain numbers, which numpy does
    with SIMD instructions where its argsort does not (727k 64-bit hashes: 0.024 s against
    0.15 s): each value's offset from the least, as many of its high bits as its position
    leaves room for, packed above its position. None for other values, for more than
    ``_PACKED_MAX``, or when two values that share their kept bits came out of order (64-bit
    hashes: a few in a million; offsets that fit keep all their bits)."""
    n = len(values)
    if values.dtype.kind not in "iu" or values.dtype.itemsize > 8 or not 1 < n <= _PACKED_MAX:
        return None
    bits = (n - 1).bit_length()  # of a position
    if values.dtype == np.uint64:
        offset = values - values.min()
    else:
        offset = values.astype(np.int64).view(np.uint64) - np.uint64(int(values.min()) % 2**64)
    shift = kept_shift(offset, bits)
    keys = packed_keys(offset, bits, shift)
    order = (keys & np.uint64((1 << bits) - 1)).astype(np.int64)
    if shift:  # a run of equal kept bits is in position order: its values must be sorted
        kept = keys >> np.uint64(bits)
        ordered = offset[order]
        if ((kept[1:] == kept[:-1]) & (ordered[1:] < ordered[:-1])).any():
            return None
    return order
