"""Ids to integer codes, and (user, item) pairs to int64 keys: what every later stage works on."""

from __future__ import annotations

from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io import one_width
from rankeval.io.arrow import (
    buffer,
    from_numpy,
    frombuffer,
    one_string,
    string_buffers,
    to_numpy,
)
from rankeval.io.cast import Numbered, numbered_ids
from rankeval.io.codes import dense_codes
from rankeval.io.number_text import text_order
from rankeval.kernels.threads import each

_SMALL_TEXT = 2**31 - 2**20  # bytes of text that 32-bit offsets hold, with room


def factorize(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], pa.Array]:
    """Integer codes for the ids of several columns over one shared dictionary.

    Codes follow the byte order of the ids, so sorting by code sorts by id (trec_eval compares
    docnos with strcmp) and the output order never depends on row order. Ids read as
    dictionaries are hashed once per distinct value of each chunk, never once per row: the
    chunks' small dictionaries are encoded together in one pass, and each row's code is then a
    gather through its chunk's slice of that encoding. Ids that are all one prefix and a
    number (``io.cast.numbered_ids``: ``7``, ``tt0111161``) skip the text entirely:
    ``_factorize_numbers``.
    """
    return factorize_list(list(columns))


class Ids:
    """A dictionary's ids, in code order. Ids read as numbers (``io.cast.numbered_ids``)
    stay numbers until their text is first asked for, then keep it: an evaluation that
    names no item never writes the text of its items (3.8M distinct hashed ids: 0.36 s)."""

    __slots__ = ("_numbers", "_reading", "_text")

    def __init__(self, text: pa.Array | None = None, numbers: np.ndarray | None = None,
                 reading: Numbered | None = None) -> None:
        self._text, self._numbers, self._reading = text, numbers, reading

    def __len__(self) -> int:
        return len(self._numbers) if self._numbers is not None else len(self.text)

    @property
    def text(self) -> pa.Array:
        """The ids as strings, as written in the files."""
        if self._text is None:
            assert self._reading is not None and self._numbers is not None
            self._text = self._reading.text(self._numbers)
        return self._text

    def padded(self) -> np.ndarray | None:
        """``padded`` of the ids. Numbered ids are a prefix, then digits: none ends in
        whitespace, and all begin with it when the prefix does (the text is not written)."""
        if self._numbers is None or self._reading is None:
            return padded(self.text)
        if not len(self) or padded(one_string(self._reading.prefix + "0")) is None:
            return None
        return np.ones(len(self), dtype=bool)


def factorize_list(columns: list[pa.ChunkedArray]) -> tuple[list[np.ndarray], pa.Array]:
    """``factorize``, emptying ``columns`` once numbered ids are numbers: a caller that
    holds no other reference to them lets their memory go before the codes are made."""
    codes, ids = factorize_ids(columns)
    return codes, ids.text


def factorize_ids(columns: list[pa.ChunkedArray]) -> tuple[list[np.ndarray], Ids]:
    """``factorize_list``, the ids as ``Ids``: numbered ids left as numbers."""
    numbered = _numbered_columns(columns)
    if numbered is not None:
        columns.clear()
        # Arrow's allocator would return the freed pages only on later Arrow activity
        # (jemalloc's decay is lazy), and little follows: give them back now
        pa.default_memory_pool().release_unused()
        return _factorize_numbers(*numbered)
    if not sum(len(col) for col in columns):  # nothing to encode (a chunk of users without
        # training rows): Arrow's encoding of no chunks has no dictionary to take
        return [np.zeros(0, dtype=np.int32) for _ in columns], Ids(pa.array([], pa.string()))
    pieces = _in_blocks([[_as_values(chunk) for chunk in col.chunks] for col in columns])
    values = [v for col in pieces for v, _ in col] or [pa.array([], pa.string())]
    if sum(v.nbytes for v in values) >= _SMALL_TEXT:  # past what 32-bit string offsets hold
        values = [v.cast(pa.large_string()) for v in values]
    found = one_width.coded(values)  # in byte order already
    if found is None:
        # One hash table over the chunks as they are (no concatenated copy): every chunk of
        # the answer shares the final dictionary (UUIDs, 4.4M chunk values: 1.03 -> 0.88 s)
        encoded = [cast(pa.DictionaryArray, c)
                   for c in pa.chunked_array(values).dictionary_encode().chunks]
        found = _in_byte_order(np.concatenate([to_numpy(c.indices) for c in encoded]).astype(
            np.int32, copy=False), encoded[-1].dictionary)
    codes, distinct = found
    out, start = [], 0
    for col in pieces:
        column_codes = np.empty(sum(len(v if idx is None else idx) for v, idx in col),
                                dtype=np.int32)
        row = 0
        for chunk_values, idx in col:
            lookup = codes[start : start + len(chunk_values)]
            n = len(chunk_values) if idx is None else len(idx)
            if idx is None:  # plain text: a code per row already
                column_codes[row : row + n] = lookup
            else:
                np.take(lookup, idx, out=column_codes[row : row + n])
            start, row = start + len(chunk_values), row + n
        out.append(column_codes)
    return out, Ids(distinct)


