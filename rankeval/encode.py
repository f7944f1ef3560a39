"""Ids to integer codes, and (user, item) pairs to int64 keys: what every later stage works on."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import from_numpy, to_numpy


def factorize(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], pa.Array]:
    """Integer codes for the ids of several columns over one shared dictionary.

    Codes follow the byte order of the ids, so sorting by code sorts by id (trec_eval compares
    docnos with strcmp) and the output order never depends on row order. Ids read as
    dictionaries are hashed once per distinct value of each chunk, never once per row: the
    chunks' small dictionaries are encoded together in one pass, and each row's code is then a
    gather through its chunk's slice of that encoding.
    """
    pieces = [[_as_dictionary(chunk) for chunk in col.chunks] for col in columns]
    values = [v for col in pieces for v, _ in col] or [pa.array([], pa.string())]
    if sum(v.nbytes for v in values) >= 2**31 - 2**20:  # past what 32-bit string offsets hold
        values = [v.cast(pa.large_string()) for v in values]
    encoded = pa.concat_arrays(values).dictionary_encode()
    distinct = encoded.dictionary
    codes = to_numpy(encoded.indices).astype(np.int32, copy=False)
    by_bytes = to_numpy(pc.sort_indices(distinct))
    if (by_bytes[1:] < by_bytes[:-1]).any():  # ids arrived out of order: renumber them
        rank = np.empty(len(by_bytes), dtype=np.int32)
        rank[by_bytes] = np.arange(len(by_bytes), dtype=np.int32)
        codes = rank[codes]
        distinct = distinct.take(from_numpy(by_bytes))
    out, start = [], 0
    for col in pieces:
        column_codes = np.empty(sum(len(idx) for _, idx in col), dtype=np.int32)
        row = 0
        for dictionary, idx in col:
            lookup = codes[start : start + len(dictionary)]
            np.take(lookup, idx, out=column_codes[row : row + len(idx)])
            start, row = start + len(dictionary), row + len(idx)
        out.append(column_codes)
    return out, distinct


def _as_dictionary(chunk: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct values, each row's index into them) of one chunk of ids."""
    if not pa.types.is_dictionary(chunk.type):
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
    """Which ids of a dictionary have leading or trailing whitespace; None when none has."""
    mask = pc.not_equal(dictionary, pc.utf8_trim_whitespace(dictionary))
    if not pc.any(mask).as_py():
        return None
    return to_numpy(pc.cast(mask, pa.int8())).astype(bool)
