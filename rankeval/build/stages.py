"""Typed inputs to a ``Chunk``: the build, as ordered stages over flat arrays.

encode (ids to codes) -> select (which users are evaluated, SPEC section 2) -> order (each
user's list) -> dedupe -> check the order -> cut at K -> join (relevance of each row) ->
ideal lists. Every stage is vectorized over all rows; there is no loop over users.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankeval.build.checks import (
    check_grades,
    check_order,
    named_by,
    padded_rows,
    report_duplicates,
)
from rankeval.build.encode import duplicates, factorize, pair_keys
from rankeval.build.join import ideal, lookup, repeats, truth_pairs
from rankeval.build.lists import Lists
from rankeval.build.ordering import (
    TIE_AWARE,
    order_rows,
    ranks_differ_from_scores,
    score_orders,
    take,
    tie_groups,
    tie_notices,
)
from rankeval.errors import InputError
from rankeval.io.arrow import from_numpy
from rankeval.io.load import Predictions, Truth, release_ids
from rankeval.kernels.chunk import Chunk, segment_positions
from rankeval.kernels.threads import Later, each
from rankeval.notices import Notice
from rankeval.recommender.extras import (
    Extras,
    ItemStats,
    feature_arrays,
    is_seen,
    profiles,
    seen_keys,
)
from rankeval.registry import REGISTRY

_THREADED_ROWS = 1 << 16  # truth rows under which a thread would cost more than it saves


@dataclass(frozen=True)
class UserCounts:
    """How many users fall in each case of SPEC section 2 (integers: they add up across
    partitions of users)."""

    evaluated: int
    in_truth: int
    in_predictions: int
    without_relevant: int  # truth users with no relevant item
    without_predictions: int  # users that could be evaluated but have no predictions
    only_in_predictions: int  # prediction users absent from the truth

    def __add__(self, other: UserCounts) -> UserCounts:
        return UserCounts(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[int, ...]:
        return (self.evaluated, self.in_truth, self.in_predictions, self.without_relevant,
                self.without_predictions, self.only_in_predictions)


@dataclass(frozen=True)
class Built:
    chunk: Chunk
    users: pa.Array  # the evaluated users' ids, in code order (sorted as byte strings)
    counts: UserCounts
    notices: list[Notice]  # about rows (user-level notices derive from ``counts``)
    prediction_rows_beyond_k: int
    item_ids: pa.Array  # the ids of the chunk's item codes


@dataclass(frozen=True)
class Codes:
    """Both inputs' ids as codes over shared dictionaries (byte order)."""

    t_user: np.ndarray
    t_item: np.ndarray
    p_user: np.ndarray
    p_item: np.ndarray
    user_ids: pa.Array
    item_ids: pa.Array

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_items(self) -> int:
        return max(len(self.item_ids), 1)


@dataclass(frozen=True)
class Selection:
    """Which users are evaluated; evaluated users get compact codes 0..n-1 in id order."""

    counts: UserCounts
    evaluated: np.ndarray  # bool per user code
    compact: np.ndarray  # user code -> compact code, -1 when not evaluated
    n_relevant: np.ndarray  # relevant truth items per user code


def encode(preds: Predictions, truth: Truth) -> Codes:
    """Users and items as codes, encoded at once on the two cores (Arrow releases the GIL)."""
    with ThreadPoolExecutor(2) as pool:
        users_job = pool.submit(factorize, truth.user, preds.user)
        (t_item, p_item), items = factorize(truth.item, preds.item)
        (t_user, p_user), user_ids = users_job.result()
    codes = Codes(t_user, t_item, p_user, p_item, user_ids, items)
    if codes.n_users * codes.n_items >= 2**63:
        raise InputError(preds.source.label, "too many distinct users x items to index")
    return codes


