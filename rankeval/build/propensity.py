"""What the propensity-weighted metrics read beyond the lists (``kernels/propensity.py``):
each item's weight, the inverse of its chance of being observed under the popularity model
of Yang et al. (2018), and each user's sum of weights over its relevant items."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from rankeval.kernels.chunk import Chunk
from rankeval.params import exponent, kernel_params

if TYPE_CHECKING:
    from rankeval.build.stages import Codes, Selection
    from rankeval.io.load import Truth


def with_propensities(chunk: Chunk, codes: Codes, truth: Truth, sel: Selection,
                      settings) -> Chunk:
    """Per exponent the metrics ask for: each item code's weight (popularity / the largest
    popularity, to the power -exponent; 0 for an item unseen in training, which the
    weighted metrics leave out) and per evaluated user the sum of its relevant items' weights
    and their number."""
    assert chunk.popularity is not None  # the metrics need --train, which gives popularity
    pop = chunk.popularity.astype(np.float64)
    top = float(pop.max(initial=0.0))
    user = sel.compact[codes.t_user]
    t = settings.relevance_threshold
    relevant = (user >= 0) & (truth.relevance > 0 if t is None else truth.relevance >= t)
    user, item = user[relevant].astype(np.int64), codes.t_item[relevant].astype(np.int64)
    out = {}
    for spec in settings.specs:
        e = exponent(spec.name, kernel_params(spec.params, spec.name))
        if e is None or e in out:
            continue
        with np.errstate(divide="ignore"):
            weight = np.where(pop > 0, (pop / (top or 1.0)) ** -e, 0.0)
        total = np.bincount(user, weight[item], minlength=chunk.n_users)
        count = np.bincount(user, (weight[item] > 0).astype(np.float64),
                            minlength=chunk.n_users)
        out[e] = (weight, total, count)
    return dataclasses.replace(chunk, propensity=out)
