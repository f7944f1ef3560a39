"""The order of each user's list: by rank, by score with a tie rule, or by file order; one
implementation for ``score``, ``validate``, ``compare`` and ``convert``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.conventions import TIE_AWARE, TIE_PACKAGES
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.kernels.distinct import count_distinct
from rankeval.kernels.ranx_sort import ranx_order
from rankeval.notices import Notice
from rankeval.params import list_ties
from rankeval.settings import Settings

if TYPE_CHECKING:
    from typing import Literal

    from rankeval.io.load import Predictions


def take(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """``values[rows]``; ``rows`` None means every row, in order."""
    return values if rows is None else values[rows]


def _in_order(keys: list[tuple[np.ndarray, bool]], undecided: np.ndarray | None = None) -> bool:
    """Whether rows already follow ``keys`` (primary first; ``True`` means descending);
    ``undecided``: the neighbour pairs the keys are to order (default: every pair)."""
    if undecided is None:
        undecided = np.ones(max(len(keys[0][0]) - 1, 0), dtype=bool)
    for values, descending in keys:
        a, b = (values[1:], values[:-1]) if descending else (values[:-1], values[1:])
        if (undecided & (a > b)).any():
            return False
        undecided &= a == b
        if not undecided.any():
            break
    return True


def sort_order(keys: list[tuple[np.ndarray, bool]], runs_stay: bool = False
               ) -> np.ndarray | None:
    """A stable sort permutation by several keys, primary first; ``(values, descending)``;
    None when the rows are in that order already.

    Files usually arrive grouped and ordered already, so that case costs one linear check;
    a file whose users come each in one run, in order within it, but not in the order of
    their codes (ids that are hashes, UUIDs, numbers in no order) costs a sort of its runs
    alone (``runs_order``); otherwise Arrow's multi-key sort, which is much faster than
    ``np.lexsort``. ``runs_stay``: such runs are left where they stand (None), for a caller
    that moves them later, when fewer rows are left (``Lists.in_user_order``).
    """
    if _in_order(keys):
        return None
    runs = _runs(keys)
    if runs is not None:
        return None if runs_stay else runs_order(*runs)
    table = pa.table({f"k{j}": from_numpy(values) for j, (values, _) in enumerate(keys)})
    sort_keys: list[tuple[str, Literal["ascending", "descending"]]] = [
        (f"k{j}", "descending" if d else "ascending") for j, (_, d) in enumerate(keys)]
    return to_numpy(pc.sort_indices(table, sort_keys=sort_keys))


def user_runs(user: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    """When each user's rows stand together, as one run (the users in any order): (each
    run's first row, the runs in user order, the rows); None otherwise."""
    return _runs([(user, False)])


def _runs(keys: list[tuple[np.ndarray, bool]]) -> tuple[np.ndarray, np.ndarray, int] | None:
    """When each value of the (ascending) primary key is one run of rows and the other keys
    are in order within each run: (each run's first row, the runs in key order, the rows);
    None otherwise."""
    primary, descending = keys[0]
    if descending or len(primary) < 2:
        return None
    same = primary[1:] == primary[:-1]
    starts = np.flatnonzero(~same) + 1
    starts = np.concatenate((np.zeros(1, dtype=starts.dtype), starts))
    runs = _distinct_order(primary[starts])
    if runs is None:  # a key in two runs
        return None
    if len(keys) > 1 and not _in_order(keys[1:], same):
        return None
    return starts, runs, len(primary)


def _distinct_order(heads: np.ndarray) -> np.ndarray | None:
    """The permutation sorting ``heads`` when no two are equal; None when some are. Integers
    over a range not much wider than their count (user codes) are placed by their value
    rather than sorted (450,000 codes: 34 -> 3 ms)."""
    low, high = (int(heads.min()), int(heads.max())) if len(heads) else (0, -1)
    if heads.dtype.kind in "iu" and high - low < 4 * len(heads) + (1 << 16):
        slot = np.full(high - low + 1, -1, dtype=np.int64)
        slot[heads - low] = np.arange(len(heads))
        runs = slot[slot >= 0]
        return runs if len(runs) == len(heads) else None
    runs = np.argsort(heads, kind="stable")
    ordered = heads[runs]
    return None if (ordered[1:] == ordered[:-1]).any() else runs


def runs_order(starts: np.ndarray, runs: np.ndarray, n: int) -> np.ndarray:
    """The stable sort permutation of rows in runs (``_runs``): the runs moved whole (int32
    below 2^31 rows: half the memory every gather through it reads)."""
    dtype = np.int32 if n < 2**31 else np.int64
    lengths = np.diff(np.append(starts, n))[runs]
    landed = np.cumsum(lengths) - lengths  # where each run starts in the sorted order
    perm = np.repeat((starts[runs] - landed).astype(dtype), lengths)
    perm += np.arange(n, dtype=dtype)
    return perm


def order_rows(
    user: np.ndarray,
    item: np.ndarray,
    rank: np.ndarray | None,
    score: np.ndarray | None,
    ties: str,
    keep: np.ndarray | None = None,
    runs_stay: bool = False,
) -> np.ndarray | None:
    """Permutation of the rows ``keep`` (None: all; ``user`` and ``item`` are already taken at
    ``keep``) that sorts them by user, then by the run's own order; None when they are in that
    order already (``runs_stay``: or when each user's rows are one run in that order, the runs
    in any order: ``sort_order``).

    Item codes follow the byte order of the ids, so ``trec`` (item id descending, as trec_eval
    compares docnos with strcmp) and ``item-asc`` are a sort on codes; a rule that is
    another tool's own sort (``TIE_PACKAGES``: ranx's) runs it on each user's rows in file
    order. A rule per metric (``provider``) orders one list for all by its shared rule
    (``params.list_ties``).
    """
    ties = list_ties(ties)
    if rank is not None:
        return sort_order([(user, False), (take(rank, keep), False)], runs_stay)
    if score is not None:
        by_score = [(user, False), (take(score, keep), True)]
        if ties == "input":
            return sort_order(by_score, runs_stay)  # stable: tied rows keep the file order
        if ties in TIE_PACKAGES:
            return _tool_order(user, take(score, keep))
        return sort_order([*by_score, (item, ties == "trec")], runs_stay)
    return sort_order([(user, False)], runs_stay)  # stable: the file order within each user


