"""Typed inputs to a ``Chunk``: the build, as named stages over flat arrays.

encode (ids to codes) -> [seen truth dropped] -> select (which users are evaluated, SPEC
section 2) -> the lists (order, dedupe, check the order) -> [seen items dropped] -> max depth
-> judged -> judged only -> ties -> cut at K (users whose runs stand out of user order moved
into it, once fewer rows are left) -> join (relevance of each row) -> chunk, with the ideal
lists made beside. ``_build`` only lists the stages; the ranked rows pass between them as
one ``Lists``. The first two, encode and select, are ``build/users.py``'s; seen-item exclusion
is ``build/seen.py``'s stage (``seen_items``). Every stage is vectorized over all rows; no
loop over users.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankeval.build.aspects import with_aspects
from rankeval.build.checks import (
    check_gains,
    check_grades,
    check_order,
    named_by,
    padded_rows,
    report_duplicates,
    spurious_ties,
)
from rankeval.build.grades import with_grades, with_groups
from rankeval.build.items import ItemStats, feature_arrays, profiles
from rankeval.build.join import (
    ideal,
    judged_pairs,
    lookup,
    needs_judgements,
    nonrelevant,
    repeats,
    truth_pairs,
)
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
from rankeval.build.propensity import with_propensities
from rankeval.build.relstring import depth, relstrings
from rankeval.build.seen import SeenItems, seen_items
from rankeval.build.users import Codes, Selection, UserCounts, encode, select
from rankeval.errors import InputError
from rankeval.io.arrow import from_numpy
from rankeval.io.encode import Ids, duplicates, pair_keys
from rankeval.io.extras import Extras
from rankeval.io.load import Predictions, Truth
from rankeval.kernels.chunk import Chunk, segment_positions
from rankeval.kernels.distinct import present
from rankeval.kernels.threads import Later
from rankeval.notices import Notice
from rankeval.presets import preset_of
from rankeval.registry import reads
from rankeval.settings import Settings

# An item missing from the truth under a relevance threshold of 0: below every judged grade
# (trec_eval's RELVALUE_NONPOOL), so that ">= 0" holds for the judged items alone
NOT_IN_TRUTH = -1.0
_THREADED_ROWS = 1 << 16  # truth rows under which a thread would cost more than it saves


@dataclass(frozen=True)
class Built:
    chunk: Chunk
    users: pa.Array  # the evaluated users' ids, in code order (sorted as byte strings)
    counts: UserCounts
    notices: list[Notice]  # about rows (user-level notices derive from ``counts``)
    prediction_rows_beyond_k: int
    items: Ids  # the ids of the chunk's item codes
    relstrings: pa.Array | None = None  # trec_eval's relstring per user, when asked for

    @property
    def item_ids(self) -> pa.Array:
        return self.items.text


def order(preds: Predictions, codes: Codes, sel: Selection, ties: str):
    """The evaluated users' rows in list order: (rows, su, others).

    ``rows`` maps ordered rows to file rows, None meaning "the same": every user is evaluated
    and the file is in order already, the common case, which then costs no gathers and no
    index arrays. ``su`` holds their compact user codes; ``others`` the rows of users not
    evaluated (still checked for duplicates), or None. Users whose rows each stand in one
    run, in list order, stay in the file's order of users (``Lists.grouped``).
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
    perm = order_rows(u, take(codes.p_item, keep), preds.rank, preds.score, base, keep,
                      runs_stay=True)
    rows = keep if perm is None else perm if keep is None else keep[perm]
    return rows, (u if perm is None else u[perm]), others


