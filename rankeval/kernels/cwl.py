"""The C/W/L measures of cwl_eval (Azzopardi, Thomas and Moffat 2019) that ir_measures names:
SDCG, INST, INSQ, BPM and the four NERRs. Numpy only; kernels as in ``metrics.py``.

Each is a user model: after rank r the reader continues with probability C_r, so rank r is
seen with probability P_r = prod_{j<r} C_j, and the measure is the expected gain per item seen,
sum_r P_r g_r / sum_r P_r, over cwl_eval's 1000 ranks (the list padded with gain-0 items, an
unjudged item gains 0). Gains are grades scaled to [0, 1]: (clip(grade, min_rel, max_rel) -
min_rel) / (max_rel - min_rel). P is built rank by rank for all users at once; past the list,
where C depends only on the rank (and, for INST, the gain so far), the sum of P has a closed
form or a suffix sum shared by every user.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankeval.kernels.sums import Sums

DEPTH = 1000  # cwl_eval's ranks (its max_n)


def _gains(s: Sums) -> np.ndarray:
    low = float(s.params.get("min_rel", 0))
    high = float(s.params.get("max_rel", 1))
    rel = np.clip(np.maximum(s.c.rel, 0.0), low, high)  # negative grades count as 0 first
    return (rel - low) / (high - low)


def _expected_gain(s: Sums, k: float, cont: Callable[[np.ndarray, np.ndarray, np.ndarray],
                                                      np.ndarray],
                   tail: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """sum_r P_r g_r / sum_r P_r over DEPTH ranks. ``cont(rank, gain, gain so far)``: C at
    each row of the lists; ``tail(n, gain of the list)``: per user, sum over the ranks r = n+1
    .. DEPTH of prod_{n<j<r} C_j, the items past the list gaining 0."""
    c = s.c
    keep = c.pos <= DEPTH
    user, pos, g = c.user[keep], c.pos[keep].astype(np.int64), _gains(s)[keep]
    # Rank by rank for every user at once: the gain so far (summed in rank order, as
    # cwl_eval's cumsum, so that BPM's "below T" falls alike), C, and P at each row.
    so_far, step, seen = np.empty(len(pos)), np.empty(len(pos)), np.empty(len(pos))
    by_rank = np.argsort(pos, kind="stable")
    bounds = np.searchsorted(pos[by_rank], np.arange(1, int(pos.max(initial=0)) + 2))
    for r in range(1, len(bounds)):
        rows = by_rank[bounds[r - 1] : bounds[r]]
        first = r == 1  # else the row above is the same user's, one rank up
        so_far[rows] = g[rows] if first else so_far[rows - 1] + g[rows]
        seen[rows] = 1.0 if first else seen[rows - 1] * step[rows - 1]
        step[rows] = cont(np.full(len(rows), float(r)), g[rows], so_far[rows]) if r < k else 0
    n = np.bincount(user, minlength=c.n_users)
    last = np.cumsum(n) - 1
    after = np.ones(c.n_users)  # P just past the list
    has = n > 0
    after[has] = seen[last[has]] * step[last[has]]
    total = np.zeros(c.n_users)
    total[has] = so_far[last[has]]
    rest = np.where(n < DEPTH, after * tail(n, total), 0.0)
    if k != np.inf:
        rest = np.where(n < k, rest, 0.0)
    out = np.bincount(user, seen * g, minlength=c.n_users)
    return out / (np.bincount(user, seen, minlength=c.n_users) + rest)


def _suffix(factor: Callable[[np.ndarray], np.ndarray], k: float = np.inf
            ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``tail`` for a C that past the list depends on the rank alone: t(n) = 1 + C_{n+1}
    t(n+1), t(DEPTH) = 0, one array for every user."""
    ranks = np.arange(1, DEPTH + 1, dtype=np.float64)
    f = np.where(ranks < k, factor(ranks), 0.0)
    t = np.zeros(DEPTH + 1)
    for n in range(DEPTH - 1, -1, -1):
        t[n] = 1.0 + f[n] * t[n + 1]  # f[n] is C at rank n + 1
    return lambda n, total: t[np.minimum(n, DEPTH)]


def _quadratic(T: float) -> Callable[[np.ndarray], np.ndarray]:
    """INSQ's continuation ((r + 2T - 1) / (r + 2T))^2."""
    return lambda r: ((r + 2 * T - 1) / (r + 2 * T)) ** 2