def select(codes: Codes, truth: Truth, settings) -> Selection:
    """SPEC section 2: evaluated users, and the count of every other case."""
    t = settings.relevance_threshold
    in_truth, in_preds = np.zeros(codes.n_users, bool), np.zeros(codes.n_users, bool)

    def from_truth() -> np.ndarray:
        relevant = truth.relevance > 0 if t is None else truth.relevance >= t
        in_truth[codes.t_user] = True
        return np.bincount(codes.t_user[relevant], minlength=codes.n_users)

    def from_predictions() -> None:
        in_preds[codes.p_user] = True

    n_relevant, _ = each(lambda work: work(), [from_truth, from_predictions])
    assert n_relevant is not None  # from_truth's counts
    eligible = in_truth & ((n_relevant > 0) | (settings.zero_relevant_users == "zero"))
    missing = eligible & ~in_preds
    evaluated = eligible & ~missing if settings.skip_missing_users else eligible
    counts = UserCounts(
        evaluated=int(evaluated.sum()),
        in_truth=int(in_truth.sum()),
        in_predictions=int(in_preds.sum()),
        without_relevant=int((in_truth & (n_relevant == 0)).sum()),
        without_predictions=int(missing.sum()),
        only_in_predictions=int((in_preds & ~in_truth).sum()),
    )
    compact = np.full(codes.n_users, -1, dtype=np.int32)  # monotonic: sorted stays sorted
    compact[evaluated] = np.arange(counts.evaluated, dtype=np.int32)
    return Selection(counts, evaluated, compact, n_relevant)


def order(preds: Predictions, codes: Codes, sel: Selection, ties: str):
    """The evaluated users' rows in list order: (rows, su, others).

    ``rows`` maps ordered rows to file rows, None meaning "the same": every user is evaluated
    and the file is in order already, the common case, which then costs no gathers and no
    index arrays. ``su`` holds their compact user codes; ``others`` the rows of users not
    evaluated (still checked for duplicates), or None.
    """
    if sel.counts.evaluated == codes.n_users:
        keep, u, others = None, codes.p_user, None  # compact is the identity
    else:
        u = sel.compact[codes.p_user]
        keep = np.flatnonzero(u >= 0)
        others = np.flatnonzero(u < 0)
        u = u[keep]
    # Tie-aware orders start from trec_eval's and then treat each tie group as a whole.
    base = "trec" if ties in TIE_AWARE else ties
    perm = order_rows(u, take(codes.p_item, keep), preds.rank, preds.score, base, keep)
    rows = keep if perm is None else perm if keep is None else keep[perm]
    return rows, (u if perm is None else u[perm]), others


def dedupe(preds: Predictions, codes: Codes, rows, su, others, allowed: bool):
    """Drop repeated (user, item) rows when ``allowed`` (keeping the best-ranked: rows are in
    list order), else report them naming file rows. Returns (rows, su, notices)."""
    repeat = repeats(su, codes.p_item, rows, codes.n_items)
    n_repeats = int(repeat.sum()) if repeat is not None else 0
    if others is not None and len(others):
        n_repeats += len(duplicates(pair_keys(codes.p_user[others], codes.p_item[others],
                                              codes.n_items)))
    if not n_repeats:
        return rows, su, []
    if not allowed:
        # The error names file rows, found again over the whole file (a rare, slower path).
        dup = duplicates(pair_keys(codes.p_user, codes.p_item, codes.n_items))
        report_duplicates(preds, dup, "{opt:dedupe} keeps the best-ranked one",
                          named_by(codes, "predictions"))
        return rows, su, []
    if repeat is not None:
        first = ~repeat
        rows = np.flatnonzero(first) if rows is None else rows[first]
        su = su[first]
    return rows, su, [Notice("duplicates_dropped", n_repeats, {"path": preds.source.label})]


