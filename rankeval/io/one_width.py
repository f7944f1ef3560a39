"""Text ids of one byte length (UUIDs, hex digests, ASINs, TREC docnos) coded without
Arrow's string hash: packed into numbers that keep their byte order where their bytes vary
in few bits, else mixed into 64-bit numbers whose codes are checked word for word. Each
answer is Arrow's (``io.encode.factorize`` calls ``coded``); the readers ask ``read_plain``
whether such ids are better read as plain text than as a dictionary per block."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import py_buffer, string_buffers
from rankeval.io.codes import dense_codes
from rankeval.kernels.threads import each


def inverse(order: np.ndarray) -> np.ndarray:
    """Each position's place in ``order`` (the inverse permutation), as int32."""
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank


# Chunk values from which ids of one byte length are hashed as numbers: below it Arrow's
# string hash is faster (193k UUIDs: 0.05 s, against 0.13 s)
_ONE_WIDTH_ROWS = 1 << 19
_BATCH_ROWS = 1 << 16
_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / the golden ratio: an odd multiplier


def coded(values: list[pa.Array]) -> tuple[np.ndarray, pa.Array] | None:
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
    return inverse(order)[codes], distinct


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
    return np.take(by_place, inverse(code), axis=0)


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
    if pa.types.is_large_string(sample.type):  # pandas 3's text: the bytes are the same
        sample = sample.cast(pa.string())
    if not pa.types.is_string(sample.type) or sample.null_count or not len(sample):
        return False
    rows = _byte_rows(sample)
    if rows is None:
        return False
    grid = _words(rows)
    varying = np.bitwise_or.reduce(grid ^ grid[0], axis=0)
    return _key_fields(varying, rows.shape[1]) is not None