def dedupe(preds: Predictions, codes: Codes, rows, su, others, allowed: bool,
           where: str = "all", depth: int | None = None):
    """Drop repeated (user, item) rows when ``allowed`` (keeping the best-ranked: rows are in
    list order), else report them naming file rows. Returns (rows, su, notices).

    ``where`` (the preset's ``duplicates``) other than "all": only the evaluated lists are
    checked, and only their first ``depth`` rows (trec_eval checks what it evaluates, after
    -M); a repeat below ``depth`` is dropped with the rest of the list's tail."""
    repeat = repeats(su, codes.p_item, rows, codes.n_items)
    if where != "all" and repeat is not None and depth is not None:
        deep = repeat & (segment_positions(su) > depth)
        if deep.any():  # below -M: cut with the tail, as trec_eval never sees them
            rows = np.flatnonzero(~deep) if rows is None else rows[~deep]
            su, repeat = su[~deep], repeat[~deep]
        if not repeat.any():
            repeat = None
    n_repeats = int(repeat.sum()) if repeat is not None else 0
    if where == "all" and others is not None and len(others):
        n_repeats += len(duplicates(pair_keys(codes.p_user[others], codes.p_item[others],
                                              codes.n_items)))
    if not n_repeats:
        return rows, su, []
    if not allowed:
        # The error names file rows, found again over the whole file (a rare, slower path).
        dup = duplicates(pair_keys(codes.p_user, codes.p_item, codes.n_items))
        if where != "all":  # the repeats of the lists checked
            assert repeat is not None
            dup = np.sort(np.flatnonzero(repeat) if rows is None else rows[repeat])
        report_duplicates(preds, dup, "{opt:dedupe} keeps the best-ranked one",
                          named_by(codes, "predictions"))
        return rows, su, []
    if repeat is not None:
        first = ~repeat
        rows = np.flatnonzero(first) if rows is None else rows[first]
        su = su[first]
    return rows, su, [Notice("duplicates_dropped", n_repeats, {"path": preds.source.label})]


def build(preds: Predictions, truth: Truth, settings: Settings, extras: Extras | None = None,
          stats: ItemStats | None = None, release: bool = False, select_by=None) -> Built:
    """Join, order and cut the predictions as ``settings`` say; count every user case.
    ``extras`` (training interactions) and ``stats`` (item statistics over the whole inputs)
    serve seen-item exclusion and the popularity metrics. ``release``: the caller reads
    neither input's ids again, so they are let go once encoded (``load.release_ids``).
    ``select_by``: the settings that choose the users, when not ``settings`` (``select``)."""
    laters: list[Later] = []
    _comments(preds, truth, settings)
    try:
        return _build(preds, truth, settings, extras, stats, release, laters, select_by)
    except BaseException:
        # A failure on the run's side (an input error, MemoryError, SIGTERM, Ctrl-C) must not
        # leave the truth's side working behind the caller: wait for it, then raise.
        for later in laters:
            later.wait()
        raise


