"""The join of the ordered run with the truth, and the ideal lists, block by block of users."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankeval.build.ordering import sort_order
from rankeval.io.encode import duplicates, pair_keys
from rankeval.kernels.chunk import segment_positions
from rankeval.kernels.distinct import any_repeated, distinct
from rankeval.kernels.threads import each
from rankeval.registry import REGISTRY
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.users import Codes, Selection
    from rankeval.io.load import Truth


def grade_bits(rel: np.ndarray, low: int = 1) -> int | None:
    """Bits that hold every relevance when all are whole numbers in low..2^20; else None."""
    if not len(rel):
        return None
    top, bottom = float(rel.max()), float(rel.min())
    if low <= bottom and 1 <= top < 2**20 and (rel == np.floor(rel)).all():
        return int(top).bit_length()
    return None


def truth_pairs(user, item, rel, n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positive truth rows as (key, relevance) sorted by key, and the rows (over the whole
    truth) that repeat an earlier row's pair."""
    key = pair_keys(user, item, n_items)
    bits = grade_bits(rel, low=0)
    if bits is not None and int(key.max()).bit_length() + bits <= 62:
        # Whole-number grades ride in the low bits: one plain sort of every row orders keys
        # and values and shows the repeats, several times faster than an argsort and gathers.
        key <<= bits
        key |= rel.astype(np.int64)
        sort_keys(key, user)
        grade = key & ((1 << bits) - 1)
        key >>= bits
        repeated = len(key) > 1 and bool((key[1:] == key[:-1]).any())
        positive = grade > 0
        keys, values = key[positive], grade[positive].astype(np.float64)
    else:
        positive = rel > 0
        keys, values = key[positive], rel[positive]
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        sort_keys(key, user)
        repeated = len(key) > 1 and bool((key[1:] == key[:-1]).any())
    if not repeated:
        return keys, values, np.zeros(0, dtype=np.int64)
    return keys, values, duplicates(pair_keys(user, item, n_items))  # rare: name the file rows


def sort_keys(keys: np.ndarray, user: np.ndarray) -> None:
    """Sort (user, ...) keys in place. Files usually list each user's rows together: when
    the users are in code order, blocks of whole users are sorted apart, on the two cores (a
    merge sort finds each block's users in order and only sorts within them: 2.45M keys,
    0.05 s by one quicksort, 0.024 s; 10M, 0.22 -> 0.12 s). Users out of code order (hashed
    or UUID ids) take one quicksort, which numpy runs in SIMD: moving the users' runs into
    order first took 2.4x as long (2.45M keys of 190,000 users' runs: 0.139 -> 0.057 s; 10M:
    0.47 -> 0.31 s)."""
    if len(keys) <= _BLOCK or (user[1:] < user[:-1]).any():
        keys.sort()
        return
    _each_block(lambda a, b: keys[a:b].sort(kind="stable"), _blocks(user))


def ideal(user: np.ndarray, rel: np.ndarray, n_users: int, kmax: int):
    """Each user's ideal list: the positive truth relevances ``rel`` of its rows (``user``
    sorted, handed over), highest first and cut at ``kmax``; with each user's highest
    relevance (-inf for none). Returns (user, pos, rel, max_relevance)."""
    iu, irel = ideal_lists(user, rel)
    ipos = segment_positions(iu)
    max_relevance = np.full(n_users, -np.inf)
    if len(iu):  # a user's first row holds its highest relevance
        first = np.flatnonzero(iu[1:] != iu[:-1]) + 1
        max_relevance[iu[0]] = irel[0]
        max_relevance[iu[first]] = irel[first]
    cut = ipos <= kmax
    if not cut.all():  # users with more relevant items than K
        iu, ipos, irel = iu[cut], ipos[cut], irel[cut]
    return iu, ipos, irel, max_relevance