def _sdcg(s: Sums, k: float) -> np.ndarray:
    """Scaled DCG: DCG@K of the [0, 1] gains over the sum of the first K discounts."""
    def cont(r, g, so_far):
        return np.log2(r + 1) / np.log2(r + 2)
    return _expected_gain(s, k, cont, _suffix(lambda r: np.log2(r + 1) / np.log2(r + 2), k))


def _nerr8(s: Sums, k: float) -> np.ndarray:
    """NERR, eq. 8 of Azzopardi et al. 2021: the reader stops on a gain, C = 1 - g."""
    return _expected_gain(s, k, lambda r, g, so_far: 1 - g, _suffix(np.ones_like, k))


def _nerr9(s: Sums, k: float) -> np.ndarray:
    """NERR, eq. 9: C = r / (r + 1) (1 - g)."""
    return _expected_gain(s, k, lambda r, g, so_far: r / (r + 1) * (1 - g),
                          _suffix(lambda r: r / (r + 1), k))


def _nerr10(s: Sums, k: float) -> np.ndarray:
    """NERR, eq. 10: C = p (1 - g), RBP's patience."""
    p = float(s.params.get("p", 0.9))
    return _expected_gain(s, k, lambda r, g, so_far: p * (1 - g),
                          _suffix(lambda r: np.full_like(r, p)))


def _nerr11(s: Sums, k: float) -> np.ndarray:
    """NERR, eq. 11: C = ((r + 2T - 1) / (r + 2T))^2 (1 - g), INSQ's patience."""
    quad = _quadratic(float(s.params.get("T", 1.0)))
    return _expected_gain(s, k, lambda r, g, so_far: quad(r) * (1 - g), _suffix(quad))


def _insq(s: Sums, k: float) -> np.ndarray:
    """INSQ (Moffat et al. 2012): C = ((r + 2T - 1) / (r + 2T))^2."""
    quad = _quadratic(float(s.params.get("T", 1.0)))
    return _expected_gain(s, k, lambda r, g, so_far: quad(r), _suffix(quad))


def _inst(s: Sums, k: float) -> np.ndarray:
    """INST (Moffat et al. 2015): C = ((r + a - 1) / (r + a))^2, a = 2T - (gain so far): the
    reader who still wants gain reads on. Past the list a is constant, and the products
    telescope: sum_{r>n} ((n + a) / (r - 1 + a))^2 = (n + a)^2 (trigamma(n + a) -
    trigamma(DEPTH + a))."""
    T = float(s.params.get("T", 1.0))

    def cont(r, g, so_far):
        a = 2 * T - so_far
        return ((r + a - 1) / (r + a)) ** 2

    def tail(n, total):
        x = n + 2 * T - total  # > 0: the gain so far is at most n
        return x**2 * (trigamma(x) - trigamma(DEPTH + 2 * T - total))

    return _expected_gain(s, k, cont, tail)


def _bpm(s: Sums, k: float) -> np.ndarray:
    """The static Bejeweled Player Model (Zhang et al. 2017), unit costs: the reader goes on
    while the gain so far is below T and stops after rank K."""
    T = float(s.params.get("T", 1.0))
    return _expected_gain(s, k, lambda r, g, so_far: (so_far < T).astype(np.float64),
                          _bpm_tail(T, k))


def _bpm_tail(T: float, k: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    # past the list the gain so far stays: on to rank K (or DEPTH) while it is below T
    stop = min(k, DEPTH)
    return lambda n, total: np.where(total < T, np.maximum(stop - n, 1), 1).astype(np.float64)


def trigamma(x: np.ndarray) -> np.ndarray:
    """psi'(x) for x > 0: the recurrence psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then
    the asymptotic series (relative error below 1e-12)."""
    x = np.array(x, dtype=np.float64)
    out = np.zeros_like(x)
    small = x < 10
    while small.any():
        out[small] += 1.0 / x[small] ** 2
        x[small] += 1.0
        small = x < 10
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv2 * (1 / 6 + inv2 * (-1 / 30 + inv2 * (1 / 42 + inv2 * (-1 / 30
                                                                       + inv2 * 5 / 66))))
    return out + inv + inv2 / 2 + inv * series


KERNELS: dict[str, Callable[[Sums, float], np.ndarray]] = {
    "sdcg": _sdcg, "nerr8": _nerr8, "nerr9": _nerr9, "nerr10": _nerr10, "nerr11": _nerr11,
    "inst": _inst, "insq": _insq, "bpm": _bpm,
}
