"""Integer ids to dense codes: (sorted distinct ids, each row's index among them).

Ids that come in runs (a file's users, each one's rows together) are coded from the runs'
first values, whatever their span (``_runs``: 5M rows of hashed user ids, 0.11 -> 0.05 s of
CPU). Others that span a range not much wider than the rows (catalog ids usually do) are
coded by direct addressing: a bit per value of the range, and each row's code counted from
the bits below its own (``_ranked``: a rank over a bitset, which stays in the cache where a
table of 32-bit codes over the range did not: 14M sparse ids over 40M values, 0.6-1.4 ->
0.2 s, and 4 bytes less per value of the range). Wider ones (sparse ids, 64-bit hashes)
are hashed when few are distinct (``_hashed``: each half of the rows dictionary-encoded by
Arrow on its own core, the two small dictionaries sorted and merged, and the rows' codes
gathered through them), and sorted when many are (``_sorted``: two sorts of plain numbers,
one on each core). Never an argsort of, or a binary search for, every row: on 10M
Zipf-popular ids among 2M distinct ones spread over 60M values, that took 1.84 s where
hashing takes 0.40 s.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.kernels.distinct import kept_shift, packed_keys, run_starts, with_inverse
from rankeval.kernels.threads import each, halves

# Direct addressing while the span is at most this many times the rows (plus a fixed 16M
# values). Measured on 10M Zipf-popular rows, the bitset beats hashing up to a span of 10-20
# times the rows (0.13-0.18 s against 0.28-0.33); its flags cost a byte per value of the span
# while they are set, so the span stops at 4 bytes a row, half an int64 id's.
_SPAN_PER_ROW = 4
_SPAN_FREE = 16 << 20


Order = Callable[[np.ndarray], np.ndarray | None]


def dense_codes(values: np.ndarray, order: Order | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values as int64, each value's int32 index among them) of integers: the
    distinct values sorted, or as ``order`` permutes them (called with the sorted distinct
    values; None: leave them sorted); runs and hashing compose it into their small tables,
    so their rows are gathered once.

    ``values`` is used up: when it is int32 its memory is overwritten with the codes, so the
    column costs one int32 per row."""
    if not len(values):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    runs = _runs(values, order)  # users, whatever their span
    if runs is not None:
        return runs
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if not addressable(low, high, len(values)):
        return (_sorted(values, low, order) if _many_distinct(values)
                else _hashed(values, order))
    values -= values.dtype.type(low)  # offsets into the span, in place
    present = np.zeros(span + (-span) % 64, dtype=bool)  # whole 64-bit words
    present[values] = True
    found = np.flatnonzero(present)
    found += low
    words = np.packbits(present, bitorder="little").view(np.uint64)
    del present
    counts = popcount(words)
    below = np.zeros(len(words), dtype=np.int32)  # the distinct values in the words before
    np.cumsum(counts[:-1], out=below[1:])
    each(lambda ab: _ranked(words, below, values, *ab), halves(len(values)))
    codes = values if values.dtype == np.int32 else values.astype(np.int32)
    rank, found = _ranks(found.astype(np.int64, copy=False), order)
    # a pass of its own: inside the blocks, a third table (the ranks) would share the cache
    # with the bitset and its counts, and measured no faster
    return found, codes if rank is None else rank[codes]


def addressable(low: int, high: int, rows: int) -> bool:
    """Whether ``rows`` numbers from ``low`` to ``high`` are coded by direct addressing (a
    bit per value of their span); the others by their runs, else by hashing every row."""
    return high - low + 1 <= _SPAN_PER_ROW * rows + _SPAN_FREE


def _ranks(ordered: np.ndarray, order: Order | None) -> tuple[np.ndarray | None, np.ndarray]:
    """(each sorted value's code, None when it is its place; the values in code order)."""
    perm = None if order is None else order(ordered)
    if perm is None:
        return None, ordered
    rank = np.empty(len(perm), dtype=np.int32)
    rank[perm] = np.arange(len(perm), dtype=np.int32)
    return rank, ordered[perm]


# Values that come in runs of this many rows or more on average are coded run by run
_RUN_ROWS = 4
_LOOK = 1 << 16


def _runs(values: np.ndarray, order: Order | None = None
          ) -> tuple[np.ndarray, np.ndarray] | None:
    """``dense_codes`` of values that come in long runs (a file's users: each one's rows
    together), from the runs' first values alone: their distinct values sorted, each run's
    code repeated over its rows. Never a hash or a look-up per row, whatever the values'
    span (hashed ids, numbers in no order); None when the runs are short: told from the
    first ``_LOOK`` values first (items come in no runs), then from them all. Dense user ids
    too: 13M rows in runs of 17, 0.16 s by the bitset, 0.10 s from the runs."""
    if not _long_runs(values[:_LOOK]):
        return None
    changes = values[1:] != values[:-1]
    if not _long_runs(values, changes):
        return None
    heads = np.flatnonzero(changes)
    del changes
    heads += 1
    starts = np.concatenate((np.zeros(1, dtype=heads.dtype), heads))
    # in no order (np.unique: 5x the time on 776k heads; a merge sort, 4x on 727k hashes)
    found, code = with_inverse(values[starts], runs=False)
    rank, found = _ranks(found.astype(np.int64, copy=False), order)
    code = code.astype(np.int32, copy=False) if rank is None else rank[code]
    lengths = np.diff(np.append(starts, len(values)))
    out = values if values.dtype == np.int32 else np.empty(len(values), dtype=np.int32)
    out[...] = np.repeat(code, lengths)
    return found, out


