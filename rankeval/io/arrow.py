"""numpy <-> Arrow for primitive columns, through their buffers.

``pa.array``, ``pa.scalar`` (so any Python value given to a compute function) and
``.to_numpy()`` make pyarrow import pandas (to look for pandas types), a fifth of a second the
command line never needs. Moving buffers directly avoids it; anything
that is not a plain null-free number column takes pyarrow's own path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    # np.frombuffer and pa.py_buffer as typed here, for Python 3.11 (at run time these names
    # are numpy's and pyarrow's own functions, below). Before PEP 688 (3.12) no type says
    # "has the buffer protocol": numpy's stubs then accept as a buffer only bytes, memoryview,
    # ndarray and a few more, not a pyarrow Buffer, and pyarrow-stubs' py_buffer asks for
    # __buffer__, which numpy's stubs give ndarray on 3.12 only. Both are buffers at run time.
    def frombuffer(buffer: pa.Buffer, dtype: DTypeLike, count: int = -1,
                   offset: int = 0) -> np.ndarray: ...

    def py_buffer(obj: np.ndarray | bytes) -> pa.Buffer: ...
else:
    frombuffer = np.frombuffer
    py_buffer = pa.py_buffer

_TYPES: dict[np.dtype, pa.DataType] = {
    np.dtype(np.int8): pa.int8(),
    np.dtype(np.int32): pa.int32(),
    np.dtype(np.int64): pa.int64(),
    np.dtype(np.uint32): pa.uint32(),
    np.dtype(np.uint64): pa.uint64(),
    np.dtype(np.float64): pa.float64(),
}
_DTYPES: dict[str, np.dtype] = {str(t): d for d, t in _TYPES.items()}


def buffer(array: pa.Array, i: int) -> pa.Buffer:
    """``array.buffers()[i]``, one that the array's layout always has: the values of a number
    or bool array (1), the offsets of a text array (1). pyarrow-stubs type every item as
    optional, since a validity bitmap (0) or an empty text's data (2) may be None."""
    data = array.buffers()[i]
    assert data is not None
    return data


def string_buffers(text: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """A string array's (32-bit offsets) own slice of offsets, ``len(text) + 1`` of them,
    and its bytes (None when every string is empty): each string is
    ``data[offsets[i]:offsets[i + 1]]``, read without a copy."""
    offsets = frombuffer(buffer(text, 1), dtype=np.int32)[text.offset : text.offset + len(text)
                                                          + 1]
    data = text.buffers()[2]
    return offsets, None if data is None else frombuffer(data, dtype=np.uint8)


def to_numpy(data: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column as a numpy array: null-free numbers (a view when it is one chunk) and bools
    through their buffers, text as Python strings."""
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    if pa.types.is_boolean(data.type) and not data.null_count:
        parts = [np.unpackbits(frombuffer(buffer(c, 1), dtype=np.uint8),
                               bitorder="little", count=c.offset + len(c))[c.offset:]
                 for c in chunks]
        return np.concatenate(parts).view(np.bool_) if parts else np.zeros(0, dtype=np.bool_)
    if pa.types.is_string(data.type) or pa.types.is_large_string(data.type):
        return np.array(data.to_pylist(), dtype=object)  # nulls are None, as Arrow gives them
    dtype = _DTYPES.get(str(data.type))
    if dtype is None or data.null_count:
        return data.to_numpy(zero_copy_only=False)
    filled = [c for c in chunks if len(c)]
    if not filled:
        return np.zeros(0, dtype=dtype)
    # several chunks: Arrow's concatenation, into its own pool (on a fresh 80 MB column,
    # 0.04 s where numpy's took 0.17 s: a new block of the heap is first touched page by
    # page; the pool's are not)
    one = filled[0] if len(filled) == 1 else pa.concat_arrays(filled)
    return frombuffer(buffer(one, 1), dtype=dtype, count=len(one),
                      offset=one.offset * dtype.itemsize)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numpy number or bool array as an Arrow array (sharing its memory, bools packed
    to Arrow's bits)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, py_buffer(bits)])
    typ = _TYPES.get(values.dtype)
    if typ is None:
        return pa.array(values)
    return pa.Array.from_buffers(typ, len(values), [None, py_buffer(values)])


def nan_as_null(values: np.ndarray) -> pa.Array:
    """Floats as an Arrow array in which NaN (an undefined value, SPEC section 9) is null:
    an empty CSV cell, a Parquet null, never the text ``nan``."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    missing = np.isnan(values)
    nulls = int(np.count_nonzero(missing))
    if not nulls:
        return from_numpy(values)
    valid = py_buffer(np.packbits(~missing, bitorder="little"))
    return pa.Array.from_buffers(pa.float64(), len(values), [valid, py_buffer(values)],
                                 null_count=nulls)


def scalar(value: str | bool | float, typ: pa.DataType | None = None) -> pa.Scalar:
    """An Arrow scalar of ``typ`` (text when ``value`` is a str) for compute functions, which
    would otherwise convert a Python value with ``pa.scalar`` and so import pandas."""
    if isinstance(value, str):
        return one_string(value)[0]
    if typ is None or pa.types.is_boolean(typ):
        return from_numpy(np.array([value], dtype=np.bool_ if typ else None))[0]
    dtype = _DTYPES.get(str(typ))
    if dtype is None:
        return pa.scalar(value, typ)
    return from_numpy(np.array([value], dtype=dtype))[0]


def one_string(value: str) -> pa.StringArray:
    """A text array of ``value`` alone, made without ``pa.array`` (which imports pandas)."""
    data = value.encode()
    offsets = np.array([0, len(data)], dtype=np.int32)
    return pa.StringArray.from_buffers(1, py_buffer(offsets), py_buffer(data))


def fill_null(values: pa.Array | pa.ChunkedArray, value: str | bool | float):
    """``values`` with each null replaced by ``value`` (pyarrow's own imports pandas)."""
    if not values.null_count:
        return values
    return pc.coalesce(values, scalar(value, values.type))
