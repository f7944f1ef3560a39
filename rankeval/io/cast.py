"""Columns to the types a caller asks for: ids as text, numbers as numbers, and every value
that does not convert named by its rows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import (
    from_numpy,
    py_buffer,
    scalar,
    string_buffers,
    to_numpy,
)

# Ids are asked for as this type: the CSV reader dictionary-encodes them while parsing, which
# is faster than reading text and encoding it after; other sources may answer with plain text.
ID = pa.dictionary(pa.int32(), pa.string())


POWERS = 10 ** np.arange(1, 19, dtype=np.int64)
# A canonical integer of L digits is at least _LOW[L] in magnitude (one digit: 0..9; else no
# leading zero); index 0 and lengths past 19 digits admit nothing.
_LOW = np.array([1, 0, *POWERS[:18]], dtype=np.int64)


_TRIAL = 1024  # texts cast to integers before the whole column is


def integer_ids(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The ids as int64 when every one is an integer written canonically (``7``, ``-12``;
    not ``007``, ``+5``, ``-0``, ``1e3``, ``5.0`` or ``0x1F``), so that the integer and the
    text name the same id; else None."""
    if values.null_count or not len(values):
        return None
    try:
        # Arrow's cast reads every text before it fails: a few first (4.2M UUIDs: 2.6 s)
        values.slice(0, _TRIAL).cast(pa.int64())
        ints = values.cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    # pyarrow-stubs type cast() as Array[Scalar[StringType]], not the StringArray pyarrow
    # returns
    text = cast("pa.StringArray | pa.ChunkedArray[pa.StringScalar]", values.cast(pa.string()))
    chunks = text.chunks if isinstance(text, pa.ChunkedArray) else [text]
    return _numpy(ints) if all(map(_canonical, chunks)) else None


def _canonical(text: pa.Array) -> bool:
    """Whether texts that Arrow's integer parsing read (an optional ``-`` and digits, or
    hexadecimal: ``0x1F``) are each the integer's canonical writing: none starts with ``+``,
    with ``-0``, or with ``0`` and goes on (which also refuses every hexadecimal text). Two
    bytes of each text are read, never the text itself (10M hashed ids: 0.6 s -> 0.03)."""
    if not len(text):
        return True
    offsets, data = string_buffers(text)
    if data is None:  # every text empty: Arrow parsed none of them
        return False
    start = offsets[:-1]
    first = data[start]
    # the byte after the first, for texts that have one (another text's first byte, or the
    # buffer's last, for those that do not: read only where the first is a sign or a 0)
    second = data[np.minimum(start + 1, len(data) - 1)]
    longer = np.diff(offsets) > 1
    bad = (first == ord("+")) | (longer & ((first == ord("0"))
                                          | ((first == ord("-")) & (second == ord("0")))))
    return not bad.any()


@dataclass(frozen=True)
class Numbered:
    """Ids that are one fixed text prefix and a number (``7``, ``tt0111161``, ``D1555982``,
    ``user_12``): ``values`` are the numbers; ``canonical`` when each is written as an
    integer (no leading zero), ``width`` when all are written with that many digits (zero
    padded). Either way text and number map one to one, so the ids can be compared, joined
    and counted as integers."""

    prefix: str
    canonical: bool
    width: int | None
    values: np.ndarray

    def agrees(self, other: Numbered) -> Numbered | None:
        """The reading both sets of ids share (None: they must stay text)."""
        if self.prefix != other.prefix:
            return None
        canonical = self.canonical and other.canonical
        width = self.width if self.width == other.width else None
        if not canonical and width is None:
            return None
        return Numbered(self.prefix, canonical, width, self.values)

    def text(self, numbers: np.ndarray) -> pa.Array:
        """The ids of ``numbers`` as written: ids of one width as rows of a byte matrix,
        others by Arrow's integer formatting."""
        width = self.width
        if width is None and self.canonical and len(numbers) and numbers.min() >= 0:
            low, high = _digits(int(numbers.min())), _digits(int(numbers.max()))
            width = low if low == high else None  # canonical ids that all have one length
        if width is not None and len(numbers) and numbers.min() >= 0:
            out = _write_numbered(self.prefix.encode(), numbers, width)
            if out is not None:
                return out
        out = from_numpy(numbers).cast(pa.string())
        if not self.canonical:
            assert self.width is not None  # ids read as numbers are canonical, or of one width
            out = pc.utf8_lpad(out, width=self.width, padding="0")
        if not self.prefix:
            return out
        # pyarrow-stubs take all scalars or all arrays here; pyarrow broadcasts the scalars
        return pc.binary_join_element_wise(  # type: ignore[call-overload]
            scalar(self.prefix), out, scalar(""))


def _digits(n: int) -> int:
    return len(str(abs(n)))