def build(preds: Predictions, truth: Truth, settings, extras: Extras | None = None,
          stats: ItemStats | None = None, release: bool = False) -> Built:
    """Join, order and cut the predictions as ``settings`` say; count every user case.
    ``extras`` (training interactions) and ``stats`` (item statistics over the whole inputs)
    serve seen-item exclusion and the popularity metrics. ``release``: the caller reads
    neither input's ids again, so they are let go once encoded (``load.release_ids``)."""
    laters: list[Later] = []
    try:
        return _build(preds, truth, settings, extras, stats, release, laters)
    except BaseException:
        # A failure on the run's side (an input error, MemoryError, SIGTERM, Ctrl-C) must not
        # leave the truth's side working behind the caller: wait for it, then raise.
        for later in laters:
            later.wait()
        raise


def _build(preds, truth, settings, extras, stats, release, laters: list[Later]) -> Built:
    codes = encode(preds, truth)
    if release:
        release_ids(preds, truth)
    # The truth's side of the build (its sorted pairs, then the ideal lists) runs on a
    # thread beside the run's side, which leaves a core idle between its bulk operations.
    inline = len(codes.t_user) < _THREADED_ROWS
    # Only positive relevance matters to any metric (gain and relevance are 0 at or below 0),
    # so the lookup and the ideal lists need only the positive truth rows.
    pairs = Later(truth_pairs, codes.t_user, codes.t_item, truth.relevance, codes.n_items,
                  inline=inline)
    laters.append(pairs)
    notices: list[Notice] = []
    seen = keys = None
    if extras is not None and extras.train is not None and (
            settings.exclude_seen or settings.exclude_seen_truth):
        seen = seen_keys(extras.train, codes.user_ids, codes.item_ids, codes.n_items)
    if settings.exclude_seen_truth:
        assert seen is not None  # the option needs --train (check_needs)
        keys, values = _unique_pairs(pairs, codes, truth)
        codes, truth, dropped = _drop_seen_truth(codes, truth, seen)
        if dropped:
            notices.append(Notice("seen_truth_dropped", dropped, {"path": truth.source.label}))
            keys, values, _ = truth_pairs(codes.t_user, codes.t_item, truth.relevance,
                                          codes.n_items)
    sel = select(codes, truth, settings)
    if keys is None:
        keys, values = _unique_pairs(pairs, codes, truth)
    n_items, n = codes.n_items, sel.counts.evaluated
    keys, values = _compact(keys, values, sel, codes)
    kmax = settings.cut if settings.cut is not None else np.iinfo(np.int64).max
    ideal_lists = Later(ideal, keys // n_items, values, n, kmax, inline=inline)
    laters.append(ideal_lists)
    preds, lists, found = _lists(preds, codes, sel, settings, seen)
    notices += found
    if settings.max_depth is not None:  # trec_eval -M: before -J, as trec_eval does
        lists = lists.keep(lists.pos <= settings.max_depth)
    if needs_judgements(settings):
        jkeys, jvalues = _compact(*judged_pairs(codes, truth), sel, codes)
        judged = lookup(jkeys, jvalues, lists.su, codes.p_item, lists.rows, n_items) > 0
        lists = dataclasses.replace(lists, judged=judged)
        if settings.judged_only:  # condensed lists: the judged items move up
            lists = lists.keep(judged)
            lists = dataclasses.replace(lists, pos=segment_positions(lists.su))
        del judged
    if preds.score is not None:
        score = take(preds.score, lists.rows)
        lists = dataclasses.replace(lists, tie_start=tie_groups(lists.su, score, lists.pos))
        del score
    beyond = int(np.count_nonzero(lists.pos > kmax))
    notices += tie_notices(lists.su, lists.pos, lists.tie_start, kmax, settings)
    # From here on rows are carried by their items, not by file row numbers: the cut then
    # needs no index array (a view of the codes when the file is in order already).
    lists = dataclasses.replace(lists, rows=take(codes.p_item, lists.rows))
    # A tie group across the deepest K is kept whole: the orders of its items decide.
    cut = lists.pos <= kmax if lists.tie_start is None else lists.tie_start <= kmax
    lists = lists.keep(cut)
    del cut
    item = lists.rows
    assert item is not None  # item codes since the cut
    rel = lookup(keys, values, lists.su, item, None, n_items)
    check_grades(truth, settings)
    chunk = _chunk(n, lists.su, lists.pos, item, rel, ideal_lists.result(),
                   sel.n_relevant[sel.evaluated])
    if lists.judged is not None:
        chunk = dataclasses.replace(chunk, judged=lists.judged,
                                    n_nonrelevant=_nonrelevant(codes, truth, sel, settings))
    if stats is not None:
        chunk = _with_item_data(chunk, stats, extras, codes, sel, settings)
    if lists.tie_start is not None:
        chunk = dataclasses.replace(chunk, tie_start=lists.tie_start)
        if settings.ties in ("optimistic", "pessimistic"):
            chunk = chunk.reordered(best_first=settings.ties == "optimistic")
    notices += padded_rows(codes)
    users = codes.user_ids.take(from_numpy(np.flatnonzero(sel.evaluated)))
    return Built(chunk, users, sel.counts, notices, beyond, codes.item_ids)


def _unique_pairs(pairs: Later, codes: Codes, truth: Truth):
    """``truth_pairs``' (keys, values), once it has shown that no pair repeats (else the
    repeats are reported, naming their rows)."""
    keys, values, dup = pairs.result()
    if len(dup):
        report_duplicates(truth, dup, None, named_by(codes, "truth"))
    return keys, values


def _lists(preds: Predictions, codes: Codes, sel: Selection, settings, seen
           ) -> tuple[Predictions, Lists, list[Notice]]:
    """The evaluated users' lists in order, deduplicated, checked, and without seen items
    when asked: (preds as ordered, the lists, notices)."""
    notices: list[Notice] = []
    ranks = None
    rows, su, others = order(preds, codes, sel, settings.ties)
    if settings.compat == "trec_eval" and ranks_differ_from_scores(preds.rank, preds.score,
                                                                   rows, su):
        # trec_eval orders by score and never reads ranks; when the ranks already give the
        # strictly falling score order (the usual file), the cheaper rank sort stands.
        ranks, preds = preds.rank, dataclasses.replace(preds, rank=None)
        rows, su, others = order(preds, codes, sel, settings.ties)
    rows, su, found = dedupe(preds, codes, rows, su, others, settings.dedupe)
    notices += found
    lists = Lists(rows, su, segment_positions(su))
    notices += check_order(preds, rows, su, lists.pos, settings)
    if settings.exclude_seen:  # after the checks of the file's own ranks
        lists, found = _drop_seen(codes, lists, seen, settings, preds.source.label)
        notices += found
    if ranks is not None:
        notices += score_orders(preds.columns, ranks, lists.rows, lists.su)
    return preds, lists, notices


def _with_item_data(chunk: Chunk, stats: ItemStats, extras: Extras | None, codes: Codes,
                    sel: Selection, settings) -> Chunk:
    """Popularity and long tail per item; feature vectors and training profiles when a
    metric needs them."""
    pop, tail = stats.at(codes.item_ids)
    chunk = dataclasses.replace(chunk, popularity=pop, long_tail=tail,
                                n_train_users=stats.n_train_users)
    if stats.vectors is None:
        return chunk
    vectors, has = feature_arrays(stats, codes.item_ids)
    chunk = dataclasses.replace(chunk, vectors=vectors, has_vector=has)
    wanted = any(s.name == "serendipity" for s in settings.specs)
    if wanted and extras is not None and extras.train is not None:
        profile, history = profiles(stats, extras.train, codes.user_ids, sel.compact,
                                    chunk.n_users)
        chunk = dataclasses.replace(chunk, profile=profile, history=history)
    return chunk


def _drop_seen_truth(codes: Codes, truth: Truth, seen: np.ndarray):
    """Truth rows whose pair is in training, dropped (``--exclude-seen-truth``)."""
    hit = is_seen(pair_keys(codes.t_user, codes.t_item, codes.n_items), seen)
    n = int(np.count_nonzero(hit))
    if not n:
        return codes, truth, 0
    keep = ~hit
    mask = from_numpy(keep)
    if truth.user is None:  # released (release_ids)
        truth = dataclasses.replace(truth, relevance=truth.relevance[keep])
    else:
        truth = dataclasses.replace(truth, user=truth.user.filter(mask),
                                    item=truth.item.filter(mask), relevance=truth.relevance[keep])
    codes = dataclasses.replace(codes, t_user=codes.t_user[keep], t_item=codes.t_item[keep])
    return codes, truth, n


def _drop_seen(codes: Codes, lists: Lists, seen: np.ndarray, settings, label: str
               ) -> tuple[Lists, list[Notice]]:
    """Ordered rows whose (user, item) was seen in training, dropped before the cut; the
    rest keep their order and move up. Counts the rows, and the users left with fewer than
    the deepest K items who had that many before."""
    rows, su = lists.rows, lists.su
    keys = pair_keys(_full_users(codes, rows, su), take(codes.p_item, rows), codes.n_items)
    hit = is_seen(keys, seen)
    n = int(np.count_nonzero(hit))
    if not n:
        return lists, []
    before = np.bincount(su)
    keep = ~hit
    rows = np.flatnonzero(keep) if rows is None else rows[keep]
    su = su[keep]
    notices = [Notice("seen_dropped", n, {"path": label})]
    if settings.cut is not None:
        after = np.bincount(su, minlength=len(before))
        short = int(np.count_nonzero((before >= settings.cut) & (after < settings.cut)))
        if short:
            notices.append(Notice("short_after_exclusion", short, {"k": settings.cut}))
    return Lists(rows, su, segment_positions(su)), notices


def _full_users(codes: Codes, rows, su) -> np.ndarray:
    """The ordered rows' user codes over the whole user dictionary (``su`` holds compact
    codes of the evaluated users)."""
    return codes.p_user if rows is None else codes.p_user[rows]


def _compact(keys: np.ndarray, values: np.ndarray, sel: Selection, codes: Codes):
    """Truth (key, value) pairs of the evaluated users, keyed by their compact codes."""
    n_items = codes.n_items
    if sel.counts.evaluated == codes.n_users:
        return keys, values
    users = sel.compact[keys // n_items]
    kept = users >= 0
    return pair_keys(users[kept], keys[kept] % n_items, n_items), values[kept]


def needs_judgements(settings) -> bool:
    """Whether the build must mark judged items (a metric reads them, or condensed lists)."""
    return settings.judged_only or any(REGISTRY[s.name].judgements for s in settings.specs)


def judged_pairs(codes: Codes, truth: Truth) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys of the judged truth pairs (relevance >= 0), each with the value 1."""
    judged = truth.relevance >= 0
    keys = np.sort(pair_keys(codes.t_user[judged], codes.t_item[judged], codes.n_items))
    return keys, np.ones(len(keys))


def _nonrelevant(codes: Codes, truth: Truth, sel: Selection, settings) -> np.ndarray:
    """Judged non-relevant truth items (0 <= relevance, not relevant) per evaluated user."""
    t = settings.relevance_threshold
    rel = truth.relevance
    nonrelevant = (rel >= 0) & ~(rel > 0 if t is None else rel >= t)
    counts = np.bincount(codes.t_user[nonrelevant], minlength=codes.n_users)
    return counts[sel.evaluated]


def _chunk(n, su, pos, item, rel, ideal_lists, n_relevant) -> Chunk:
    """The chunk, with the ideal lists made by ``join.ideal``."""
    iu, ipos, irel, max_relevance = ideal_lists
    return Chunk(n_users=n, user=su, pos=pos, item=item.astype(np.int32, copy=False), rel=rel,
                 ideal_user=iu, ideal_pos=ipos, ideal_rel=irel,
                 n_relevant=n_relevant, max_relevance=max_relevance)