def _long_runs(values: np.ndarray, changes: np.ndarray | None = None) -> bool:
    """Whether ``values`` come in runs of ``_RUN_ROWS`` or more on average (``changes``:
    where each value differs from the one before, when already found). The changes are
    counted, not listed, so that short runs cost no array of every row's place."""
    if changes is None:
        changes = values[1:] != values[:-1]
    return (int(np.count_nonzero(changes)) + 1) * _RUN_ROWS <= len(values)


def _hashed(values: np.ndarray, order: Order | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``dense_codes`` by hashing: each half's dictionary (first-seen order) on its core;
    each dictionary sorted, on its core again; the two sorted runs merged by one stable sort
    (which finds the two runs and merges them) into the distinct values and each entry's
    code; each row's code gathered through its half's table, each half on its core. Merging
    by hashing the two dictionaries again, then sorting the union, took 0.16-0.25 s on 14M
    hashed ids (1.2M dictionary entries) where this takes about 0.07 s."""
    bounds = halves(len(values))
    parts = each(lambda ab: _encoded(values[ab[0]:ab[1]]), bounds)
    tables = [to_numpy(part.dictionary) for part in parts]
    sorts = each(np.argsort, tables)
    # the two sorted runs, merged (a stable sort finds them): the distinct values, and the
    # code of each half's sorted dictionary entry
    found, entry = with_inverse(
        np.concatenate([table[by] for table, by in zip(tables, sorts, strict=True)]))
    rank, distinct = _ranks(found.astype(np.int64, copy=False), order)
    if rank is not None:  # the final order, composed into the table before any row
        entry = rank[entry]
    out = values if values.dtype == np.int32 else np.empty(len(values), dtype=np.int32)
    first = np.cumsum([0] + [len(table) for table in tables]).tolist()

    def rows(k: int) -> None:
        table = np.empty(len(tables[k]), dtype=np.int32)
        table[sorts[k]] = entry[first[k] : first[k + 1]]  # the half's dictionary, coded
        np.take(table, to_numpy(parts[k].indices), out=out[bounds[k][0] : bounds[k][1]])

    each(rows, range(len(parts)))
    return distinct, out


# Values are hashed while their distinct ones, estimated from a sample, are few beside the
# rows: a hash table of them stays in the cache, and hashing costs little more per row; a
# table of many misses the cache on most rows, where sorting (``_sorted``) costs the same per
# row whatever the values. Measured on 3M and 8M rows of 64-bit hashes, uniform or Zipf(1.1)
# over 100k-1M distinct: sorting 0.13-0.15 s and 0.44-0.53 s, hashing 0.12-0.40 s and
# 0.26-0.87 s, even at about a distinct value per 24 rows. Against the parts this replaced
# (the rows grouped by high bits, each group sorted): 8.3M hashes over 5M distinct, 0.72 ->
# 0.51 s; 5M sparse numbers over 10^11, 0.44 -> 0.31 s. Under a million rows a table of a
# distinct value per 24 rows still fits the cache and hashing wins, but from one per 8 rows
# sorting does: 70k-1M rows of 64-bit hashes or sparse numbers, all or half of them
# distinct, 2-3x faster sorted (1M all distinct: 164 -> 52 ms; a run's 386k user ids from
# the reader's block dictionaries, 193k distinct: 75 -> 20 ms); at one per 8 the two tie.
_ROWS_PER_DISTINCT = 24
_SMALL_ROWS_PER_DISTINCT = 8  # the same rule under _SORT_ROWS rows
_SORT_ROWS = 1 << 20
_SAMPLE = 1 << 16  # fewer rows are hashed, whatever their values: both take milliseconds
_BLOCK = 1 << 20  # rows compared per step where a whole-column temporary would double memory


def _many_distinct(values: np.ndarray) -> bool:
    """Whether ``values`` hold a distinct value per ``_ROWS_PER_DISTINCT`` rows or more (per
    ``_SMALL_ROWS_PER_DISTINCT`` under ``_SORT_ROWS`` rows), by Chao's estimate from an evenly
    spaced sample of ``_SAMPLE`` (all of them, when no more): the distinct values seen, plus
    f1^2 / 2 f2 unseen ones (f1 values seen once, f2 twice). It counts low where a few values
    repeat often (Zipf's head: hashing suits them) and high where few repeat."""
    if len(values) < _SAMPLE:
        return False
    sample = np.sort(values[:: max(1, len(values) // _SAMPLE)])
    starts = np.flatnonzero(run_starts(sample))
    times = np.bincount(np.diff(np.append(starts, len(sample))), minlength=3)
    seen, once, twice = len(starts), int(times[1]), int(times[2])
    per = _ROWS_PER_DISTINCT if len(values) >= _SORT_ROWS else _SMALL_ROWS_PER_DISTINCT
    return (seen + once * (once - 1) / (2 * (twice + 1))) * per >= len(values)


def _sorted(values: np.ndarray, low: int, order: Order | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """``dense_codes`` of values with many distinct ones, by two sorts of plain numbers
    (numpy sorts them with SIMD; its argsort is 5-7x slower), one on each core:

    - the values' offsets from ``low``, sorted: the distinct values;
    - keys that pack each offset's high bits above its row number, sorted: the rows in
      order of those bits, the row numbers read back from the keys' low bits.

    The keys keep as many high bits as the row numbers leave (all of them, for offsets that
    fit: sparse numbers), so equal values have equal keys' high bits and a run of equal high
    bits is one distinct value, but where two distinct values share their kept bits (64-bit
    hashes: a few in millions). Each run is coded by the first distinct value with its high
    bits; the rows of runs that hold several values are coded one by one by a binary search
    of the distinct values (or, when such rows are many, the values are hashed instead)."""
    n = len(values)
    bits = max(1, (n - 1).bit_length())  # of a row number
    base = np.uint64(low % 2**64)
    wide = values.dtype == np.int64  # then used up: the offsets are written over the values
    offset = values.view(np.uint64) if wide else values.astype(np.int64).view(np.uint64)
    offset -= base
    shift = kept_shift(offset, bits)

    def distinct() -> tuple[np.ndarray, np.ndarray]:
        """(the distinct offsets, sorted; where each new run of high bits starts among them)"""
        ordered = np.sort(offset)
        found = ordered[run_starts(ordered)]
        del ordered
        return found, np.flatnonzero(run_starts(found >> shift)).astype(np.int32)

    def rows() -> tuple[np.ndarray, np.ndarray]:
        """(the rows in order of their values' high bits; each one's run among those bits)"""
        keys = packed_keys(offset, bits, shift)
        run = np.empty(n, dtype=np.int32)
        run[0] = 0
        high = np.uint64(bits)
        for a in range(1, n, _BLOCK):  # block by block: no whole-column temporaries
            b = min(n, a + _BLOCK)
            np.not_equal(keys[a:b] >> high, keys[a - 1 : b - 1] >> high, out=run[a:b])
        np.cumsum(run, out=run)
        keys &= np.uint64((1 << bits) - 1)
        return keys.view(np.int64), run

    (found, first), (by_value, run) = each(lambda job: job(), [distinct, rows])
    codes = first[run]  # each row's run coded by its first distinct value
    del run
    if len(first) < len(found):  # runs whose high bits several distinct values share
        sizes = np.diff(np.append(first, len(found)))
        shared = first[sizes > 1]
        starts = np.searchsorted(codes, shared, "left")
        stops = np.searchsorted(codes, shared, "right")
        lengths = stops - starts
        if int(lengths.sum()) * 8 > n:  # a binary search per row would cost more than hashing
            offset += base  # the values again
            return _hashed(offset.view(np.int64) if wide else values, order)
        # the rows of those runs: each run's start, repeated over its rows, plus 0, 1, ...
        at = np.arange(int(lengths.sum())) + np.repeat(starts - (np.cumsum(lengths) - lengths),
                                                       lengths)
        codes[at] = np.searchsorted(found, offset[by_value[at]])
    found += base
    rank, ordered_values = _ranks(found.view(np.int64), order)
    if rank is not None:
        codes = rank[codes]
    out = values if values.dtype == np.int32 else np.empty(n, dtype=np.int32)
    out[by_value] = codes
    return ordered_values, out


def _encoded(values: np.ndarray | pa.Array) -> pa.DictionaryArray:
    array = from_numpy(values) if isinstance(values, np.ndarray) else values
    out = pc.dictionary_encode(array)
    assert isinstance(out, pa.DictionaryArray)  # the stubs type it as any Array
    return out


_ONE = np.uint64(1)
_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


def popcount(words: np.ndarray) -> np.ndarray:
    """The set bits of each uint64 (numpy's own count from 2.0; else a byte table)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    return _BITS[words.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.uint8)


def _ranked(words: np.ndarray, below: np.ndarray, values: np.ndarray, start: int,
            stop: int) -> None:
    """``values[start:stop]`` (offsets into the range) replaced by their codes: the distinct
    values before each one's word, and the bits set below it in its word; a cache-sized
    block at a time."""
    step = 1 << 16
    for a in range(start, stop, step):
        block = values[a : min(a + step, stop)]
        at = block >> 6
        under = (_ONE << (block & 63).astype(np.uint64)) - _ONE
        block[...] = below[at] + popcount(words[at] & under)