def _build(preds, truth, settings: Settings, extras, stats, release, laters: list[Later],
           select_by=None) -> Built:
    """The stages, in order. The truth's side (its sorted pairs, then the ideal lists) runs
    on a thread beside the run's side, which leaves a core idle between its bulk operations."""
    codes = encode(preds, truth, release)
    inline = len(codes.t_user) < _THREADED_ROWS
    pairs = Later(_positive_pairs, codes, truth, inline=inline)  # the truth's side
    laters.append(pairs)
    seen = None if extras is None else seen_items(extras, codes, settings)
    leaked = [] if seen is None else seen.leaked(codes, truth)
    codes, truth, checked, notices = _seen_truth(seen, pairs, codes, truth)
    notices = leaked + notices
    sel = select(codes, truth, settings, select_by)
    truth_checked = _truth_checked(codes, sel, _duplicates(settings))
    try:  # the run's lists while the truth's side sorts its pairs on the other core
        lists, ranks, found = _lists(preds, codes, sel, settings)
    except InputError:  # the truth's repeats are told first, as they were read first
        if checked is None:
            _unique_pairs(pairs, codes, truth, truth_checked)
        raise
    notices += found
    keys, values = checked or _unique_pairs(pairs, codes, truth, truth_checked)
    keys, values = _compact(keys, values, sel, codes)
    kmax = settings.cut if settings.cut is not None else np.iinfo(np.int64).max
    ideal_lists = Later(ideal, keys // codes.n_items, values, sel.counts.evaluated, kmax,
                        inline=inline)
    laters.append(ideal_lists)
    listed = lists.su  # the users with a list, before seen items and -J take rows out
    if seen is not None and seen.lists:  # after the checks of the file's own ranks
        lists, found = seen.drop(codes, lists, preds.source.label)
        notices += found
    notices += _score_orders(preds, ranks, lists)
    lists = _max_depth(lists, settings)
    lists = _judged(lists, codes, truth, sel, settings)
    lists = _judged_only(lists, settings)
    emptied = _emptied(listed, lists.su, sel.counts.evaluated)
    lists = _ties(lists, preds)
    spurious_ties(preds, lists.rows, lists.pos, lists.tie_start)
    beyond = int(np.count_nonzero(lists.pos > kmax))
    notices += tie_notices(lists.su, lists.pos, lists.tie_start, kmax, settings)
    lists = _by_items(lists, codes)
    # trec_eval's relstring, of the evaluation's own lists (not a metric's build of its own)
    texts = None
    if settings.relstring is not None and select_by is None:
        lists = lists.in_user_order()
        texts = relstrings(lists, codes, truth, sel, depth(settings.relstring))
    lists = _cut(lists, kmax).in_user_order()
    rel = _join(lists, keys, values, codes, truth, sel, settings)
    chunk = _chunk(lists, rel, ideal_lists.result(), codes, truth, sel, settings)
    if emptied is not None:
        chunk = dataclasses.replace(chunk, emptied=emptied)
    if stats is not None:
        chunk = _with_item_data(chunk, stats, extras, codes, sel, settings)
    if truth.aspects is not None and reads(settings.specs, "subtopics"):
        chunk = with_aspects(chunk, codes, truth, sel, settings)
    if reads(settings.specs, "grades"):
        chunk = with_grades(chunk, codes, truth, sel)
    if stats is not None and reads(settings.specs, "propensity"):
        chunk = with_propensities(chunk, codes, truth, sel, settings, stats)
    if stats is not None and stats.groups is not None and reads(settings.specs, "item_groups"):
        chunk = with_groups(chunk, codes, truth, sel, settings, stats.groups)
    if settings.ties in ("optimistic", "pessimistic"):
        chunk = chunk.reordered(best_first=settings.ties == "optimistic")
    notices += padded_rows(codes)
    users = codes.user_ids.take(from_numpy(np.flatnonzero(sel.evaluated)))
    return Built(chunk, users, sel.counts, notices, beyond, codes.items, texts)


def _positive_pairs(codes: Codes, truth: Truth) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The truth's sorted (user, item) keys with relevance > 0, and any repeated pairs: only
    positive relevance matters to any metric (gain and relevance are 0 at or below 0), so
    the lookup and the ideal lists need only the positive truth rows."""
    return truth_pairs(codes.t_user, codes.t_item, truth.relevance, codes.n_items)


def _truth_checked(codes: Codes, sel: Selection, where: str) -> np.ndarray | None:
    """The users whose judgements are checked for repeats (None: every user)."""
    if where == "all":
        return None
    if where == "evaluated":
        return sel.evaluated
    return sel.evaluated & present(codes.p_user, codes.n_users)


def _seen_truth(seen: SeenItems | None, pairs: Later, codes: Codes, truth: Truth
                ) -> tuple[Codes, Truth, tuple[np.ndarray, np.ndarray] | None, list[Notice]]:
    """Truth rows seen in training dropped (--exclude-seen-truth), once the truth's pairs
    have shown no repeats: (codes, truth, their pairs when this waited for them, notices)."""
    if seen is None or not seen.truth:
        return codes, truth, None, []
    checked = _unique_pairs(pairs, codes, truth)
    codes, truth, notices = seen.drop_truth(codes, truth)
    if notices:  # rows were dropped: the pairs of the rows left
        keys, values, _ = _positive_pairs(codes, truth)
        checked = keys, values
    return codes, truth, checked, notices


def _comments(preds: Predictions, truth: Truth, settings) -> None:
    """A TREC file's '#' line, where the preset's tool refuses it (trec_eval 9.0.8 stops:
    'Malformed line')."""
    preset = preset_of(settings.compat)
    if preset is None or preset.comments:
        return
    for side in (truth, preds):  # in trec_eval's order of reading
        if side.source.comment is not None:
            raise InputError(side.source.label, f"line {side.source.comment} is a '#' comment "
                             f"line, which {preset.tool.split(' (')[0]} refuses ('Malformed "
                             "line'); --compat trec_eval (10.0) reads it as a comment")


def _duplicates(settings) -> str:
    """Where repeated pairs are refused: the preset's ``duplicates``, else everywhere."""
    preset = preset_of(settings.compat)
    return "all" if preset is None else preset.duplicates