def _write_numbered(prefix: bytes, numbers: np.ndarray, width: int) -> pa.Array | None:
    """Strings ``prefix + digits`` for non-negative numbers zero-padded to ``width``: the
    rows of one byte matrix, written digit column by digit column (None past 32-bit
    offsets)."""
    n = len(numbers)
    rows = np.empty((n, len(prefix) + width), dtype=np.uint8)
    rows[:, : len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    rest = numbers.copy()
    for k in range(width):
        rows[:, len(prefix) + width - 1 - k] = rest % 10 + 48
        rest //= 10
    offsets = np.arange(n + 1, dtype=np.int64) * rows.shape[1]
    if offsets[-1] >= 2**31:
        return None
    return pa.StringArray.from_buffers(n, py_buffer(offsets.astype(np.int32)),
                                       py_buffer(rows))


def numbered_ids(values: pa.Array | pa.ChunkedArray, out: np.ndarray | None = None
                 ) -> Numbered | None:
    """The ids as a prefix and numbers (``Numbered``), or None. ``out``: an int32 array of
    the ids' length that ids of one length of up to 9 digits, and integers that fit, are
    written into (the caller's slice of a larger array); other numbers come back in arrays
    of their own."""
    if values.null_count or not len(values):
        return None
    if pa.types.is_integer(values.type):  # ids read as integers: canonical numbers already
        if values.type == pa.uint64() and pc.max(values).as_py() >= 2**63:
            return None
        numbers = _numpy(values)
        low, high = (int(v) for v in (numbers.min(), numbers.max()))
        narrow = low >= -(2**31) and high < 2**31  # half the memory for every later copy
        if narrow and out is not None:  # straight into the caller's place: no array of its own
            np.copyto(out, numbers, casting="unsafe")
            return Numbered("", True, None, out)
        return Numbered("", True, None, numbers.astype(np.int32 if narrow else np.int64,
                                                       copy=False))
    text = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if not pa.types.is_string(text.type):
        text = text.cast(pa.string())
    # a string array is a StringArray (pyarrow-stubs type combine_chunks() and cast() as Array)
    assert isinstance(text, pa.StringArray)
    found = _numbered_bytes(text, out)
    if found is not None:
        return found
    signed = integer_ids(text)  # signed integers (the byte reading takes digits only)
    return Numbered("", True, None, signed) if signed is not None else None


def _numbered_bytes(text: pa.StringArray, out: np.ndarray | None = None) -> Numbered | None:
    """``numbered_ids`` read from the string buffers: the prefix compared byte column by byte
    column, the digits checked as bytes, then parsed by Arrow's integer cast (with the
    prefix bytes turned into leading zeros), never a string per id in Python."""
    offsets, data = string_buffers(text)
    if data is None:
        return None
    first = text[0].as_py()
    prefix = first.rstrip("0123456789").encode()
    if prefix in (b"-", b"+"):  # a sign, not a prefix: integer_ids reads signed integers
        return None
    start = offsets[:-1]
    digits = np.diff(offsets)
    low, high = int(digits.min()) - len(prefix), int(digits.max()) - len(prefix)
    if low < 1 or high > 18:
        return None
    if low == high:  # one length: the ids are the rows of a byte matrix
        return _one_width(data[offsets[0] : offsets[-1]].reshape(len(text), -1), prefix, out)
    digits -= len(prefix)
    for k, byte in enumerate(prefix):
        if not (data[start + k] == byte).all():
            return None
    body = data[offsets[0] : offsets[-1]]
    if prefix:  # the prefix bytes become zeros: "i85187" is read as "085187"
        body = body.copy()
        for k in range(len(prefix)):
            body[start - offsets[0] + k] = 48
    # Only ASCII digits: Arrow's cast would also take "-5" and "0x1F"
    if not ((body - np.uint8(48)) <= 9).all():
        return None
    if prefix or offsets[0]:
        text = pa.StringArray.from_buffers(
            len(text), py_buffer((offsets - offsets[0]).astype(np.int32)),
            py_buffer(body))
    numbers = to_numpy(pc.cast(text, pa.int64()))
    # canonical: no leading zero (a lone "0" aside), so that text and number are one to one
    canonical = bool((numbers >= _LOW[digits]).all())
    if not canonical and low != high:
        return None
    if high < 10:  # fits 32 bits: half the memory for every later copy of the column
        numbers = numbers.astype(np.int32)
    return Numbered(prefix.decode(), canonical, low if low == high else None, numbers)


def _one_width(rows: np.ndarray, prefix: bytes, out: np.ndarray | None = None
               ) -> Numbered | None:
    """``_numbered_bytes`` for ids that all have one length, given as the rows of a byte
    matrix: the prefix and the digits checked column by column, and each number summed from
    its digit columns (2-3x faster than Arrow's cast; int32 up to 9 digits, into ``out``
    when given)."""
    for k, byte in enumerate(prefix):
        if not (rows[:, k] == byte).all():
            return None
    width = rows.shape[1] - len(prefix)
    dtype = np.dtype(np.int32 if width < 10 else np.int64)
    if out is not None and out.dtype == dtype:
        numbers = out
        numbers.fill(0)
    else:
        numbers = np.zeros(len(rows), dtype=dtype)
    for k in range(len(prefix), rows.shape[1]):  # one column at a time: no n x width temporary
        digit = rows[:, k] - np.uint8(48)  # "0".."9" -> 0..9, any other byte > 9
        if digit.max() > 9:
            return None
        numbers *= 10
        numbers += digit
    canonical = width == 1 or bool(numbers.min() >= _LOW[width])  # no leading zero
    return Numbered(prefix.decode(), canonical, width, numbers)


def _numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return to_numpy(values)


def cast_columns(
    table: pa.Table, types: dict[str, pa.DataType], label: str, unit: str = "row"
) -> pa.Table:
    """Cast each column to its type; text that is not a number is an error naming its rows."""
    columns = []
    for name, typ in types.items():
        col = table.column(name)
        if typ == ID:
            columns.append(_ids_as_text(col, name, label, unit))
            continue
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if col.type != typ and pa.types.is_integer(typ) and not pa.types.is_integer(col.type):
            typ = pa.float64()  # integers are a fast path: the caller checks floats it gets
        if col.type != typ:
            try:
                col = col.cast(typ)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                if pa.types.is_floating(typ) and (
                    pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
                ):
                    raise_non_numeric(label, name, col, unit)
                if pa.types.is_floating(typ) and pa.types.is_integer(col.type):
                    _raise_inexact(label, name, col, unit)
                raise InputError(
                    label, f"values of type {col.type} cannot be read as {typ}", column=name
                ) from None
        columns.append(col)
    return pa.table(columns, names=list(types))


def _ids_as_text(col: pa.ChunkedArray, name: str, label: str, unit: str) -> pa.ChunkedArray:
    """Ids of any scalar type, compared as text; nested values or bytes that are not UTF-8
    are refused, naming the rows. Integer ids (a Parquet or DataFrame column) stay integers:
    ``numbered_ids`` reads them as canonical numbers, so ``factorize`` codes them without a
    string per row or per distinct id."""
    if pa.types.is_dictionary(col.type) and pa.types.is_string(col.type.value_type):
        return col
    kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if pa.types.is_nested(kind):
        raise InputError(label, f"ids of type {kind}: ids must be text or numbers", column=name)
    if (pa.types.is_integer(col.type) and not col.null_count and len(col)
            and (col.type != pa.uint64() or pc.max(col).as_py() < 2**63)):
        return col if col.type == pa.int64() else col.cast(pa.int64())
    try:
        return col.cast(pa.string())
    except pa.ArrowInvalid:  # binary that is not UTF-8
        values = col.to_pylist()
        bad = [(i + 1, v) for i, v in enumerate(values) if isinstance(v, bytes) and not _utf8(v)]
        raise InputError(label, "ids that are not UTF-8 text", column=name, count=len(bad),
                         examples=bad[:5], unit=unit) from None


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _raise_inexact(label: str, name: str, column: pa.ChunkedArray, unit: str) -> None:
    """Integers a 64-bit float cannot hold exactly (past 2^53): which rows."""
    values = column.to_pylist()
    bad = [(i + 1, v) for i, v in enumerate(values) if v is not None and int(float(v)) != v]
    if bad:
        raise InputError(label, "integers too large to be exact as 64-bit floats (past 2^53 = "
                         "9,007,199,254,740,992)", column=name, count=len(bad),
                         examples=bad[:5], unit=unit, hint="rescale them, or give ranks")


# A number written with a decimal comma (``0,75``, ``-1,5``, ``1.234,5``)
_DECIMAL_COMMA = re.compile(r"[+-]?(\d{1,3}(\.\d{3})+|\d*),\d+")


def raise_non_numeric(label: str, name: str, column: pa.ChunkedArray, unit: str = "row",
                      decimal: str | None = None) -> None:
    """The error for a column with values that are not numbers; ``decimal``: the option
    that reads decimal commas (said when every bad value is one), or None."""
    text = to_numpy(column).astype(object)
    bad = np.flatnonzero(unparseable(text))
    if len(bad):
        examples = [(int(i) + 1, text[i]) for i in bad[:5]]
        commas = decimal is not None and all(
            _DECIMAL_COMMA.fullmatch(str(text[i])) for i in bad[:100])
        raise InputError(
            label, "non-numeric values", column=name, count=len(bad), examples=examples,
            unit=unit, hint=f"decimal commas? read them with {decimal} ','" if commas else None,
        )


def unparseable(values: np.ndarray) -> np.ndarray:
    """True where a text value is not a number (empty cells count as missing, not bad)."""
    bad = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):  # only on the error path, never on valid data
        if v == "":
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            bad[i] = True
        else:  # the CSV reader, unlike float(), refuses padded numbers and 1_000
            bad[i] = v != v.strip() or "_" in v
    return bad


def numeric_order(ids: pa.Array) -> np.ndarray | None:
    """The permutation sorting ids by integer value, when all are canonical integers that
    fit 64 bits (``007``, ``+5``, ``1e3`` are not); else None."""
    found = None
    for sample in (ids.slice(0, 1000), ids):  # most id sets fail on the first few
        found = numbered_ids(sample) if len(sample) else None
        if found is None or found.prefix or not found.canonical:
            return None
    assert found is not None  # the whole set passed
    numbers = found.values
    if (numbers[1:] >= numbers[:-1]).all():  # byte order is number order already
        return None
    return np.argsort(numbers, kind="stable")