def ideal_lists(user: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(user, rel) sorted by user, then relevance descending; ``user`` is sorted already and
    is reused (the caller hands it over)."""
    bits = grade_bits(rel)
    if bits is None:
        order = sort_order([(user, False), (rel, True)])
        return (user, rel) if order is None else (user[order], rel[order])
    top = (1 << bits) - 1
    users = int(user[-1]) + 1
    if bits <= 4 and users * (top + 1) <= 4 * len(user) + (1 << 20):
        # A few grades: count each user's rows per grade and write them out highest first,
        # with no sort; the users keep their rows, so ``user`` stands as it is.
        counts = np.bincount(user.astype(np.int64) * (top + 1) + (top - rel).astype(np.int64),
                             minlength=users * (top + 1))
        grades = np.tile(np.arange(top, -1, -1, dtype=np.uint8), users)
        return user, np.repeat(grades, counts).astype(np.float64)
    packed = user.astype(np.int64, copy=False)  # packed as top - rel, so that a plain
    packed <<= bits  # ascending sort puts the highest grade first
    packed |= (top - rel).astype(np.int64)
    packed.sort(kind="stable")  # in user order already (``sort_keys``)
    rel = top - (packed & top).astype(np.float64)
    packed >>= bits
    return packed, rel


_BLOCK = 1 << 17  # rows per block: its temporaries stay in cache-sized, reused memory


def _blocks(su: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges of about ``_BLOCK`` rows that never split a user (each user's rows
    together: ``su`` sorted, or grouped as ``Lists.grouped``)."""
    n = len(su)
    if n <= _BLOCK:
        return [(0, n)]
    cuts = [_run_start(su, c) for c in range(_BLOCK, n, _BLOCK)]  # back to a user's first row
    edges = distinct(np.array([0, *cuts, n], dtype=np.int64))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def _run_start(su: np.ndarray, row: int) -> int:
    """The first row of the run of equal codes that holds ``row``: looked for backwards, in
    windows that double (a run is one user's list, mostly short)."""
    code, width = su[row], 64
    while row > 0:
        low = max(row - width, 0)
        other = np.flatnonzero(su[low:row] != code)
        if len(other):
            return low + int(other[-1]) + 1
        row, width = low, width * 2
    return 0


def _each_block(work, blocks: list[tuple[int, int]]) -> list:
    """``work(a, b)`` for every block, on the two cores (numpy releases the GIL)."""
    return each(lambda ab: work(*ab), blocks)


def _block_keys(su, item, rows, n_items, a: int, b: int) -> np.ndarray:
    """(user, item) keys of the ordered rows a..b, made block by block: never one huge array."""
    return pair_keys(su[a:b], item[a:b] if rows is None else item[rows[a:b]], n_items)


def repeats(su, item, rows, n_items: int) -> np.ndarray | None:
    """Which ordered rows repeat the (user, item) of an earlier row; None when none does.

    Blocks hold whole users, so a pair cannot repeat across blocks."""

    def work(a: int, b: int) -> np.ndarray | None:
        keys = _block_keys(su, item, rows, n_items, a, b)
        if not any_repeated(keys):
            return None  # the clean case, told by hashing (half a stable sort's time)
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        flags = np.zeros(b - a, dtype=bool)
        flags[order[1:][sk[1:] == sk[:-1]]] = True
        return flags

    blocks = _blocks(su)
    found = _each_block(work, blocks)
    if all(f is None for f in found):
        return None
    repeat = np.zeros(len(su), dtype=bool)
    for (a, b), flags in zip(blocks, found, strict=True):
        if flags is not None:
            repeat[a:b] = flags
    return repeat


def lookup(keys, values, su, item, rows, n_items: int) -> np.ndarray:
    """The relevance of each ordered row: ``values[keys == key]``, 0 where the key is absent.

    ``keys`` are sorted and unique. A block's users own one short range of ``keys``, so each
    search runs in a small, cache-resident slice rather than over the whole truth."""
    out = np.empty(len(su))

    def work(a: int, b: int) -> None:
        if a == b:
            return
        lo, hi = np.searchsorted(keys, [int(su[a]) * n_items, (int(su[b - 1]) + 1) * n_items])
        if lo == hi:
            out[a:b] = 0.0
            return
        k, v = keys[lo:hi], values[lo:hi]
        q = _block_keys(su, item, rows, n_items, a, b)
        idx = np.searchsorted(k, q)
        np.minimum(idx, len(k) - 1, out=idx)
        np.copyto(out[a:b], np.where(k[idx] == q, v[idx], 0.0))

    _each_block(work, _blocks(su))
    return out


def needs_judgements(settings: Settings) -> bool:
    """Whether the build must mark judged items (a metric reads them, or condensed lists)."""
    return settings.judged_only or any(REGISTRY[s.name].judgements for s in settings.specs)


def judged_pairs(codes: Codes, truth: Truth) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys of the truth pairs, each with the value 1 when judged (relevance >= 0),
    else -1 (in the pool, unjudged)."""
    keys = pair_keys(codes.t_user, codes.t_item, codes.n_items)
    order = np.argsort(keys, kind="stable")
    return keys[order], np.where(truth.relevance[order] >= 0, 1.0, -1.0)


def nonrelevant(codes: Codes, truth: Truth, sel: Selection, settings: Settings) -> np.ndarray:
    """Judged non-relevant truth items (0 <= relevance, not relevant) per evaluated user."""
    t = settings.relevance_threshold
    rel = truth.relevance
    nonrelevant = (rel >= 0) & ~(rel > 0 if t is None else rel >= t)
    counts = np.bincount(codes.t_user[nonrelevant], minlength=codes.n_users)
    return counts[sel.evaluated]
