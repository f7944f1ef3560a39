"""``evaluate_scores``: evaluate a model's scores without files, from a training loop or a
notebook. The top K of each user is taken block by block of users (``argpartition``, never a
full sort, never the whole users x items matrix in memory), seen items masked first, and the
lists then go through the same engine as ``evaluate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.api.request import request
from rankeval.engines.pipeline import run as run_job
from rankeval.errors import OptionError, plural
from rankeval.io.arrow import fill_null, to_numpy
from rankeval.io.load import load_train, open_input
from rankeval.kernels.chunk import segment_positions
from rankeval.registry import REGISTRY
from rankeval.settings import Settings

_BLOCK_CELLS = 1 << 23  # scores held at once (64 MiB of float64): the block of users


def evaluate_scores(
    scores: Any,
    truth: Any,
    metrics: str | Sequence[str] | None = None,
    k: int | str | Sequence[int | str] | None = None,
    *,
    exclude: Any = None,
    users: Sequence[Any] | None = None,
    items: Sequence[Any] | None = None,
    n_users: int | None = None,
    n_items: int | None = None,
    **options: Any,
):
    """Evaluate scores: a dense users x items array, the factors of a factorization model
    ``(user_factors, item_factors)`` (scores are their product), or a callable that returns
    the scores of a block of user indices.

    ``truth`` and ``exclude`` (items each user has already seen, masked before the top K) are
    scipy.sparse users x items matrices (truth values are relevance) or tables/paths with
    user and item ids. ``users`` / ``items`` name the rows and columns (default: their index
    as text). Ties in score follow ``ties`` as everywhere (items whose score equals the K-th
    are all kept, so that the tie rule, not the block, decides). Every other keyword is an
    ``evaluate`` option. The lists are each user's top max(K) items.

    >>> result = evaluate_scores((U, V), test_matrix, ["ndcg", "recall"], k=10, exclude=train)
    """
    compute, n_u, n_i = _scorer(scores, n_users, n_items)
    user_ids = _ids(users, n_u, "users")
    item_ids = _ids(items, n_i, "items")
    masked: list[Any] = []  # the seen items' matrix, once the cut-off is known

    def supplied(settings: Settings) -> dict[str, Any]:
        """The cut-off checked, then the extra inputs the scores give: the columns are the
        catalog; the seen items are the training interactions (popularity) unless other
        ones are given."""
        if not settings.k:
            raise OptionError("evaluate_scores needs a cut-off K: the lists are each user's "
                              "top K")
        seen = _matrix(exclude, user_ids, item_ids, "exclude") if exclude is not None else None
        masked.append(seen)
        needs = {n for spec in settings.specs for n in REGISTRY[spec.name].needs}
        out: dict[str, Any] = {}
        if "catalog" in needs and "catalog" not in options:
            out["catalog"] = pa.table({"item_id": pa.array(item_ids.tolist(), pa.string())})
        if seen is not None and "interactions" in needs:
            out["train"] = _sparse_table(seen, user_ids, item_ids, "count")
        return out

    engine, own = options.pop("engine", "local"), options.pop("engine_options", None)
    made = request(None, None, metrics, k, options, engine=engine,
                   engine_options=own or {}, extras_for=supplied)
    run = _top_k(compute, n_u, n_i, max(made.job.settings.k), masked[0], user_ids, item_ids)
    gold = _sparse_table(truth, user_ids, item_ids, "relevance") if _is_sparse(truth) else truth
    job = replace(made.job, inputs=replace(made.job.inputs, predictions=run, truth=gold))
    made.engine.check(job)
    return run_job(made.engine, job)


def _scorer(scores: Any, n_users: int | None, n_items: int | None
            ) -> tuple[Callable[[np.ndarray], np.ndarray], int, int]:
    """(scores of a block of user indices, number of users, number of items)."""
    if isinstance(scores, tuple) and len(scores) == 2:
        u, v = (np.asarray(x) for x in scores)
        # float32 factors (as most models keep them) give float32 scores, exactly as the
        # model's own product would; anything else is computed in float64.
        kind = np.float32 if u.dtype == v.dtype == np.float32 else np.float64
        u, v = u.astype(kind, copy=False), v.astype(kind, copy=False)
        if u.ndim != 2 or v.ndim != 2 or u.shape[1] != v.shape[1]:
            raise OptionError("factors must be (users x d, items x d) arrays with the same d, "
                              f"got {u.shape} and {v.shape}")
        if not (np.isfinite(u).all() and np.isfinite(v).all()):
            raise OptionError("factors must be finite numbers (NaN or infinity found)")
        vt = np.ascontiguousarray(v.T)
        return (lambda rows: u[rows] @ vt), u.shape[0], v.shape[0]  # a fresh array
    if callable(scores):
        if n_users is None or n_items is None:
            raise OptionError("a scoring function needs n_users and n_items")
        # The caller's array may be reused: a copy, since seen items are masked in place.
        return (lambda rows: np.array(scores(rows), dtype=np.float64)), n_users, n_items
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise OptionError(f"scores must be a users x items array, got shape {matrix.shape}")
    return (lambda rows: matrix[rows]), matrix.shape[0], matrix.shape[1]  # a copy (fancy index)


def _ids(names: Sequence[Any] | None, n: int, what: str) -> np.ndarray:
    if names is None:
        return np.arange(n).astype(str).astype(object)  # no Python loop over users
    out = np.array([str(x) for x in names], dtype=object)
    if len(out) != n:
        raise OptionError(f"{what}: {len(out)} names for {n} {what}")
    return out


def _top_k(compute, n_users: int, n_items: int, depth: int, seen, user_ids, item_ids
           ) -> pa.Table:
    """Each user's top ``depth`` items by score (and every item tied with the last one), as
    a (user, item, score) table; seen items never enter."""
    block = max(1, _BLOCK_CELLS // max(n_items, 1))
    kk = min(depth, n_items)

    def work(start: int):
        rows = np.arange(start, min(start + block, n_users))
        s = compute(rows)  # a fresh array each time (see _scorer)
        if s.shape != (len(rows), n_items):
            raise OptionError(f"the scores of {plural(len(rows), 'user')} have shape {s.shape}, "
                              f"expected {(len(rows), n_items)}")
        # NaN and infinities propagate to the extremes: two reductions, not a test per score.
        if not (np.isfinite(s.max(initial=0.0)) and np.isfinite(s.min(initial=0.0))):
            raise OptionError("scores must be finite numbers (NaN or infinity found)")
        if seen is not None:
            sub = seen[start:start + len(rows)].tocoo()
            s[sub.row, sub.col] = -np.inf
        r, c, v = _best(s, kk)
        return rows[r], c, v

    # Two threads: the products and the selections of two blocks overlap (numpy and BLAS
    # release the GIL).
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(work, range(0, n_users, block)))
    u = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    i = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    v = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0)
    return pa.table({"user_id": _labels(u, user_ids), "item_id": _labels(i, item_ids),
                     "score": pa.array(v.astype(np.float64), pa.float64())})


def _best(s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, score) of each row's k largest finite scores and of every score tied
    with the k-th, in no particular order.

    No sort and no argpartition of the whole row: the k-th largest of the maxima of 8k
    column chunks is a lower bound of the row's k-th largest score (those maxima are k
    distinct scores), so one comparison finds a few candidates per row, and only they are
    sorted."""
    n_rows, n = s.shape
    chunks = max(8 * k, 64)
    if chunks * 4 > n:  # a small catalog: every score is a candidate
        bound = np.full(n_rows, -np.inf)
    else:
        width = n // chunks
        maxima = s[:, :width * chunks].reshape(n_rows, chunks, width).max(axis=2)
        if width * chunks < n:
            maxima = np.column_stack([maxima, s[:, width * chunks:].max(axis=1)])
        bound = np.partition(maxima, maxima.shape[1] - k, axis=1)[:, maxima.shape[1] - k]
    flat = np.flatnonzero(s >= bound[:, None])
    row, col = flat // n, flat % n
    val = s.ravel()[flat]
    finite = np.isfinite(val)  # seen items (-inf) never enter
    row, col, val = row[finite], col[finite], val[finite]
    order = np.lexsort((-val, row))
    row, col, val = row[order], col[order], val[order]
    place = segment_positions(row)
    kth = np.full(n_rows, -np.inf)
    at_k = place == k
    kth[row[at_k]] = val[at_k]  # rows with fewer than k finite scores keep them all
    keep = val >= kth[row]
    return row[keep], col[keep], val[keep]