def _unique_pairs(pairs: Later, codes: Codes, truth: Truth,
                  checked: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``truth_pairs``' (keys, values), once it has shown that no pair repeats (else the
    repeats are reported, naming their rows); ``checked``: the users whose pairs are
    checked (a mask of user codes), else every user."""
    keys, values, dup = pairs.result()
    if len(dup) and checked is not None:
        dup = dup[checked[codes.t_user[dup]]]
    if len(dup):
        report_duplicates(truth, dup, None, named_by(codes, "truth"))
    return keys, values


def _lists(preds: Predictions, codes: Codes, sel: Selection, settings: Settings
           ) -> tuple[Lists, np.ndarray | None, list[Notice]]:
    """The evaluated users' lists in order, deduplicated and checked: (the lists, the file's
    ranks when trec_eval's order by score replaced theirs, notices)."""
    notices: list[Notice] = []
    ranks = None
    rows, su, others = order(preds, codes, sel, settings.ties)
    falling = settings.order_by == "score" and preds.rank is not None \
        and preds.score is not None
    if falling and ranks_differ_from_scores(preds.rank, preds.score, rows, su, codes.p_user):
        # Ordered by score, ranks never read (trec_eval's way); when the ranks already give
        # the strictly falling score order (the usual file), the cheaper rank sort stands.
        ranks, preds = preds.rank, dataclasses.replace(preds, rank=None)
        rows, su, others = order(preds, codes, sel, settings.ties)
        falling = False
    rows, su, found = dedupe(preds, codes, rows, su, others, settings.dedupe,
                             _duplicates(settings), settings.max_depth)
    notices += found
    pos = segment_positions(su)
    found, falling = check_order(preds, rows, su, pos, settings, falling)
    notices += found
    grouped = len(su) > 1 and bool((su[1:] < su[:-1]).any())
    lists = Lists(rows, su, pos, falling=falling, grouped=grouped)
    return lists, ranks, notices


def _score_orders(preds: Predictions, ranks: np.ndarray | None, lists: Lists) -> list[Notice]:
    """Under trec_eval's order by score, the users whose ranks tell another order."""
    return [] if ranks is None else score_orders(preds.columns, ranks, lists.rows, lists.su)


def _max_depth(lists: Lists, settings: Settings) -> Lists:
    """Only the first N rows of each list (trec_eval -M): before -J, as trec_eval does."""
    if settings.max_depth is None:
        return lists
    return lists.keep(lists.pos <= settings.max_depth)


def _judged(lists: Lists, codes: Codes, truth: Truth, sel: Selection, settings: Settings) -> Lists:
    """Whether each row's item is judged, when a metric reads it or the lists condense."""
    if not needs_judgements(settings):
        return lists
    lists = lists.in_user_order()
    jkeys, jvalues = _compact(*judged_pairs(codes, truth), sel, codes)
    found = lookup(jkeys, jvalues, lists.su, codes.p_item, lists.rows, codes.n_items)
    return dataclasses.replace(lists, judged=found > 0, pooled=found != 0)


def _judged_only(lists: Lists, settings: Settings) -> Lists:
    """Condensed lists (--judged-only, trec_eval -J): the judged items move up."""
    if not settings.judged_only:
        return lists
    assert lists.judged is not None  # marked: judged_only needs judgements
    lists = lists.keep(lists.judged)
    return dataclasses.replace(lists, pos=segment_positions(lists.su))


def _emptied(before: np.ndarray, after: np.ndarray, n_users: int) -> np.ndarray | None:
    """Per user, whether it had a list that the exclusions (seen items, -J) left empty: it
    retrieved nothing, where a user without predictions was never asked (SPEC section 2).
    None when no user lost every row."""
    if len(after) == len(before):
        return None
    emptied = np.bincount(before, minlength=n_users) > 0
    emptied[after] = False
    return emptied if emptied.any() else None