def _in_byte_order(codes: np.ndarray, distinct: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """The codes renumbered, and their ids reordered, so that codes follow the ids' bytes."""
    by_bytes = byte_order(distinct)
    if (by_bytes[1:] < by_bytes[:-1]).any():  # ids arrived out of order: renumber them
        codes = one_width.inverse(by_bytes)[codes]
        distinct = distinct.take(from_numpy(by_bytes))
    return codes, distinct


_PREFIX_SORT = 1 << 14  # distinct strings from which byte_order's prefix sort pays


def byte_order(text: pa.Array) -> np.ndarray:
    """The permutation sorting distinct strings by their bytes, as Arrow's ``sort_indices``
    but faster on many: an integer argsort of each string's first 8 bytes read as one
    big-endian number (short strings padded with 0), then Arrow's sort within the few groups
    that share those 8 bytes (UUIDs, 5M: 3.1 -> 1.2 s)."""
    string = pa.types.is_string(text.type) or pa.types.is_large_string(text.type)
    chars = text.buffers()[2] if string else None
    if chars is None or text.null_count or len(text) < _PREFIX_SORT:
        return to_numpy(pc.sort_indices(text)).astype(np.int64)
    width = np.int32 if pa.types.is_string(text.type) else np.int64
    offsets = frombuffer(buffer(text, 1), dtype=width)[text.offset : text.offset + len(text) + 1]
    start, length = offsets[:-1], np.diff(offsets)
    data = np.concatenate([frombuffer(chars, dtype=np.uint8),
                           np.zeros(8, dtype=np.uint8)])  # reads past the last string: 0s
    head = np.empty((len(text), 8), dtype=np.uint8)
    for j in range(8):  # byte j of every string (0 past its end), one gather each
        np.take(data, start + j, out=head[:, j])
        head[length <= j, j] = 0
    key = head.view(">u8").ravel().astype(np.uint64)
    order = np.argsort(key)
    sorted_key = key[order]
    same = sorted_key[1:] == sorted_key[:-1]
    if not same.any():
        return order
    at = np.flatnonzero(np.concatenate([same, [False]]) | np.concatenate([[False], same]))
    group = np.concatenate([[0], np.cumsum(sorted_key[at][1:] != sorted_key[at][:-1])])
    tied = pa.table({"g": from_numpy(group), "s": text.take(from_numpy(order[at]))})
    within = to_numpy(pc.sort_indices(tied, sort_keys=[("g", "ascending"), ("s", "ascending")]))
    order[at] = order[at][within]
    return order


# Where each chunk's numbers stand in the array of every column's numbers: (start, stop, and
# for a dictionary chunk each row's index into its dictionary's numbers; None: one per row)
Slot = tuple[int, int, np.ndarray | None]


def _numbered_columns(columns) -> tuple[Numbered, np.ndarray, list[list[Slot]]] | None:
    """Every column's ids as numbers in one array, column after column, when every id of
    every column is the same prefix and a number written the same way
    (``io.cast.numbered_ids``): (the reading, the numbers, each column's chunks' slots).
    A plain chunk stands there with a number per row; a dictionary chunk (what the CSV
    reader makes of ids that repeat) with its dictionary's numbers alone, each distinct id of
    the chunk once, so that neither the parse nor the coding visits its rows. The first
    chunk is read alone (text ids stop there), the others on the two cores, each parsed
    into its own place in the array where it can be (no array per chunk, no copy)."""
    chunks = [(i, chunk) for i, col in enumerate(columns) for chunk in col.chunks if len(chunk)]
    if not chunks or any(chunk.null_count for _, chunk in chunks):
        return None
    starts = np.cumsum([0] + [len(_parsed(chunk)) for _, chunk in chunks]).tolist()

    def parse(chunk: pa.Array, out: np.ndarray | None = None) -> Numbered | None:
        return numbered_ids(_parsed(chunk), out)

    first = parse(chunks[0][1])
    if first is None:
        return None
    every = np.empty(starts[-1], dtype=first.values.dtype)

    def place(k: int) -> tuple[Numbered | None, np.ndarray | None]:
        """Chunk k's numbers written into its place; (reading, None), or the numbers
        themselves when they are wider than the array (64 bits after 32-bit ones)."""
        chunk, slot = chunks[k][1], every[starts[k] : starts[k + 1]]
        numbered = first if k == 0 else parse(chunk, slot)
        if numbered is None:
            return None, None
        values = numbered.values
        if values is slot:
            return numbered, None
        if not np.can_cast(values.dtype, every.dtype):
            return numbered, values
        slot[...] = values
        return numbered, None

    placed = [place(0), *each(place, range(1, len(chunks)))]
    reading = first
    for numbered, _ in placed[1:]:
        agreed = None if numbered is None else reading.agrees(numbered)
        if agreed is None:
            return None
        reading = agreed
    wide = [(k, values) for k, (_, values) in enumerate(placed) if values is not None]
    if wide:  # rare: widen the array, then write those chunks
        every = every.astype(np.int64)
        for k, values in wide:
            every[starts[k] : starts[k + 1]] = values
    slots: list[list[Slot]] = [[] for _ in columns]
    for k, (i, chunk) in enumerate(chunks):
        rows = to_numpy(chunk.indices) if isinstance(chunk, pa.DictionaryArray) else None
        slots[i].append((starts[k], starts[k + 1], rows))
    # the reading without the first chunk's numbers (a whole column when it is one chunk)
    return Numbered(reading.prefix, reading.canonical, reading.width, every[:0]), every, slots


def _parsed(chunk: pa.Array) -> pa.Array:
    """What of a chunk is parsed: a dictionary's distinct values, else every row."""
    return chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk


def _factorize_numbers(reading: Numbered, every: np.ndarray, slots: list[list[Slot]]
                       ) -> tuple[list[np.ndarray], Ids]:
    """``factorize`` for numbered ids (``every``: each column's numbers, one after the other,
    used up): distinct numbers by direct addressing when they span a range not much larger
    than the rows (catalog and user ids usually do), else by runs or hashing; then the byte
    order of their text from the numbers themselves. The codes are written over the numbers
    in place, so plain ids cost one int32 per row; a dictionary chunk's rows take their
    codes through its dictionary's."""
    # codes follow the text's byte order, as for any ids: zero-padded digits of one width
    # sort as their numbers, canonical ones need text_order
    distinct, numeric = dense_codes(every, text_order if reading.canonical else None)
    del every
    return [_column_codes(numeric, column) for column in slots], Ids(None, distinct, reading)


def _column_codes(numeric: np.ndarray, slots: list[Slot]) -> np.ndarray:
    """One column's row codes: a slice of ``numeric`` when its chunks are plain and
    adjacent (no copy), else each chunk's codes written in turn, a dictionary chunk's
    gathered through its indices."""
    if not slots:
        return numeric[:0]
    if all(rows is None for _, _, rows in slots):
        return numeric[slots[0][0] : slots[-1][1]]
    return np.concatenate([numeric[a:b] if rows is None else numeric[a:b][rows]
                           for a, b, rows in slots])


def _as_values(chunk: pa.Array) -> tuple[pa.Array, np.ndarray | None]:
    """(values, each row's index into them) of one chunk of ids; plain text is its own
    values, a value per row (index None): the reader leaves ids plain where a dictionary
    per block would not shrink them (``one_width.read_plain``). Text with 64-bit offsets
    (what pandas 3 writes to Parquet and hands to Arrow) is first given 32-bit ones, its bytes
    shared: 5M ids in 7 ms."""
    if pa.types.is_large_string(chunk.type) and chunk.nbytes < _SMALL_TEXT:
        chunk = chunk.cast(pa.string())
    if pa.types.is_string(chunk.type):
        return chunk, None
    return _as_dictionary(chunk)



# Rows of plain text hashed into one small dictionary, which stays in the cache
_BLOCK_ROWS = 1 << 16
# The share of a block's rows that are distinct under which plain text is hashed block by
# block: a hash per row into a small table (0.1 us a row on two cores), then one coding of
# the blocks' distinct values, against one coding of every row (0.3 us a row)
_BLOCK_SHARE = 0.6


def _in_blocks(pieces: list[list[tuple[pa.Array, np.ndarray | None]]]
               ) -> list[list[tuple[pa.Array, np.ndarray | None]]]:
    """The plain text of ``pieces`` (index None) as dictionaries of blocks of
    ``_BLOCK_ROWS``, hashed on both cores, when its ids repeat within a block (fewer than
    ``_BLOCK_SHARE`` of the first block's rows distinct) and a key would not hold them
    whole (``one_width.packable``: those are packed into numbers, no hash). A table of all
    the distinct ids misses the cache on most rows; a block's does not, and what is coded
    afterwards is the blocks' distinct ids alone, as for the dictionaries per block the CSV
    reader makes (Parquet whose dictionary pages spilled, 3.9M UUID rows over 600,000
    items: coded in 1.13 -> 0.76 s)."""
    plain = [values for col in pieces for values, idx in col if idx is None]
    if sum(len(v) for v in plain) < 2 * _BLOCK_ROWS:
        return pieces
    first = next(v for v in plain if len(v))[:_BLOCK_ROWS]
    if one_width.packable(first):
        return pieces
    if len(first.dictionary_encode().dictionary) >= _BLOCK_SHARE * len(first):
        return pieces

    coded = iter(each(_as_dictionary, [values[a : a + _BLOCK_ROWS] for values in plain
                                       for a in range(0, len(values), _BLOCK_ROWS)]))
    return [[piece for values, idx in col
             for piece in ([next(coded) for _ in range(0, len(values), _BLOCK_ROWS)]
                           if idx is None else [(values, idx)])] for col in pieces]


def _as_dictionary(chunk: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct values, each row's index into them) of one chunk of ids."""
    if not isinstance(chunk, pa.DictionaryArray):
        chunk = chunk.cast(pa.string()).dictionary_encode()
    return chunk.dictionary.cast(pa.string()), to_numpy(chunk.indices)


def pair_keys(user: np.ndarray, item: np.ndarray, n_items: int) -> np.ndarray:
    """One int64 key per (user, item) pair, ordered as the pairs are."""
    keys = user.astype(np.int64)
    keys *= n_items
    keys += item
    return keys


def duplicates(keys: np.ndarray) -> np.ndarray:
    """Row indices (file order) of every repeat of an earlier key; empty when all keys differ."""
    sk = np.sort(keys)
    if not (sk[1:] == sk[:-1]).any():  # the common, clean case: one fast sort, no argsort
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    return np.sort(order[1:][sk[1:] == sk[:-1]])




def padded(dictionary: pa.Array) -> np.ndarray | None:
    """Which ids of a dictionary have leading or trailing whitespace; None when none has.

    Only ids whose first or last byte is ASCII space or control, or not ASCII (Unicode
    spaces), can be padded: those few are checked exactly, the rest cost two byte reads."""
    suspects = _edge_suspects(dictionary)
    if suspects is not None and not len(suspects):
        return None
    subset = dictionary if suspects is None else dictionary.take(from_numpy(suspects))
    hit = to_numpy(pc.not_equal(subset, pc.utf8_trim_whitespace(subset)))
    if not hit.any():
        return None
    if suspects is None:
        return hit
    mask = np.zeros(len(dictionary), dtype=bool)
    mask[suspects[hit]] = True
    return mask


def _edge_suspects(text: pa.Array) -> np.ndarray | None:
    """Indices of the strings whose first or last byte could belong to whitespace (None:
    not a plain string array, check them all)."""
    if not pa.types.is_string(text.type) or text.null_count or not len(text):
        return None
    offsets, data = string_buffers(text)
    if data is None:
        return np.zeros(0, dtype=np.int64)  # every string is empty
    start, end = offsets[:-1], offsets[1:]
    filled = np.flatnonzero(end > start)
    first, last = data[start[filled]], data[end[filled] - 1]
    odd = (first <= 32) | (first >= 127) | (last <= 32) | (last >= 127)
    return filled[odd]