def _is_sparse(x: Any) -> bool:
    return type(x).__module__.startswith("scipy.sparse")


def _matrix(data: Any, user_ids: np.ndarray, item_ids: np.ndarray, what: str):
    """A users x items CSR matrix of the pairs in ``data`` (sparse already, or a table)."""
    import scipy.sparse as sp  # import cost: 0.2 s, for sparse inputs only

    if _is_sparse(data):
        m = sp.csr_matrix(data)
        if m.shape != (len(user_ids), len(item_ids)):
            raise OptionError(f"{what}: a {m.shape} matrix for {plural(len(user_ids), 'user')} x "
                              f"{plural(len(item_ids), 'item')}")
        return m
    table = load_train(open_input(data, "train"))
    u, i = _positions(table.user, user_ids), _positions(table.item, item_ids)
    ok = (u >= 0) & (i >= 0)
    return sp.csr_matrix((np.ones(int(ok.sum())), (u[ok], i[ok])),
                         shape=(len(user_ids), len(item_ids)))


def _positions(values: pa.ChunkedArray, names: np.ndarray) -> np.ndarray:
    """Where each id sits among ``names`` (-1: not there)."""
    found = pc.index_in(values, value_set=pa.array(names.tolist(), pa.string()))
    return to_numpy(fill_null(found, -1)).astype(np.int64)


def _labels(codes: np.ndarray, names: np.ndarray) -> pa.DictionaryArray:
    """Ids as a dictionary array: no Python string per row."""
    # pyarrow-stubs type array() of any ndarray as a BooleanArray (its first overload)
    indices = cast("pa.Int32Array", pa.array(codes.astype(np.int32)))
    return pa.DictionaryArray.from_arrays(indices, pa.array(names.tolist(), pa.string()))


def _sparse_table(m, user_ids: np.ndarray, item_ids: np.ndarray, value: str) -> pa.Table:
    import scipy.sparse as sp  # import cost: 0.2 s, for sparse inputs only

    coo = sp.coo_matrix(m)
    if coo.shape != (len(user_ids), len(item_ids)):
        raise OptionError(f"truth: a {coo.shape} matrix for {plural(len(user_ids), 'user')} x "
                          f"{plural(len(item_ids), 'item')}")
    return pa.table({"user_id": _labels(coo.row, user_ids), "item_id": _labels(coo.col, item_ids),
                     value: pa.array(coo.data.astype(np.float64))})

