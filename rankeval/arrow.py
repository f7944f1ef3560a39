"""numpy <-> Arrow for primitive columns, through their buffers.

``pa.array(ndarray)`` and ``.to_numpy()`` make pyarrow import pandas (to look for pandas types),
a fifth of a second the command line never needs. Moving buffers directly avoids it; anything
that is not a plain null-free number column takes pyarrow's own path.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_TYPES = {
    np.dtype(np.int8): pa.int8(),
    np.dtype(np.int32): pa.int32(),
    np.dtype(np.int64): pa.int64(),
    np.dtype(np.uint32): pa.uint32(),
    np.dtype(np.uint64): pa.uint64(),
    np.dtype(np.float64): pa.float64(),
}
_DTYPES = {str(t): d for d, t in _TYPES.items()}


def to_numpy(data: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A null-free number column as a numpy array (a view when it is one chunk)."""
    dtype = _DTYPES.get(str(data.type))
    if dtype is None or data.null_count:
        return data.to_numpy(zero_copy_only=False)
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    parts = [
        np.frombuffer(c.buffers()[1], dtype=dtype, count=len(c), offset=c.offset * dtype.itemsize)
        for c in chunks
        if len(c)
    ]
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numpy number array as an Arrow array sharing its memory."""
    values = np.ascontiguousarray(values)
    typ = _TYPES.get(values.dtype)
    if typ is None:
        return pa.array(values)
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])