def _ties(lists: Lists, preds: Predictions) -> Lists:
    """Each row's tie group (rows of equal score in one list), when any two rows tie: none
    where the scores were seen to fall strictly, so they are not gathered again."""
    if preds.score is None or lists.falling:
        return lists
    score = take(preds.score, lists.rows)
    return dataclasses.replace(lists, tie_start=tie_groups(lists.su, score, lists.pos))


def _by_items(lists: Lists, codes: Codes) -> Lists:
    """The rows carried by their items from here on, not by file row numbers: the cut then
    needs no index array (a view of the codes when the file is in order already)."""
    return dataclasses.replace(lists, rows=take(codes.p_item, lists.rows))


def _cut(lists: Lists, kmax: int) -> Lists:
    """The rows down to the deepest K; a tie group across it is kept whole (the orders of
    its items decide)."""
    tie_start = lists.tie_start
    return lists.keep(lists.pos <= kmax if tie_start is None else tie_start <= kmax)


def _join(lists: Lists, keys: np.ndarray, values: np.ndarray, codes: Codes, truth: Truth,
          sel: Selection, settings: Settings) -> np.ndarray:
    """The relevance of each row (0: not in the truth; then the truth's grades checked.
    Under a threshold of 0 (trec_eval's -l 0: every judged item relevant, grade 0 included),
    a row not judged holds ``NOT_IN_TRUTH`` instead, below every judged grade."""
    rel = lookup(keys, values, lists.su, lists.rows, None, codes.n_items)
    t = settings.relevance_threshold
    if t is not None and t <= 0:  # ``keys`` hold the positive grades alone
        jkeys, jvalues = _compact(*judged_pairs(codes, truth), sel, codes)
        judged = lookup(jkeys, jvalues, lists.su, lists.rows, None, codes.n_items) > 0
        rel = np.where(judged, rel, NOT_IN_TRUTH)
    check_grades(truth, settings)
    check_gains(truth, settings)
    return rel


def _with_item_data(chunk: Chunk, stats: ItemStats, extras: Extras | None, codes: Codes,
                    sel: Selection, settings: Settings) -> Chunk:
    """Popularity and long tail per item; feature vectors and training profiles when a
    metric needs them."""
    pop, tail = stats.at(codes.item_ids)
    chunk = dataclasses.replace(chunk, popularity=pop, long_tail=tail,
                                n_train_users=stats.n_train_users,
                                popularity_total=float(stats.pop.sum()))
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


def _compact(keys: np.ndarray, values: np.ndarray, sel: Selection, codes: Codes):
    """Truth (key, value) pairs of the evaluated users, keyed by their compact codes."""
    n_items = codes.n_items
    if sel.counts.evaluated == codes.n_users:
        return keys, values
    users = sel.compact[keys // n_items]
    kept = users >= 0
    return pair_keys(users[kept], keys[kept] % n_items, n_items), values[kept]


def _chunk(lists: Lists, rel: np.ndarray, ideal_lists, codes: Codes, truth: Truth,
           sel: Selection, settings: Settings) -> Chunk:
    """The chunk: the cut lists (carried by their items), their relevance, the ideal lists
    made by ``join.ideal``; judged flags and tie groups when the build made them."""
    iu, ipos, irel, max_relevance = ideal_lists
    item, judged = lists.rows, lists.judged
    assert item is not None  # item codes since _by_items
    return Chunk(n_users=sel.counts.evaluated, user=lists.su, pos=lists.pos,
                 item=item.astype(np.int32, copy=False), rel=rel,
                 ideal_user=iu, ideal_pos=ipos, ideal_rel=irel,
                 n_relevant=sel.n_relevant[sel.evaluated], max_relevance=max_relevance,
                 judged=judged, pooled=lists.pooled, tie_start=lists.tie_start,
                 n_nonrelevant=None if judged is None else nonrelevant(codes, truth, sel,
                                                                        settings))