def _tool_order(user: np.ndarray, score: np.ndarray) -> np.ndarray | None:
    """ranx's order (``kernels.ranx_sort``): each user's rows in file order (a stable sort
    by user), then numba's quicksort of their negated scores; None when that is the order
    the rows have."""
    grouped = sort_order([(user, False)])
    within = ranx_order(take(user, grouped), take(score, grouped))
    perm = within if grouped is None else grouped[within]
    if (perm == np.arange(len(perm))).all():
        return None
    return perm


def scores_against_ranks(su: np.ndarray, score: np.ndarray, ties_count: bool) -> int:
    """Users whose scores, in rank order, rise (``ties_count``: or stay equal).

    Only a rise changes what a score-ordering tool computes from rows that keep their ranks;
    a file written without its ranks (a TREC run from ``convert``) is reordered by such a tool
    on ties too, so there ties count.
    """
    same_user = su[1:] == su[:-1]
    bad = same_user & ((score[1:] >= score[:-1]) if ties_count else (score[1:] > score[:-1]))
    return count_distinct(su[1:][bad]) if bad.any() else 0


def tie_groups(su: np.ndarray, score: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
    """Per row, the pos of the first row of its run of equal scores within the user's list
    (its tie group); None when no two neighbours tie."""
    same = (su[1:] == su[:-1]) & (score[1:] == score[:-1])
    if not same.any():
        return None
    first = np.arange(len(su))
    first[1:][same] = 0
    np.maximum.accumulate(first, out=first)
    return pos[first]


def ordered_by(preds: Predictions, order_by: str) -> str:
    """What orders each list of ``preds``: ``rank`` (the file's ranks), ``score`` (its
    scores, tied scores by the tie rule) or ``input`` (the file's row order); ``order_by``:
    the setting that picks ranks or scores when the file has both."""
    if preds.rank is not None and (order_by == "rank" or preds.score is None):
        return "rank"
    return "score" if preds.score is not None else "input"


def tie_notices(su, pos, tie_start, kmax: int, settings: Settings) -> list[Notice]:
    """Under a tie-aware order: the users whose list ends inside a tie group that reaches
    the scored depth (items past the end may share its score; the orders are over the
    submitted items only)."""
    if settings.ties not in TIE_AWARE or tie_start is None:
        return []
    last = np.flatnonzero(np.append(su[1:] != su[:-1], True))
    ends_tied = (pos[last] > tie_start[last]) & (tie_start[last] <= kmax)
    n = int(np.count_nonzero(ends_tied))
    return [Notice("ties_at_list_end", n)] if n else []


def ranks_differ_from_scores(rank, score, rows, su, user: np.ndarray | None = None) -> bool:
    """Whether a file with ranks and scores has, in rank order, a score that does not fall
    (a tie, or a rise) or a repeated rank: then ordering by score gives another list.

    ``user``: each file row's user code. Where the rank order keeps each user's rows as they
    stand in the file (``in_runs``: the file in order, or its users' runs moved whole), the
    file's own neighbours are compared and no column is gathered (10M rows: two random
    gathers, 0.3 s, become sequential passes); the file's other users' rows, compared too,
    can only make the answer yes, and ordering by score is what the setting asks anyway."""
    if rank is None or score is None:
        return False
    if user is not None and in_runs(rows, su):
        s, r, same = score, rank, user[1:] == user[:-1]
    else:
        s, r, same = take(score, rows), take(rank, rows), su[1:] == su[:-1]
    return bool((same & ((s[1:] >= s[:-1]) | (r[1:] == r[:-1]))).any())


def in_runs(rows: np.ndarray | None, su: np.ndarray) -> bool:
    """Whether ordered ``rows`` (file rows; None: the file's own order) keep each user's rows
    next to each other and in the file's order."""
    if rows is None:
        return True
    steps = np.diff(rows.view(np.int64) if rows.dtype.itemsize == 8 else rows)
    return not ((su[1:] == su[:-1]) & (steps != 1)).any()


def score_orders(columns: dict[str, str], ranks: np.ndarray, rows, su) -> list[Notice]:
    """Ordered by score (order_by), the users whose rank column tells another order than their
    scores (which order the lists, as in trec_eval), and the users whose rank column repeats a
    rank (then it tells no order of those items): two mechanisms, a notice each."""
    r = take(ranks, rows)
    same_user = su[1:] == su[:-1]
    against = same_user & (r[1:] < r[:-1])
    by_rank = np.lexsort((r, su))  # su is sorted: each user's ranks in order
    rs, us = r[by_rank], su[by_rank]
    repeated = (us[1:] == us[:-1]) & (rs[1:] == rs[:-1])
    params = {"column": columns["score"], "rank": columns["rank"]}
    return [Notice(code, count_distinct(users[1:][rows_of]), params)
            for code, users, rows_of in (("score_orders", su, against),
                                         ("ranks_repeated", us, repeated)) if rows_of.any()]
