"""Subtopic judgements in the chunk, for the intent-aware metrics (``kernels/diversity.py``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from rankeval.errors import OptionError
from rankeval.kernels.chunk import Chunk
from rankeval.presets import preset_of
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.users import Codes, Selection
    from rankeval.io.load import Truth


def with_aspects(chunk: Chunk, codes: Codes, truth: Truth, sel: Selection, settings: Settings
                 ) -> Chunk:
    """The evaluated users' relevant (user, item, subtopic) triples, for the intent-aware
    metrics: sorted by (user, item), subtopics renumbered 0.. in user order, in the order
    their gains are added (the preset's ``subtopic_order``: by number, as ndeval, or as the
    truth first names them, as pyndeval)."""
    aspects = truth.aspects
    assert aspects is not None
    if settings.exclude_seen_truth:  # its truth rows would no longer be the aspects' rows
        raise OptionError("{opt:exclude_seen_truth} cannot drop subtopic judgements: leave it "
                          "out with the intent-aware metrics")
    t = settings.relevance_threshold
    relevant = aspects.relevance > 0 if t is None else aspects.relevance >= t
    rows = aspects.row[relevant]
    users = sel.compact[codes.t_user[rows]]
    kept = users >= 0
    user, item = users[kept], codes.t_item[rows][kept]
    sub = aspects.subtopic[relevant][kept].astype(np.int64)
    preset = preset_of(settings.compat)
    if preset is not None and preset.subtopic_order == "appearance":
        sub = aspects.appearance[sub]  # pyndeval's numbers: the truth's order
    order = np.lexsort((sub, item, user))  # an item's subtopics in order: ndeval adds so
    user, item, sub = user[order], item[order], sub[order]
    width = np.int64(int(sub.max()) + 1 if len(sub) else 1)
    keys, flat = np.unique(user.astype(np.int64) * width + sub, return_inverse=True)
    return dataclasses.replace(
        chunk, aspect_user=user.astype(np.int32), aspect_item=item.astype(np.int32),
        aspect_sub=flat.astype(np.int64),
        aspect_size=np.bincount(flat, minlength=len(keys)).astype(np.float64),
        n_aspects=np.bincount(keys // width, minlength=sel.counts.evaluated))
