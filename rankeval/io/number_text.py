"""The byte order of integers' canonical text ("1" < "10" < "2", "-" before every digit), found
from the numbers themselves: numbered ids are coded in the order of their text, as every id
is (trec_eval compares docnos with strcmp), without writing the text."""

from __future__ import annotations

import numpy as np

from rankeval.io.cast import POWERS

_SCALE = np.array([10 ** (19 - d) for d in range(1, 20)], dtype=np.uint64)


def text_order(values: np.ndarray) -> np.ndarray | None:
    """The byte order of distinct integers (ascending) written canonically, as a permutation;
    None when it is their numeric order (no negatives, one length). "1" < "10" < "2":
    right-padding the digits to 19 places gives the order, the length breaks ties, and "-"
    sorts before every digit. One array of the values' size besides the answer: the digits
    are padded in place, run by run of one length (3.6M hashed ids: 0.33 -> 0.12 s, most of
    it fresh memory)."""
    zero = int(np.searchsorted(values, 0))  # values[:zero] are negative
    padded = _magnitude(values)
    lengths = 0
    # each sign's magnitudes, ascending (the negatives taken in reverse, through a view)
    for ascending in (padded[zero:], padded[:zero][::-1]):
        # the values are sorted: each length is one run, found by 18 binary searches
        edges = [0, *np.searchsorted(ascending, POWERS.astype(np.uint64)).tolist(),
                 len(ascending)]
        for digits in range(1, 20):
            run = ascending[edges[digits - 1] : edges[digits]]
            if len(run):
                run *= _SCALE[digits - 1]  # written through the view, in place
                lengths += 1
    if zero == 0 and lengths == 1:
        return None
    # each sign's values by their padded digits, negatives first; a tie ("1", "10", "100")
    # goes to the shorter, which a stable sort keeps from the values' own order (the
    # negatives taken in reverse: smallest magnitude first). Two stable sorts of one key
    # each, where a lexsort of three keys took 0.07-0.10 s on 3.8M values (now 0.04-0.07).
    out = np.empty(len(values), dtype=np.int64)
    out[zero:] = np.argsort(padded[zero:], kind="stable")
    out[zero:] += zero
    out[:zero] = np.argsort(padded[:zero][::-1], kind="stable")
    np.subtract(zero - 1, out[:zero], out=out[:zero])
    return out


def _magnitude(values: np.ndarray) -> np.ndarray:
    """|values| as uint64, exact for -2^63 too (np.abs wraps it): a negative's two's
    complement, 2^64 - its bits, in place."""
    out = values.astype(np.uint64)
    np.subtract(np.uint64(0), out, out=out, where=values < 0)
    return out
