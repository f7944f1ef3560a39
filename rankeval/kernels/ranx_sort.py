"""ranx's order of each list: numba's quicksort of the negated scores, run by numba itself.

ranx (0.3) builds a Run by sorting each query's documents, in the order they were given
(a dict's, a file's or a DataFrame's rows), with ``np.argsort`` of the negated scores compiled
by numba (``ranx/data_structures/common.py``, ``sort_dict_by_value``). numba's quicksort is
not stable: past its insertion-sort size its partitions move tied scores in an order that
only the same algorithm gives, so it is run here, compiled by numba, over every list at once.
numba is an optional dependency (``rankeval[ranx]``; ranx's own dependency).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from rankeval.dependencies import require_tie_package


@functools.cache
def _kernel() -> Callable[[np.ndarray, np.ndarray, np.ndarray], None]:
    """The compiled kernel: ``out[a:b] = a + argsort(-score[a:b])`` for each list ``a:b``
    of ``starts``. Compiled once per process; cached on disk where numba can write its cache
    (next to this module, else its user-wide folder, or ``NUMBA_CACHE_DIR``), compiled
    anew otherwise (a read-only install with no writable cache folder)."""
    import numba  # optional dependency: rankeval[ranx], ranx's own sort

    def sort_lists(score, starts, out):
        for j in range(len(starts) - 1):
            a, b = starts[j], starts[j + 1]
            out[a:b] = a + np.argsort(-score[a:b])

    try:
        return numba.njit(cache=True)(sort_lists)
    except RuntimeError:  # numba finds no folder to cache in: compile without a cache
        return numba.njit(cache=False)(sort_lists)


def ranx_order(user: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The permutation that puts rows grouped by ``user`` (each user's rows contiguous, in
    file order) in ranx's order within each user: numba's ``np.argsort`` of the negated
    scores, as 64-bit floats (ranx's)."""
    require_tie_package("ranx", "numba")
    out = np.empty(len(user), dtype=np.int64)
    if not len(user):
        return out
    starts = np.flatnonzero(np.concatenate(([True], user[1:] != user[:-1], [True])))
    _kernel()(np.ascontiguousarray(score, dtype=np.float64), starts.astype(np.int64), out)
    return out
