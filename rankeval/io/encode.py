"""Ids to integer codes, and (user, item) pairs to int64 keys: what every later stage works on."""

from __future__ import annotations

from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import (
    buffer,
    from_numpy,
    frombuffer,
    one_string,
    py_buffer,
    string_buffers,
    to_numpy,
)
from rankeval.io.cast import Numbered, numbered_ids
from rankeval.io.codes import dense_codes
from rankeval.io.number_text import text_order
from rankeval.kernels.threads import each


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
    pieces = [[_as_values(chunk) for chunk in col.chunks] for col in columns]
    values = [v for col in pieces for v, _ in col] or [pa.array([], pa.string())]
    if sum(v.nbytes for v in values) >= 2**31 - 2**20:  # past what 32-bit string offsets hold
        values = [v.cast(pa.large_string()) for v in values]
    found = _one_width_codes(values)  # in byte order already
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
        codes = _rank(by_bytes)[codes]
        distinct = distinct.take(from_numpy(by_bytes))
    return codes, distinct


def _rank(order: np.ndarray) -> np.ndarray:
    """Each position's place in ``order`` (the inverse permutation), as int32."""
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank


# Chunk values from which ids of one byte length are hashed as numbers: below it Arrow's
# string hash is faster (193k UUIDs: 0.05 s, against 0.13 s)
_ONE_WIDTH_ROWS = 1 << 19
_BATCH_ROWS = 1 << 16
_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / the golden ratio: an odd multiplier


def _one_width_codes(values: list[pa.Array]) -> tuple[np.ndarray, pa.Array] | None:
    """(each value's code, the distinct values), codes in the byte order of the values, of
    text values that all have one byte length (UUIDs, hex digests, ASINs, zero-padded
    codes), or None for others. Arrow's string hash probes a table of whole strings on one
    core, which misses the cache once the distinct values are many: 3.9M UUID chunk values
    over 460k distinct took 1.05 s. Here each value's bytes, read as 64-bit words, are mixed
    into one number (in batches, on both cores), the numbers coded as hashed numbers are
    (``dense_codes``), and every value is then compared word for word with its code's value
    (0.49-0.66 s on those values), so a collision of the numbers can never merge two ids: it
    sends the values back to Arrow's hash. The distinct values, as rows of words, are then
    put in byte order by their first word read big-endian, and by the others where the
    first ties (``_word_order``): no string array is sorted or gathered. Ids whose bytes
    vary in few bits (``_key_fields``: ASINs, TREC docnos) skip all of it: each is packed
    into one number that keeps its byte order, and the numbers' codes are the ids' (3.4M
    distinct of 5.9M ASIN-like values: 2.5 -> 1.1 s)."""
    if not _ONE_WIDTH_ROWS <= sum(len(v) for v in values) < 2**31 or any(
            not pa.types.is_string(v.type) or v.null_count for v in values):
        return None
    found = [_byte_rows(v) for v in values if len(v)]  # an empty chunk adds no codes
    rows = [r for r in found if r is not None]
    if len(rows) < len(found) or len({r.shape[1] for r in rows}) != 1:
        return None
    starts = np.cumsum([0] + [len(r) for r in rows])
    batches = _batches(starts)
    numbers = np.empty(int(starts[-1]), dtype=np.uint64)

    def words(batch: list[tuple[int, int, int]]) -> np.ndarray:
        return _words(np.concatenate([rows[k][a:b] for k, a, b in batch]))

    def span(batch: list[tuple[int, int, int]]) -> slice:
        (k, a, _), (m, _, b) = batch[0], batch[-1]
        return slice(int(starts[k]) + a, int(starts[m]) + b)

    width = rows[0].shape[1]
    first = _words(rows[0][:1])[0]

    def varying(batch: list[tuple[int, int, int]]) -> np.ndarray:
        grid = words(batch)
        grid ^= first
        return np.bitwise_or.reduce(grid, axis=0)

    fields = _key_fields(np.bitwise_or.reduce(np.array(each(varying, batches)), axis=0),
                         width)
    if fields is not None:  # each id one number that keeps its order: no hash, no check
        def pack(batch: list[tuple[int, int, int]]) -> None:
            numbers[span(batch)] = _packed(words(batch), fields)

        each(pack, batches)
        keys, codes = dense_codes(numbers.view(np.int64))
        return codes, _unpacked(keys, fields, first, width)

    def mix(batch: list[tuple[int, int, int]]) -> None:
        numbers[span(batch)] = _mixed(words(batch))

    each(mix, batches)
    _, codes = dense_codes(numbers.view(np.int64))
    known = _code_words(rows, starts, codes)
    columns = [np.ascontiguousarray(known[:, j]) for j in range(known.shape[1])]

    def same(batch: list[tuple[int, int, int]]) -> bool:
        """Every value of these chunks equal to its code's value, word for word."""
        own, grid = codes[span(batch)], words(batch)
        return all(np.array_equal(np.take(col, own), grid[:, j])
                   for j, col in enumerate(columns))

    if not all(each(same, batches)):
        return None
    order = _word_order(columns)
    text = np.ascontiguousarray(np.take(known, order, axis=0).view(np.uint8)[:, :width])
    offsets = np.arange(0, len(order) * width + 1, width, dtype=np.int32)
    distinct = pa.StringArray.from_buffers(len(order), py_buffer(offsets), py_buffer(text))
    return _rank(order)[codes], distinct


