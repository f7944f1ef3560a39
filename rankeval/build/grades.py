"""Every judged grade in the chunk, for the expected-exposure metrics (``kernels/exposure.py``):
the target exposure shares the ranks of the ideal ranking among the items of each grade."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from rankeval.build.encode import pair_keys
from rankeval.build.join import lookup
from rankeval.kernels.chunk import Chunk

if TYPE_CHECKING:
    from rankeval.build.stages import Codes, Selection
    from rankeval.io.load import Truth


def with_grades(chunk: Chunk, codes: Codes, truth: Truth, sel: Selection) -> Chunk:
    """The evaluated users' grade levels (every truth row, relevant or not, its grade's level:
    the user's rows of one grade, ``level_start`` rows of higher grades above them in the
    ideal ranking) and each ranked row's level (-1: not in the truth)."""
    user = sel.compact[codes.t_user]
    kept = user >= 0
    user, item, rel = user[kept], codes.t_item[kept], truth.relevance[kept]
    order = np.lexsort((-rel, user))
    user, item, rel = user[order], item[order], rel[order]
    new = np.ones(len(user), dtype=bool)
    new[1:] = (user[1:] != user[:-1]) | (rel[1:] != rel[:-1])
    level = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    level_user = user[starts]
    above = starts - np.searchsorted(user, level_user)  # rows of the user before the level
    keys = pair_keys(user, item, codes.n_items)
    by_key = np.argsort(keys)
    found = lookup(keys[by_key], (level[by_key] + 1).astype(np.float64), chunk.user,
                   chunk.item, None, codes.n_items)
    return dataclasses.replace(
        chunk, level_user=level_user.astype(np.int64), level_start=above.astype(np.int64),
        level_size=np.diff(np.append(starts, len(user))).astype(np.int64),
        row_level=found.astype(np.int64) - 1)
