"""Subtopic judgements (the intent-aware metrics' truth): (user, item, subtopic) rows made one
truth row per (user, item), the rows kept beside it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankeval.errors import InputError, report
from rankeval.io.arrow import to_numpy


@dataclass(frozen=True)
class Aspects:
    """Subtopic judgements, read for the intent-aware metrics: per (user, item, subtopic) row,
    the truth row its (user, item) pair became, its subtopic (numbered 0.. by name, by number
    when all are numbers) and its relevance."""

    row: np.ndarray
    subtopic: np.ndarray
    relevance: np.ndarray
    names: pa.Array  # the subtopic ids, by number
    # per subtopic number, its rank in the order the truth first names each subtopic
    # (pyndeval numbers subtopics so, and adds an item's gains in that order)
    appearance: np.ndarray



def by_pair(truth, subtopic: pa.ChunkedArray):
    """Subtopic rows as one truth row per (user, item) with their highest relevance; the rows
    kept as ``aspects``. A (user, item, subtopic) judged twice is an error naming its rows."""
    def codes(col: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
        encoded = col.combine_chunks().dictionary_encode()
        return to_numpy(encoded.indices).astype(np.int64), encoded.dictionary

    (u, _), (i, items), (s, names) = codes(truth.user), codes(truth.item), codes(subtopic)
    n_i, n_s = len(items), len(names)
    # subtopics numbered in their natural order (by number when all are numbers, as ndeval's
    # are), in which ndeval adds an item's subtopic gains: its ideal ranking's ties depend on it
    text = [str(t) for t in names.cast(pa.string()).to_pylist()]  # ids are never null here
    numeric = all(t.strip().lstrip("+-").isdigit() for t in text)
    natural = sorted(range(n_s), key=lambda k: (int(text[k]), text[k]) if numeric
                     else text[k].encode())
    renumber = np.empty(n_s, dtype=np.int64)
    renumber[natural] = np.arange(n_s)
    s, names = renumber[s], names.take(pa.array(natural, pa.int64()))
    pair = u * n_i + i
    keys, first, row = np.unique(pair, return_index=True, return_inverse=True)
    triple = np.unique(row * np.int64(n_s) + s, return_index=True, return_counts=True)
    if (triple[2] > 1).any():
        seen = np.zeros(len(pair), dtype=bool)
        seen[triple[1]] = True
        idx = np.flatnonzero(~seen)
        report(InputError(
            truth.source.label, "repeated (user, item, subtopic) judgements",
            column=truth.columns.get("subtopic", "subtopic"), count=len(idx),
            examples=[(int(k) + 1, f"{truth.user[int(k)]} {truth.item[int(k)]} "
                       f"{subtopic[int(k)]}") for k in idx[:5]]))
    best = np.full(len(keys), -np.inf)
    np.maximum.at(best, row, truth.relevance)
    aspects = Aspects(row=row, subtopic=s.astype(np.int32), relevance=truth.relevance,
                      names=names, appearance=np.array(natural, dtype=np.int64))
    return dataclasses.replace(truth, user=truth.user.take(first), item=truth.item.take(first),
                               relevance=best, aspects=aspects)