# Bits of a key that holds a whole id: ids whose bytes take few values, position by position
# (ASINs: 7 bits a letter or digit after a constant "B"; TREC docnos: constant text and
# digits, 4 bits each) are coded as numbers that keep their byte order
_KEY_BITS = 63

# A field of a key: (word, shift, bits) of an id's words (its bytes from the first, 8 a word,
# little-endian), the bits of one byte that vary among the ids
Field = tuple[int, int, int]


def _key_fields(varying: np.ndarray, width: int) -> list[Field] | None:
    """The fields of a key that holds every id of ``width`` bytes, from their first byte
    to their last (``varying``: per word, the bits in which some id differs from the first):
    in each byte, the bits up to its highest varying one (those above are the same in every
    id, so the low bits order the bytes as the whole bytes do). None when they take more
    than ``_KEY_BITS``."""
    fields = []
    for position in range(width):
        word, shift = divmod(position, 8)
        bits = int(varying[word] >> np.uint64(8 * shift) & np.uint64(0xFF)).bit_length()
        if bits:
            fields.append((word, 8 * shift, bits))
    return fields if sum(bits for _, _, bits in fields) <= _KEY_BITS else None


def _packed(grid: np.ndarray, fields: list[Field]) -> np.ndarray:
    """Rows of words as keys (``_key_fields``): the fields in turn, the first the highest."""
    out = np.zeros(len(grid), dtype=np.uint64)
    for word, shift, bits in fields:
        out <<= np.uint64(bits)
        out |= grid[:, word] >> np.uint64(shift) & np.uint64((1 << bits) - 1)
    return out


def _unpacked(keys: np.ndarray, fields: list[Field], first: np.ndarray, width: int
              ) -> pa.Array:
    """The ids of keys (``_packed``): the first id's words with each field's bits taken
    from the key."""
    constant = first.copy()
    for word, shift, bits in fields:
        constant[word] &= ~np.uint64(((1 << bits) - 1) << shift)
    grid = np.tile(constant, (len(keys), 1))
    rest = keys.view(np.uint64).copy()
    for word, shift, bits in reversed(fields):
        grid[:, word] |= (rest & np.uint64((1 << bits) - 1)) << np.uint64(shift)
        rest >>= np.uint64(bits)
    text = np.ascontiguousarray(grid.view(np.uint8)[:, :width])
    offsets = np.arange(0, len(keys) * width + 1, width, dtype=np.int32)
    return pa.StringArray.from_buffers(len(keys), py_buffer(offsets), py_buffer(text))


