"""Item features (``--item-features``): per-item vectors from numeric columns, a list column,
or tags made one-hot; for the similarity metrics (ild, serendipity)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import fill_null, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import finite_column, id_column, read_typed
from rankeval.io.columns import resolve_role
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Source, Table


@dataclass(frozen=True)
class ItemFeatures:
    """Per-item vectors (numeric columns, a list column, or tags made one-hot)."""

    item: pa.ChunkedArray
    vectors: np.ndarray  # rows x dims, float64
    source: Source
    columns: dict[str, str]
    kind: str  # "columns", "list" or "tags"
    # items whose one tag holds a space, when every item has one tag (a space-separated list
    # read whole, perhaps: said as a warning)
    spaced: int = 0


# What separates the tags of a text column (``--tag-separator``) when the file does not say
TAG_SEPARATOR = "|"


def load_item_features(table: Table | MemoryTable, item_col: str | None = None,
                       tag_separator: str | None = None) -> ItemFeatures:
    """Item vectors for similarity metrics: one list column (Parquet, Arrow) of numbers, or
    numeric columns (``f0 .. fn`` in CSV), or one text column of tags made one-hot: split on
    ``tag_separator``, else on what the format says of the column (a RecBole ``token_seq``:
    spaces), else on ``|`` (``drama|comedy``); or a list of strings."""
    label = table.label
    item, others = item_and_others(table, "item_features", item_col, "no feature columns: "
                                   "give numeric columns, a list column or a column of tags "
                                   "beside the item column")
    nested = table.nested(others[0]) if len(others) == 1 else None
    source = lambda n: Source(table.path, table.format, n)  # noqa: E731
    if nested is not None:
        ids = id_column(read_typed(table, {item: ID}), item, label)
        vectors, kind = _list_vectors(nested, others[0], label)
        return ItemFeatures(ids, vectors, source(len(ids)), {"item": item}, kind)
    if len(others) == 1 and isinstance(table, Table) and others[0] in table.vectors:
        data = read_typed(table, {item: ID, others[0]: pa.string()})
        vectors, kind = _list_vectors(_numbers(data.column(others[0]),
                                               table.sequences[others[0]], others[0], label),
                                      others[0], label)
        return ItemFeatures(id_column(data, item, label), vectors, source(data.num_rows),
                            {"item": item}, kind)
    if len(others) == 1:
        data = read_typed(table, {item: ID, others[0]: pa.string()})
        try:
            values = finite_column(read_typed(table, {others[0]: pa.float64()}), others[0], label)
        except InputError:  # text: tags
            told = tag_separator or getattr(table, "sequences", {}).get(others[0])
            tags = pc.split_pattern(fill_null(data.column(others[0]), ""),
                                    told or TAG_SEPARATOR)
            return ItemFeatures(id_column(data, item, label), _one_hot(tags),
                                source(data.num_rows), {"item": item}, "tags",
                                0 if told else _spaced(tags))
        return ItemFeatures(id_column(data, item, label), values[:, None], source(data.num_rows),
                            {"item": item}, "columns")
    data = read_typed(table, {item: ID} | {c: pa.float64() for c in others})
    vectors = np.column_stack([finite_column(data, c, label) for c in others])
    return ItemFeatures(id_column(data, item, label), vectors, source(data.num_rows),
                        {"item": item}, "columns")


def item_and_others(table: Table | MemoryTable, role: str, item_col: str | None,
                    missing: str) -> tuple[str, list[str]]:
    """A per-item table's item column (found as the main inputs' are) and every other
    column; ``missing``: the error when there is no other column."""
    item = resolve_role(table.columns, role, {"item_col": item_col}, table.label)["item"]
    assert item is not None  # required: resolve_role raises without it
    others = [c for c in table.columns if c != item]
    if not others:
        raise InputError(table.label, missing)
    return item, others


def _list_vectors(col: pa.ChunkedArray, name: str, label: str) -> tuple[np.ndarray, str]:
    # pyarrow-stubs type combine_chunks() as Array; pyarrow gives the column's own array class
    arr = cast("pa.ListArray", col.combine_chunks())
    flat = arr.flatten()
    lengths = to_numpy(fill_null(pc.list_value_length(arr), 0))
    if pa.types.is_string(flat.type) or pa.types.is_large_string(flat.type):
        return _one_hot(col), "tags"
    if not len(lengths) or (lengths != lengths[0]).any() or lengths[0] == 0:
        raise InputError(label, "feature lists of different lengths (every item needs a "
                         "vector of the same size)", column=name)
    try:
        values = to_numpy(flat.cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(label, f"feature lists of type {flat.type}: numbers are needed",
                         column=name) from None
    if not np.isfinite(values).all():
        raise InputError(label, "feature values that are not finite numbers", column=name)
    return values.reshape(len(lengths), int(lengths[0])), "list"


def _numbers(col: pa.ChunkedArray, separator: str, name: str, label: str) -> pa.ChunkedArray:
    """A text column of number sequences (RecBole's ``float_seq``: ``0.1 0.7 0.2``) as lists
    of numbers."""
    parts = pc.split_pattern(pc.utf8_trim_whitespace(fill_null(col, "")), separator)
    try:
        return parts.cast(pa.list_(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(label, "a float_seq value that is not numbers separated by "
                         f"{separator!r}", column=name) from None


def _spaced(tags: pa.ChunkedArray) -> int:
    """The items whose one tag holds a space, when every item has exactly one tag; else 0."""
    trimmed = to_numpy(pc.utf8_trim_whitespace(pc.list_flatten(tags))).astype(object)
    if len(trimmed) != len(tags) or (trimmed == "").any():
        return 0  # some item has several tags, or none
    return int(np.count_nonzero(to_numpy(pc.match_substring(pa.array(trimmed), " "))))


def _one_hot(tags) -> np.ndarray:
    """Lists of tags as a one-hot matrix (empty tags ignored)."""
    # pyarrow-stubs type combine_chunks() as Array; pyarrow gives the column's own array class
    col = cast("pa.ListArray", tags.combine_chunks() if isinstance(tags, pa.ChunkedArray) else tags)
    lengths = to_numpy(fill_null(pc.list_value_length(col), 0))
    flat = pc.utf8_trim_whitespace(col.flatten().cast(pa.string()))
    encoded = flat.dictionary_encode()
    codes = to_numpy(fill_null(encoded.indices, -1)).astype(np.int64)
    names = encoded.dictionary.to_pylist()
    rows = np.repeat(np.arange(len(lengths)), lengths)
    empty = names.index("") if "" in names else -1
    keep = (codes >= 0) & (codes != empty)
    matrix = np.zeros((len(lengths), max(len(names), 1)))
    matrix[rows[keep], codes[keep]] = 1.0
    return matrix
