"""Which partition of users a row goes to: a hash of the user id's text that every process
computes alike, so that every input's rows of a user meet in one task."""

from __future__ import annotations

from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import to_numpy


def as_text(users: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """User ids as text, as the loaders compare them (None: not castable, nested values; the
    loader then says so)."""
    try:
        return users if pa.types.is_string(users.type) else users.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def partition_of(text: pa.ChunkedArray, parts: int) -> np.ndarray:
    """Each row's partition: a hash of its text that every process computes alike (pandas'
    SipHash with a fixed key, over the block's distinct ids only); null ids go to 0."""
    from pandas.util import hash_array  # import cost: pandas takes 0.3 s, tasks that hash only

    encoded = cast(pa.DictionaryArray, pc.dictionary_encode(text.combine_chunks()))
    distinct = encoded.dictionary.to_numpy(zero_copy_only=False).astype(object)
    of_distinct = np.append(hash_array(distinct, categorize=False) % np.uint64(parts), 0)
    codes = to_numpy(encoded.indices.fill_null(len(distinct))).astype(np.int64)
    return of_distinct[codes].astype(np.int64)
