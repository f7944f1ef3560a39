"""What the fairness metrics read beyond the lists: every judged grade, for expected exposure
(``kernels/exposure.py``: the target shares the ideal ranks among the items of each grade), and
the items' groups with each user's target, for awrf (``kernels/fairness.py``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from rankeval.build.join import lookup
from rankeval.errors import InputError
from rankeval.io.encode import pair_keys
from rankeval.kernels.chunk import Chunk
from rankeval.kernels.fairness import ChunkGroups
from rankeval.params import target_shares
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.users import Codes, Selection
    from rankeval.io.groups import ItemGroups
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


def with_groups(chunk: Chunk, codes: Codes, truth: Truth, sel: Selection, settings: Settings,
                groups: ItemGroups) -> Chunk:
    """Every group column of ``--item-groups`` over the evaluation's item codes, with each
    evaluated user's target: the mean membership of its relevant items (awrf)."""
    for spec in settings.specs:  # a by= or a target group the file lacks: said before scoring
        given = dict(spec.params)
        column = groups.column(None if given.get("by") is None else str(given["by"]))
        for word in ("target", "background"):  # a background has no share for (none)
            names = column.names[:-1] if word == "background" else column.names
            shares = target_shares(str(given.get(word, "relevant")))
            unknown = sorted(set(shares or {}) - set(names))
            if unknown:
                raise InputError(groups.source.label, f"{spec}: no group {unknown[0]!r} in "
                                 f"column {column.column!r} for {word}= (groups: "
                                 f"{', '.join(names)})")
    user = sel.compact[codes.t_user]
    t = settings.relevance_threshold
    relevant = (user >= 0) & (truth.relevance > 0 if t is None else truth.relevance >= t)
    user, item = user[relevant].astype(np.int64), codes.t_item[relevant].astype(np.int64)
    n = chunk.n_users
    out = {}
    for name, membership in groups.columns.items():
        ptr, group, share = membership.of(codes.item_ids)
        base = ChunkGroups(membership.names, ptr, group, share, np.zeros((0, 0)),
                           membership.catalog_share())
        row, g, w = base.expand(item)
        width = len(membership.names)
        total = np.bincount(user[row] * width + g, w, minlength=n * width).reshape(n, width)
        mass = total.sum(axis=1)
        target = total / np.where(mass > 0, mass, 1.0)[:, None]
        out[name] = dataclasses.replace(base, relevant=target)
    return dataclasses.replace(chunk, groups=out)
