"""Columns to the types a caller asks for: ids as text, numbers as numbers, and every value
that does not convert named by its rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError

# Ids are asked for as this type: the CSV reader dictionary-encodes them while parsing, which
# is faster than reading text and encoding it after; other sources may answer with plain text.
ID = pa.dictionary(pa.int32(), pa.string())


_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)
# A canonical integer of L digits lies in [_LOW[L], _HIGH[L]) (one digit: 0..9; else no
# leading zero); index 0 and lengths past 19 digits admit nothing.
_LOW = np.array([1, 0, *_POWERS[:18]], dtype=np.int64)
_HIGH = np.array([0, *_POWERS, np.iinfo(np.int64).max], dtype=np.int64)


def integer_ids(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The ids as int64 when every one is an integer written canonically (``7``, ``-12``;
    not ``007``, ``+5``, ``-0``, ``1e3`` or ``5.0``), so that the integer and the text name
    the same id; else None. Ids then compare, join and count as integers, without hashing
    text."""
    if values.null_count or not len(values):
        return None
    try:
        ints = values.cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    n = _numpy(ints)
    if n.min() < -(10**18):  # past what the length check below covers: stay with text
        return None
    negative = n < 0
    digits = _numpy(pc.binary_length(values.cast(pa.string()))) - negative
    digits = np.minimum(digits, len(_LOW) - 1)
    magnitude = np.abs(n)
    ok = (magnitude >= _LOW[digits]) & (magnitude < _HIGH[digits]) & ~(negative & (n == 0))
    return n if ok.all() else None


def _numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_numpy(zero_copy_only=False)


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
    are refused, naming the rows."""
    if pa.types.is_dictionary(col.type) and pa.types.is_string(col.type.value_type):
        return col
    kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
    if pa.types.is_nested(kind):
        raise InputError(label, f"ids of type {kind}: ids must be text or numbers", column=name)
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


def raise_non_numeric(label: str, name: str, column: pa.ChunkedArray, unit: str = "row") -> None:
    text = column.to_numpy(zero_copy_only=False).astype(object)
    bad = np.flatnonzero(unparseable(text))
    if len(bad):
        examples = [(int(i) + 1, text[i]) for i in bad[:5]]
        raise InputError(
            label, "non-numeric values", column=name, count=len(bad), examples=examples,
            unit=unit,
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


