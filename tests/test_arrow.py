"""numpy <-> Arrow through buffers (``rankeval.io.arrow``) equals pyarrow's own conversions."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankeval.io.arrow import fill_null, from_numpy, scalar, to_numpy


@given(st.lists(st.booleans(), max_size=70), st.integers(0, 9), st.integers(0, 9))
def test_bools_round_trip_through_bits(values, start, cut):
    """Bit-packed booleans, sliced at any bit offset and split into chunks."""
    array = from_numpy(np.array(values, dtype=bool))
    assert array.equals(pa.array(values, pa.bool_()))
    sliced = array.slice(min(start, len(values)))
    assert to_numpy(sliced).tolist() == values[min(start, len(values)):]
    chunks = pa.chunked_array([sliced.slice(0, cut), sliced.slice(cut)], pa.bool_())
    assert to_numpy(chunks).tolist() == sliced.to_pylist()
    assert to_numpy(chunks).dtype == np.bool_


@given(st.lists(st.one_of(st.none(), st.text(max_size=5)), max_size=20))
def test_text_becomes_python_strings(values):
    array = pa.array(values, pa.string())
    out = to_numpy(pa.chunked_array([array.slice(0, 3), array.slice(3)]))
    assert out.dtype == object and out.tolist() == values


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.float64])
def test_numbers_share_memory(dtype):
    values = np.arange(10, dtype=dtype)
    array = from_numpy(values)
    assert array.to_pylist() == values.tolist()
    assert to_numpy(array.slice(3)).tolist() == values[3:].tolist()


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=60),
       st.lists(st.integers(0, 60), max_size=5), st.integers(0, 5),
       st.sampled_from([np.int8, np.int32, np.int64, np.uint32, np.uint64, np.float64]))
def test_chunked_numbers_are_joined_into_one_writable_array(values, cuts, start, dtype):
    """Chunks (sliced at any offset, empty ones among them) are joined by Arrow into its own
    pool: the values in order, of the column's type, and writable, as numpy's join was."""
    values = np.array(values, dtype=np.int64).astype(dtype)
    whole = from_numpy(values).slice(min(start, len(values)))
    bounds = sorted({0, len(whole), *(c % (len(whole) + 1) for c in cuts)})
    column = pa.chunked_array([whole.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
                              + [whole.slice(0, 0)], whole.type)
    out = to_numpy(column)
    assert out.dtype == dtype and out.tolist() == whole.to_pylist()
    if column.num_chunks > 2:  # joined, not a view of one chunk
        out[...] = 0
        assert not out.any() and whole.to_pylist() == values[len(values) - len(whole):].tolist()


@pytest.mark.parametrize("value, typ", [("", pa.string()), ("é x", pa.string()),
                                        (True, pa.bool_()), (-1, pa.int32()),
                                        (-1, pa.int64()), (0, pa.int64()), (2.5, pa.float64())])
def test_scalars_and_fill_null_match_pyarrow(value, typ):
    made = scalar(value, None if isinstance(value, str) else typ)
    assert made.type == typ and made.as_py() == value
    values = pa.chunked_array([pa.array([None, value, None], typ)])
    assert fill_null(values, value).equals(pc.fill_null(values, value))
