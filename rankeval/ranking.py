"""Typed inputs to flat, sorted arrays: ids factorized, lists ordered and cut, truth joined.

Everything here is vectorized over all rows at once; there is no loop over users. The result,
a ``Chunk``, holds complete users and is all the metric kernels need.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow import from_numpy, to_numpy
from .errors import InputError, Notice, Problems, report
from .validate import Predictions, Truth

TIES = ("trec", "item-asc", "input")
TIE_WORDS = {
    "trec": "item id descending, as trec_eval",
    "item-asc": "item id ascending",
    "input": "the order of the rows in the file",
}


@dataclass(frozen=True)
class Chunk:
    """The top-K lists and ideal lists of ``n_users`` complete users, as flat arrays.

    Rows are sorted by (user, pos); ``user`` holds codes 0..n_users-1 and ``pos`` is 1-based.
    Any subset of complete users is itself a valid chunk, so the kernels can run partition by
    partition.
    """

    n_users: int
    user: np.ndarray  # int64, ranked rows
    pos: np.ndarray  # int64, 1 = best
    rel: np.ndarray  # float64, 0 where the item is not in the truth
    ideal_user: np.ndarray  # int64, truth rows sorted by relevance descending within user
    ideal_pos: np.ndarray
    ideal_rel: np.ndarray
    n_relevant: np.ndarray  # R: relevant truth items per user
    max_relevance: np.ndarray  # highest truth relevance per user

    def users(self, start: int, stop: int) -> Chunk:
        """The sub-chunk of users ``start <= code < stop``, renumbered from 0 (a partition)."""
        a, b = np.searchsorted(self.user, [start, stop])
        c, d = np.searchsorted(self.ideal_user, [start, stop])
        return Chunk(
            n_users=stop - start,
            user=self.user[a:b] - start,
            pos=self.pos[a:b],
            rel=self.rel[a:b],
            ideal_user=self.ideal_user[c:d] - start,
            ideal_pos=self.ideal_pos[c:d],
            ideal_rel=self.ideal_rel[c:d],
            n_relevant=self.n_relevant[start:stop],
            max_relevance=self.max_relevance[start:stop],
        )


@dataclass(frozen=True)
class UserCounts:
    """How many users fall in each case of SPEC section 2."""

    evaluated: int
    in_truth: int
    in_predictions: int
    without_relevant: int  # truth users with no relevant item
    without_predictions: int  # users that could be evaluated but have no predictions
    only_in_predictions: int  # prediction users absent from the truth


@dataclass(frozen=True)
class Built:
    chunk: Chunk
    users: pa.Array  # the evaluated users' ids, in code order (sorted as byte strings)
    counts: UserCounts
    notices: list[Notice]
    prediction_rows_beyond_k: int


def factorize(*columns: pa.ChunkedArray) -> tuple[list[np.ndarray], pa.Array]:
    """Integer codes for the ids of several columns over one shared dictionary.

    Codes follow the byte order of the ids, so sorting by code sorts by id (trec_eval compares
    docnos with strcmp) and the output order never depends on row order. Ids read as
    dictionaries are hashed once per distinct value of each chunk, never once per row: the
    chunks' small dictionaries are encoded together in one pass, and each row's code is then a
    gather through its chunk's slice of that encoding.
    """
    pieces = [[_as_dictionary(chunk) for chunk in col.chunks] for col in columns]
    values = [v for col in pieces for v, _ in col] or [pa.array([], pa.string())]
    if sum(v.nbytes for v in values) >= 2**31 - 2**20:  # past what 32-bit string offsets hold
        values = [v.cast(pa.large_string()) for v in values]
    encoded = pa.concat_arrays(values).dictionary_encode()
    distinct = encoded.dictionary
    codes = to_numpy(encoded.indices).astype(np.int32, copy=False)
    by_bytes = to_numpy(pc.sort_indices(distinct))
    if (by_bytes[1:] < by_bytes[:-1]).any():  # ids arrived out of order: renumber them
        rank = np.empty(len(by_bytes), dtype=np.int32)
        rank[by_bytes] = np.arange(len(by_bytes), dtype=np.int32)
        codes = rank[codes]
        distinct = distinct.take(from_numpy(by_bytes))
    out, start = [], 0
    for col in pieces:
        column_codes = np.empty(sum(len(idx) for _, idx in col), dtype=np.int32)
        row = 0
        for dictionary, idx in col:
            lookup = codes[start : start + len(dictionary)]
            np.take(lookup, idx, out=column_codes[row : row + len(idx)])
            start, row = start + len(dictionary), row + len(idx)
        out.append(column_codes)
    return out, distinct


def _as_dictionary(chunk: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """(distinct values, each row's index into them) of one chunk of ids."""
    if not pa.types.is_dictionary(chunk.type):
        chunk = chunk.cast(pa.string()).dictionary_encode()
    return chunk.dictionary.cast(pa.string()), to_numpy(chunk.indices)


def segment_positions(sorted_user: np.ndarray) -> np.ndarray:
    """1-based position of each row within its run of equal user codes (codes sorted, >= 0)."""
    n = len(sorted_user)
    dtype = np.int32 if n < 2**31 else np.int64  # half the memory of every later pass
    if n == 0:
        return np.zeros(0, dtype=dtype)
    # A running sum of ones that drops back to 1 at the first row of each user.
    starts = np.flatnonzero(sorted_user[1:] != sorted_user[:-1]) + 1
    steps = np.ones(n, dtype=dtype)
    steps[starts] = 1 - np.diff(starts, prepend=0)
    return np.cumsum(steps, out=steps)


def _duplicates(keys: np.ndarray) -> np.ndarray:
    """Row indices (file order) of every repeat of an earlier key; empty when all keys differ."""
    sk = np.sort(keys)
    if not (sk[1:] == sk[:-1]).any():  # the common, clean case: one fast sort, no argsort
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    return np.sort(order[1:][sk[1:] == sk[:-1]])


def _in_order(keys: list[tuple[np.ndarray, bool]]) -> bool:
    """Whether rows already follow ``keys`` (primary first; ``True`` means descending)."""
    undecided = np.ones(max(len(keys[0][0]) - 1, 0), dtype=bool)
    for values, descending in keys:
        a, b = (values[1:], values[:-1]) if descending else (values[:-1], values[1:])
        if (undecided & (a > b)).any():
            return False
        undecided &= a == b
        if not undecided.any():
            break
    return True


def sort_order(keys: list[tuple[np.ndarray, bool]]) -> np.ndarray | None:
    """A stable sort permutation by several keys, primary first; ``(values, descending)``;
    None when the rows are in that order already.

    Files usually arrive grouped and ordered already, so that case costs one linear check;
    otherwise Arrow's multi-key sort, which is much faster than ``np.lexsort``.
    """
    if _in_order(keys):
        return None
    table = pa.table({f"k{j}": from_numpy(values) for j, (values, _) in enumerate(keys)})
    sort_keys = [(f"k{j}", "descending" if d else "ascending") for j, (_, d) in enumerate(keys)]
    return to_numpy(pc.sort_indices(table, sort_keys=sort_keys))


def _report_duplicates(
    data: Predictions | Truth, rows: np.ndarray, hint: str | None, problems: Problems | None
) -> None:
    take = pa.array(rows[:5])
    users, items = data.user.take(take).to_pylist(), data.item.take(take).to_pylist()
    examples = [(int(r) + 1, f"{u} / {i}") for r, u, i in zip(rows[:5], users, items, strict=True)]
    report(
        InputError(
            data.source.label,
            "(user, item) pairs listed more than once",
            count=len(rows),
            examples=examples,
            hint=hint,
        ),
        problems,
    )


def build(
    preds: Predictions,
    truth: Truth,
    ks: list[int],
    *,
    cut: int | None,
    ties: str = "trec",
    relevance_threshold: float | None,
    dedupe: bool,
    skip_missing_users: bool,
    zero_relevant_users: str,
    problems: Problems | None = None,
) -> Built:
    """Join, order and cut the predictions; count every user case of SPEC section 2.

    ``ks`` are the cut-offs checked for ties; lists are cut at ``cut`` (None: never).
    ``ties`` orders tied scores: ``trec`` (item id descending), ``item-asc``, ``input``.
    """
    kmax = cut if cut is not None else np.iinfo(np.int64).max
    notices: list[Notice] = []
    # Users and items are encoded at once on the two cores (Arrow releases the GIL).
    with ThreadPoolExecutor(2) as pool:
        users_job = pool.submit(factorize, truth.user, preds.user)
        (t_item, p_item), items = factorize(truth.item, preds.item)
        (t_user, p_user), user_ids = users_job.result()
    n_users, n_items = len(user_ids), max(len(items), 1)
    if n_users * n_items >= 2**63:
        raise InputError(preds.source.label, "too many distinct users x items to index")
    # Only positive relevance matters to any metric (gain and relevance are 0 at or below 0),
    # so the lookup and the ideal lists need only the positive truth rows.
    keys, values, dup = _truth_pairs(t_user, t_item, truth.relevance, n_items)
    if len(dup):
        _report_duplicates(truth, dup, None, problems)

    relevant = _relevant(truth.relevance, relevance_threshold)
    n_relevant_all = np.bincount(t_user[relevant], minlength=n_users)
    in_truth, in_preds = np.zeros(n_users, dtype=bool), np.zeros(n_users, dtype=bool)
    in_truth[t_user] = True
    in_preds[p_user] = True
    eligible = in_truth & ((n_relevant_all > 0) | (zero_relevant_users == "zero"))
    missing = eligible & ~in_preds
    evaluated = eligible & ~missing if skip_missing_users else eligible
    counts = UserCounts(
        evaluated=int(evaluated.sum()),
        in_truth=int(in_truth.sum()),
        in_predictions=int(in_preds.sum()),
        without_relevant=int((in_truth & (n_relevant_all == 0)).sum()),
        without_predictions=int(missing.sum()),
        only_in_predictions=int((in_preds & ~in_truth).sum()),
    )
    # Evaluated users get compact codes 0..n-1; the map is monotonic, so sorted stays sorted.
    compact = np.full(n_users, -1, dtype=np.int32)
    compact[evaluated] = np.arange(counts.evaluated, dtype=np.int32)

    # Order the run, only for the users being evaluated. ``rows`` maps ordered rows to file
    # rows; None means "the same": every user is evaluated and the file is in order already,
    # the common case, which then costs no gathers and no index arrays.
    if counts.evaluated == n_users:
        keep, u, others = None, p_user, None  # compact is the identity
    else:
        u = compact[p_user]
        keep = np.flatnonzero(u >= 0)
        others = np.flatnonzero(u < 0)  # rows of users not evaluated: still checked below
        u = u[keep]
    order = _order(preds, keep, u, p_item, ties)
    rows = keep if order is None else order if keep is None else keep[order]
    su = u if order is None else u[order]

    # Repeated (user, item) pairs: in rank order, so that a repeat is the worse-ranked copy.
    repeat = _repeats(su, p_item, rows, n_items)
    n_repeats = int(repeat.sum()) if repeat is not None else 0
    if others is not None and len(others):
        n_repeats += len(_duplicates(_keys(p_user[others], p_item[others], n_items)))
    if n_repeats and not dedupe:
        # The error names file rows, found again over the whole file (a rare, slower path).
        dup = _duplicates(_keys(p_user, p_item, n_items))
        _report_duplicates(preds, dup, "--dedupe keeps the best-ranked one", problems)
    elif n_repeats:
        if repeat is not None:
            first = ~repeat
            rows = np.flatnonzero(first) if rows is None else rows[first]
            su = su[first]
        notices.append(
            Notice(
                "duplicates_dropped",
                f"{n_repeats:,} repeated (user, item) rows in {preds.source.label} were dropped "
                "(--dedupe kept the best-ranked of each)",
                n_repeats,
            )
        )
    pos = segment_positions(su)

    if preds.rank is not None:
        r = _take(preds.rank, rows)
        same = (su[1:] == su[:-1]) & (r[1:] == r[:-1])
        if same.any():
            bad = np.sort(_take(np.arange(len(preds.rank)), rows)[1:][same])
            report(
                InputError(
                    preds.source.label,
                    "ranks repeated within a user",
                    column=preds.columns["rank"],
                    count=len(bad),
                    examples=[(int(i) + 1, int(preds.rank[i])) for i in bad[:5]],
                ),
                problems,
            )
        gaps = np.unique(su[r != pos]).size
        if gaps:
            notices.append(
                Notice(
                    "rank_gaps",
                    f"{gaps:,} users have gaps in their ranks: ranks give the order, and positions "
                    "are counted 1, 2, 3, ... in that order",
                    gaps,
                )
            )
        if preds.score is not None:
            sc = _take(preds.score, rows)
            rises = (su[1:] == su[:-1]) & (sc[1:] > sc[:-1])
            n = np.unique(su[1:][rises]).size if rises.any() else 0
            if n:
                notices.append(
                    Notice(
                        "scores_disagree_with_ranks",
                        f"{n:,} users have scores that rise as their ranks fall: the rank "
                        f"column orders the lists ({preds.columns['score']!r} is not used); "
                        "tools that order by score (trec_eval, ranx) will disagree",
                        n,
                    )
                )
    elif preds.score is not None:
        s = _take(preds.score, rows)
        tied_users = [np.zeros(0, dtype=np.int64)]
        for k in ks:
            at_k = np.flatnonzero(pos[:-1] == k)
            straddle = (su[at_k + 1] == su[at_k]) & (s[at_k + 1] == s[at_k])
            tied_users.append(su[at_k[straddle]])
        n_tied = len(np.unique(np.concatenate(tied_users)))
        if n_tied:
            notices.append(
                Notice(
                    "ties_at_cutoff",
                    f"{n_tied:,} users have tied scores across a cut-off K, so their values "
                    f"depend on the tie-break (--ties {ties}: {TIE_WORDS[ties]})",
                    n_tied,
                )
            )

    cut = pos <= kmax
    beyond = int(len(cut) - np.count_nonzero(cut))
    if beyond:
        rows = np.flatnonzero(cut) if rows is None else rows[cut]
        su, pos = su[cut], pos[cut]
    if counts.evaluated < n_users:  # to the evaluated users' compact codes (still sorted)
        users = compact[keys // n_items]
        kept = users >= 0
        keys = _keys(users[kept], keys[kept] % n_items, n_items)
        values = values[kept]
    rel = _lookup(keys, values, su, p_item, rows, n_items)

    # The ideal list: positive truth relevances sorted descending within each evaluated user,
    # cut at K (rows at or below 0 add no gain and come last, so they can be left out).
    iu, irel = _ideal(keys // n_items, values)
    del keys, values
    ipos = segment_positions(iu)
    max_relevance = np.full(counts.evaluated, -np.inf)
    max_relevance[iu[ipos == 1]] = irel[ipos == 1]
    icut = ipos <= kmax

    chunk = Chunk(
        n_users=counts.evaluated,
        user=su,
        pos=pos,
        rel=rel,
        ideal_user=iu[icut],
        ideal_pos=ipos[icut],
        ideal_rel=irel[icut],
        n_relevant=n_relevant_all[evaluated],
        max_relevance=max_relevance,
    )
    notices.extend(_user_notices(counts, preds, truth, skip_missing_users, zero_relevant_users))
    notices.extend(_padding_notices(user_ids, items))
    return Built(
        chunk,
        user_ids.take(from_numpy(np.flatnonzero(evaluated))),
        counts,
        notices,
        beyond,
    )


def _keys(user: np.ndarray, item: np.ndarray, n_items: int) -> np.ndarray:
    """One int64 key per (user, item) pair, ordered as the pairs are."""
    keys = user.astype(np.int64)
    keys *= n_items
    keys += item
    return keys


def _grade_bits(rel: np.ndarray) -> int | None:
    """Bits that hold every relevance when all are whole numbers in 1..2^20; else None."""
    top = float(rel.max()) if len(rel) else 0.0
    if 1 <= top < 2**20 and (rel == np.floor(rel)).all():
        return int(top).bit_length()
    return None


def _truth_pairs(user, item, rel, n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positive truth rows as (key, relevance) sorted by key, and the rows (over the whole
    truth) that repeat an earlier row's pair."""
    key = _keys(user, item, n_items)
    positive = rel > 0
    keys, values = key[positive], rel[positive]
    bits = _grade_bits(values)
    if bits is not None and int(keys.max()).bit_length() + bits <= 62:
        # Whole-number grades ride in the low bits: one plain sort orders keys and values,
        # several times faster than an argsort and two gathers.
        keys <<= bits
        keys |= values.astype(np.int64)
        keys.sort()
        values = (keys & ((1 << bits) - 1)).astype(np.float64)
        keys >>= bits
    else:
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
    key.sort()
    if len(key) < 2 or not (key[1:] == key[:-1]).any():
        return keys, values, np.zeros(0, dtype=np.int64)
    return keys, values, _duplicates(_keys(user, item, n_items))  # rare: name the file rows


def _ideal(user: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(user, rel) sorted by user, then relevance descending; ``user`` is sorted already and
    is reused (the caller hands it over)."""
    bits = _grade_bits(rel)
    if bits is None:
        order = sort_order([(user, False), (rel, True)])
        return (user, rel) if order is None else (user[order], rel[order])
    top = (1 << bits) - 1  # packed as top - rel, so that a plain ascending sort puts
    packed = user.astype(np.int64, copy=False)  # the highest grade first
    packed <<= bits
    packed |= (top - rel).astype(np.int64)
    packed.sort()
    rel = top - (packed & top).astype(np.float64)
    packed >>= bits
    return packed, rel


def _relevant(relevance: np.ndarray, threshold: float | None) -> np.ndarray:
    return relevance > 0 if threshold is None else relevance >= threshold


def _take(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return values if rows is None else values[rows]


def _order(
    preds: Predictions, keep: np.ndarray | None, u: np.ndarray, item: np.ndarray, ties: str
) -> np.ndarray | None:
    """Permutation of the kept rows that sorts them by user, then by the run's own order;
    None when they are in that order already."""
    if preds.rank is not None:
        return sort_order([(u, False), (_take(preds.rank, keep), False)])
    if preds.score is not None:
        by_score = [(u, False), (_take(preds.score, keep), True)]
        if ties == "input":
            return sort_order(by_score)  # stable: tied rows keep the file order
        # trec_eval: item id descending; codes follow the byte order of the ids.
        return sort_order([*by_score, (_take(item, keep), ties == "trec")])
    return sort_order([(u, False)])  # stable: the file order within each user


_BLOCK = 1 << 20  # rows per block: its temporaries stay in cache-sized, reused memory


def _blocks(su: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges of about ``_BLOCK`` rows that never split a user (``su`` sorted)."""
    n = len(su)
    if n <= _BLOCK:
        return [(0, n)]
    cuts = np.searchsorted(su, su[np.arange(_BLOCK, n, _BLOCK)])  # back to a user's first row
    edges = np.unique(np.concatenate([[0], cuts, [n]]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def _each_block(work, blocks: list[tuple[int, int]]) -> list:
    """``work(a, b)`` for every block, on the two cores (numpy releases the GIL)."""
    if len(blocks) == 1:
        return [work(*blocks[0])]
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda ab: work(*ab), blocks))


def _block_keys(su, item, rows, n_items, a: int, b: int) -> np.ndarray:
    """(user, item) keys of the ordered rows a..b, made block by block: never one huge array."""
    return _keys(su[a:b], item[a:b] if rows is None else item[rows[a:b]], n_items)


def _repeats(su, item, rows, n_items: int) -> np.ndarray | None:
    """Which ordered rows repeat the (user, item) of an earlier row; None when none does.

    Blocks hold whole users, so a pair cannot repeat across blocks."""

    def work(a: int, b: int) -> np.ndarray | None:
        keys = _block_keys(su, item, rows, n_items, a, b)
        if len(keys) < 2 or not (np.diff(np.sort(keys)) == 0).any():
            return None  # the clean case: one fast sort
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


def _lookup(keys, values, su, item, rows, n_items: int) -> np.ndarray:
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


def _padding_notices(*dictionaries: pa.Array) -> list[Notice]:
    """Ids with leading or trailing whitespace: legal, compared exactly, and often a mistake."""
    padded = sum(
        int(pc.sum(pc.not_equal(d, pc.utf8_trim_whitespace(d))).as_py() or 0)
        for d in dictionaries
    )
    if not padded:
        return []
    return [
        Notice(
            "padded_ids",
            f"{padded:,} distinct ids have leading or trailing whitespace; ids are compared "
            "exactly as written (' u1' and 'u1' are different users)",
            padded,
        )
    ]


def _user_notices(
    c: UserCounts, preds: Predictions, truth: Truth, skip_missing: bool, zero_relevant: str
) -> list[Notice]:
    notices = []
    if c.without_relevant:
        notices.append(
            Notice(
                "users_without_relevant",
                f"{c.without_relevant:,} truth users have no relevant item and are scored 0 and "
                "averaged in (--zero-relevant-users zero)"
                if zero_relevant == "zero"
                else f"{c.without_relevant:,} truth users have no relevant item and are not "
                "evaluated (--zero-relevant-users zero scores them 0)",
                c.without_relevant,
            )
        )
    if c.without_predictions:
        notices.append(
            Notice(
                "users_without_predictions",
                f"{c.without_predictions:,} users have relevant items but no predictions and are "
                "skipped (--skip-missing-users)"
                if skip_missing
                else f"{c.without_predictions:,} users have relevant items but no predictions and "
                "score 0 on every metric (--skip-missing-users excludes them)",
                c.without_predictions,
            )
        )
    if c.only_in_predictions:
        notices.append(
            Notice(
                "users_only_in_predictions",
                f"{c.only_in_predictions:,} users of {preds.source.label} are not in "
                f"{truth.source.label} and are not evaluated",
                c.only_in_predictions,
            )
        )
    if c.in_predictions and c.in_predictions == c.only_in_predictions:
        notices.append(
            Notice(
                "no_shared_users",
                f"{preds.source.label} and {truth.source.label} share no user id: check the user "
                "columns (ids are compared as text, so '7' and '007' differ)",
            )
        )
    return notices
