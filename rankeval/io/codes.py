"""Integer ids to dense codes: (sorted distinct ids, each row's index among them).

Ids that span a range not much wider than the rows (catalog and user ids usually do) are
coded by direct addressing: a flag and a code per value of the range. Wider ones (sparse ids,
64-bit hashes) that come in runs (a file's users, each one's rows together) are coded from the
runs' first values (``_runs``: 5M rows of hashed user ids, 0.11 -> 0.05 s of CPU); the others
are hashed: each half of the rows dictionary-encoded by Arrow on its own core,
the two small dictionaries merged, sorted, and the rows' codes gathered through them. Never a
sort of, or a binary search for, every row: on 10M Zipf-popular ids among 2M distinct ones
spread over 60M values, that took 1.84 s where hashing takes 0.40 s.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.kernels.threads import each, halves

# Direct addressing while the span is at most this many times the rows (plus a fixed 16M
# values): measured on 10M rows, it beats hashing up to a span of about twice the rows.
_SPAN_PER_ROW = 2
_SPAN_FREE = 16 << 20


def dense_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values as int64, each value's int32 index among them) of integers.

    ``values`` is used up: when it is int32 its memory is overwritten with the codes, so the
    column costs one int32 per row."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > _SPAN_PER_ROW * len(values) + _SPAN_FREE:
        runs = _runs(values)
        return _hashed(values) if runs is None else runs
    values -= values.dtype.type(low)  # offsets into the span, in place
    present = np.zeros(span, dtype=bool)
    present[values] = True
    found = np.flatnonzero(present) + low
    code = np.cumsum(present, dtype=np.int32) - 1
    del present
    # Random reads across the span: two threads keep twice as many cache misses in flight.
    each(lambda ab: _gather_in_place(code, values, *ab), halves(len(values)))
    return found.astype(np.int64), values if values.dtype == np.int32 else values.astype(np.int32)


# Values that come in runs of this many rows or more on average are coded run by run
_RUN_ROWS = 4


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``dense_codes`` of values that come in long runs (a file's users: each one's rows
    together), from the runs' first values alone: their distinct values sorted, each run's
    code repeated over its rows. Never a hash or a look-up per row, whatever the values'
    span (hashed ids, numbers in no order); None when the runs are short."""
    changes = values[1:] != values[:-1]
    if (int(np.count_nonzero(changes)) + 1) * _RUN_ROWS > len(values):
        return None  # counted, not listed: short runs cost no array of every row's place
    heads = np.flatnonzero(changes)
    del changes
    heads += 1
    starts = np.concatenate((np.zeros(1, dtype=heads.dtype), heads))
    found, code = np.unique(values[starts], return_inverse=True)
    lengths = np.diff(np.append(starts, len(values)))
    out = values if values.dtype == np.int32 else np.empty(len(values), dtype=np.int32)
    out[...] = np.repeat(code.astype(np.int32, copy=False), lengths)
    return found.astype(np.int64), out


def _hashed(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``dense_codes`` by hashing: each half's dictionary (first-seen order) on its core,
    the two merged and ranked, each row's code gathered through its half's ranks."""
    parts = each(lambda ab: _encoded(values[ab[0]:ab[1]]), halves(len(values)))
    merged = _encoded(pa.concat_arrays([p.dictionary for p in parts]))
    distinct = to_numpy(merged.dictionary)
    order = np.argsort(distinct)
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    into = to_numpy(merged.indices)
    out = values if values.dtype == np.int32 else np.empty(len(values), dtype=np.int32)
    start = seen = 0
    for part in parts:
        size = len(part.dictionary)
        codes = rank[into[seen : seen + size]]
        out[start : start + len(part)] = codes[to_numpy(part.indices)]
        start, seen = start + len(part), seen + size
    return distinct[order].astype(np.int64), out


def _encoded(values: np.ndarray | pa.Array) -> pa.DictionaryArray:
    array = from_numpy(values) if isinstance(values, np.ndarray) else values
    out = pc.dictionary_encode(array)
    assert isinstance(out, pa.DictionaryArray)  # the stubs type it as any Array
    return out


def _gather_in_place(code: np.ndarray, values: np.ndarray, start: int, stop: int) -> None:
    """``values[start:stop] = code[values[start:stop]]``, a cache-sized block at a time."""
    step = 1 << 16
    for a in range(start, stop, step):
        block = values[a : min(a + step, stop)]
        block[...] = code[block]