def _code_words(rows: list[np.ndarray], starts: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The words of one value of each code (any one), found in its chunk (``rows``, whose
    first values stand at ``starts`` of ``codes``). The values picked are put in the order
    of the chunks by one sort of keys that pack a value's place above its code (no argsort,
    no copy of the chunks)."""
    n = int(codes.max()) + 1
    one = np.empty(n, dtype=np.int64)
    one[codes] = np.arange(len(codes), dtype=np.int64)
    one <<= 32  # places below 2^31 and codes below 2^31: both fit (int32 codes)
    one |= np.arange(n, dtype=np.int64)
    one.sort()
    place, code = one >> 32, one & 0xFFFFFFFF
    del one
    bounds = np.searchsorted(place, starts)
    by_place = np.empty((n, -(-rows[0].shape[1] // 8)), dtype=np.uint64)
    for k, chunk in enumerate(rows):
        a, b = bounds[k], bounds[k + 1]
        if a < b:  # np.take along rows: numpy's fancy indexing of a matrix is 7x slower
            by_place[a:b] = _words(np.take(chunk, place[a:b] - starts[k], axis=0))
    return np.take(by_place, _rank(code), axis=0)


def _word_order(columns: list[np.ndarray]) -> np.ndarray:
    """The permutation sorting rows of 64-bit words (one array per word, each row a string's
    bytes padded with zeros) by their bytes: by the first word read big-endian, then, where
    rows tie on it, by the next words (a lexical sort of the tied rows alone)."""
    key = columns[0].byteswap()
    order = np.argsort(key)
    if len(columns) == 1:
        return order
    ordered = key[order]
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return order
    at = np.flatnonzero(np.concatenate([same, [False]]) | np.concatenate([[False], same]))
    group = np.cumsum(np.concatenate([[0], ordered[at][1:] != ordered[at][:-1]]))
    tied = order[at]
    # np.lexsort sorts by its last key first: the group, then the words in turn
    within = np.lexsort([col[tied].byteswap() for col in reversed(columns[1:])] + [group])
    order[at] = tied[within]
    return order


def _batches(starts: np.ndarray) -> list[list[tuple[int, int, int]]]:
    """The rows of the chunks (``starts``: their first rows, then the end) in batches of
    ``_BATCH_ROWS`` (the last may be shorter), each a list of (chunk, first, end) slices:
    few numpy calls, so that two threads do not queue for the interpreter, on arrays small
    enough to stay in the cache."""
    out: list[list[tuple[int, int, int]]] = [[]]
    room = _BATCH_ROWS
    for k in range(len(starts) - 1):
        a, n = 0, int(starts[k + 1] - starts[k])
        while a < n:
            b = min(n, a + room)
            out[-1].append((k, a, b))
            room -= b - a
            a = b
            if not room:
                out.append([])
                room = _BATCH_ROWS
    return [batch for batch in out if batch]


def _byte_rows(text: pa.Array) -> np.ndarray | None:
    """A string array's values as the rows of a byte matrix (a view), None when their byte
    lengths differ or are 0."""
    offsets, data = string_buffers(text)
    if data is None or not len(text):
        return None
    width = int(offsets[1] - offsets[0])
    if width == 0 or not (np.diff(offsets) == width).all():
        return None
    return data[offsets[0] : offsets[-1]].reshape(len(text), width)


def _words(rows: np.ndarray) -> np.ndarray:
    """Rows of bytes as rows of 64-bit words (the last one padded with zeros)."""
    n, width = rows.shape
    padded = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = rows
    return padded.view(np.uint64)


def _mixed(words: np.ndarray) -> np.ndarray:
    """One 64-bit number per row of words: the words mixed in turn (multiply, then fold the
    high bits down), as uint64."""
    out = np.full(len(words), _MIX, dtype=np.uint64)
    for j in range(words.shape[1]):
        out ^= words[:, j]
        out *= _MIX
        out ^= out >> np.uint64(29)
    return out


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
    per block would not shrink them (``packable``)."""
    if pa.types.is_string(chunk.type):
        return chunk, None
    return _as_dictionary(chunk)


# Ids this share of whose sample's rows are distinct do not repeat enough for dictionaries
# per block of a file to shrink them
ONCE_SHARE = 0.9


def read_plain(sample: pa.Array) -> bool:
    """Whether text ids like these (the first rows of a file) are better read as plain text
    than as a dictionary per block: a key holds each whole (``packable``) and they do not
    repeat, so that ``factorize`` packs every row's id into a number and hashes none."""
    return packable(sample) and pc.count_distinct(sample).as_py() >= ONCE_SHARE * len(sample)


def packable(sample: pa.Array) -> bool:
    """Whether text ids like these (the first rows of a file) would each be packed into one
    number (``_key_fields``): one byte length, and bytes that vary in few bits."""
    if not pa.types.is_string(sample.type) or sample.null_count or not len(sample):
        return False
    rows = _byte_rows(sample)
    if rows is None:
        return False
    grid = _words(rows)
    varying = np.bitwise_or.reduce(grid ^ grid[0], axis=0)
    return _key_fields(varying, rows.shape[1]) is not None


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
