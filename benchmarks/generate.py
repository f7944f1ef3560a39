"""Synthetic runs and qrels of any size, generated with vectorized numpy (fixed seeds).

    python benchmarks/generate.py --users 1000000 --list 10 --judged 5 --out /tmp/M

writes preds.csv, truth.csv (and .parquet twins with --parquet) in --out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq


def generate(
    users: int, list_len: int, judged: int, items: int = 100_000, seed: int = 0
) -> tuple[pa.Table, pa.Table]:
    """A run of ``list_len`` items per user (distinct, with rank and tie-free score) and a truth of
    ``judged`` graded items per user, about half of them drawn from the user's own list."""
    rng = np.random.default_rng(seed)
    width = len(str(users))
    user_ids = pa.array(np.char.add("u", np.char.zfill(np.arange(users).astype(str), width)))
    # Distinct items per user: a random start plus a random odd stride modulo a prime-sized pool.
    pool = _prime_at_least(max(items, list_len + judged))
    start = rng.integers(0, pool, users)[:, None]
    stride = rng.integers(1, pool, users)[:, None]
    steps = np.arange(list_len + judged)[None, :]
    cand = (start + stride * steps) % pool  # distinct within a row because pool is prime
    listed = cand[:, :list_len]
    p_user = np.repeat(np.arange(users), list_len)
    rank = np.tile(np.arange(1, list_len + 1), users)
    score = np.round(100 - rank + rng.random(users * list_len) * 0.5, 6)

    # Truth: for each user, pick judged items: some from the list, the rest from outside it.
    from_list = rng.random((users, judged)) < 0.5
    pick = rng.integers(0, list_len, (users, judged))
    inside = np.take_along_axis(listed, pick, axis=1)
    outside = cand[:, list_len : list_len + judged]
    t_item = np.where(from_list, inside, outside)
    # Drop repeats within a user (two picks of the same listed item): sort and mask.
    t_item.sort(axis=1)
    keep = np.ones_like(t_item, dtype=bool)
    keep[:, 1:] = t_item[:, 1:] != t_item[:, :-1]
    t_user = np.repeat(np.arange(users), judged)[keep.ravel()]
    t_item = t_item.ravel()[keep.ravel()]
    grade = rng.integers(0, 4, len(t_item))

    item_names = np.char.add("i", np.arange(pool).astype(str))
    preds = pa.table(
        {
            "user_id": user_ids.take(pa.array(p_user)),
            "item_id": pa.array(item_names[listed.ravel()]),
            "rank": pa.array(rank),
            "score": pa.array(score),
        }
    )
    truth = pa.table(
        {
            "user_id": user_ids.take(pa.array(t_user)),
            "item_id": pa.array(item_names[t_item]),
            "relevance": pa.array(grade),
        }
    )
    return preds, truth


def generate_catalog(
    users: int, list_len: int, judged: int, items: int, popularity: str = "zipf", seed: int = 0,
    ids: str = "dense", zipf: float = 1.1, lengths: str = "uniform",
) -> tuple[pa.Table, pa.Table]:
    """Data shaped like a real catalog: lists of variable length (``lengths``: uniform over 1
    to 2 x ``list_len``, or geometric with mean ``list_len``, at most 5 x), items drawn from
    ``items`` ids either with Zipf-like popularity of exponent ``zipf`` (a few items
    everywhere, a long tail) or uniformly (the worst case for id dictionaries); user and item
    ids of the kind ``ids`` names (``ID_KINDS``)."""
    rng = np.random.default_rng(seed)
    if lengths == "geometric":
        counts = np.minimum(rng.geometric(1 / list_len, users), 5 * list_len)
    else:
        counts = rng.integers(1, 2 * list_len, users)
    p_user = np.repeat(np.arange(users), counts)
    p_item = _draw(rng, len(p_user), items, popularity, zipf)
    p_user, p_item = _distinct_pairs(p_user, p_item, items)
    rank = _positions(p_user)
    score = np.round(1000 - rank + rng.random(len(rank)) * 0.5, 6)
    # Truth: each user's judgements, half of them from the user's own list.
    t_user = np.repeat(np.arange(users), judged)
    own = rng.random(len(t_user)) < 0.5
    starts = np.concatenate([[0], np.cumsum(np.bincount(p_user, minlength=users))[:-1]])
    counts = np.bincount(p_user, minlength=users)
    pick = starts[t_user] + (rng.random(len(t_user)) * counts[t_user]).astype(np.int64)
    t_item = np.where(own & (counts[t_user] > 0), p_item[np.minimum(pick, len(p_item) - 1)],
                      _draw(rng, len(t_user), items, popularity, zipf))
    t_user, t_item = _distinct_pairs(t_user, t_item, items)
    grade = rng.integers(0, 4, len(t_item))
    user_ids, item_ids = (ID_KINDS[ids](np.random.default_rng(seed + k), n)
                          for k, n in ((1, users), (2, items)))
    preds = pa.table({"user_id": user_ids.take(pa.array(p_user)),
                      "item_id": item_ids.take(pa.array(p_item)),
                      "rank": pa.array(rank), "score": pa.array(score)})
    truth = pa.table({"user_id": user_ids.take(pa.array(t_user)),
                      "item_id": item_ids.take(pa.array(t_item)),
                      "relevance": pa.array(grade)})
    return preds, truth


def _dense(rng, n: int) -> pa.Array:
    """Numbers from 10^6 on: they read as integers, never as 0-padded text."""
    return pa.array(np.arange(n, dtype=np.int64) + 10**6)


def _sparse(rng, n: int) -> pa.Array:
    """Distinct numbers spread over a space 20 times wider than their count, shuffled."""
    return pa.array(rng.permutation(np.cumsum(rng.integers(1, 40, n)) + 10**6))


def _hashed(rng, n: int) -> pa.Array:
    """Distinct random 64-bit integers, half of them negative (hashed ids)."""
    values = np.unique(rng.integers(-(2**63), 2**63 - 1, int(n * 1.01) + 16, dtype=np.int64))
    return pa.array(rng.permutation(values)[:n])


def _text(rng, n: int, width: int, alphabet: bytes, dashes: tuple[int, ...] = (),
          first: bytes = b"") -> pa.Array:
    """Distinct random strings of ``width`` characters of ``alphabet`` after ``first``,
    with dashes inserted at the ``dashes`` places."""
    chars = np.frombuffer(alphabet, dtype=np.uint8)
    body = chars[rng.integers(0, len(chars), (n, width))]
    if first:
        body = np.concatenate([np.tile(np.frombuffer(first, np.uint8), (n, 1)), body], axis=1)
    for at in dashes:
        body = np.insert(body, at, ord("-"), axis=1)
    text = pa.array(np.ascontiguousarray(body).view(f"S{body.shape[1]}").ravel()).cast(
        pa.string())
    assert len(pc.unique(text)) == n, "a repeated random id: choose another seed"
    return text


ID_KINDS = {
    "dense": _dense,
    "sparse": _sparse,
    "hashed": _hashed,
    # 36 characters: 8-4-4-4-12 hexadecimal digits
    "uuid": lambda rng, n: _text(rng, n, 32, b"0123456789abcdef", (8, 13, 18, 23)),
    # 10 characters, as Amazon's ASINs: B and 9 upper-case letters or digits
    "asin": lambda rng, n: _text(rng, n, 9, b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                                 first=b"B"),
}


def _draw(rng, n: int, items: int, popularity: str, zipf: float = 1.1) -> np.ndarray:
    if popularity == "uniform":
        return rng.integers(0, items, n)
    # Zipf-like: P(rank r) ~ 1 / r^zipf, truncated at the catalog size, popular ids spread out.
    if zipf > 1:
        r = np.minimum(rng.zipf(zipf, n), items) - 1
    else:  # numpy's sampler needs an exponent above 1: the law over the catalog's ranks
        weights = np.cumsum(np.arange(1, items + 1, dtype=np.float64) ** -zipf)
        r = np.searchsorted(weights, rng.random(n) * weights[-1], side="right")
        r = np.minimum(r, items - 1)
    return (r * 2654435761) % items  # a fixed permutation of ranks to ids


def _distinct_pairs(user: np.ndarray, item: np.ndarray, items: int):
    """Drop repeated (user, item) pairs, keeping the first, in order."""
    _, first = np.unique(user.astype(np.int64) * items + item, return_index=True)
    first.sort()
    return user[first], item[first]


def _positions(sorted_user: np.ndarray) -> np.ndarray:
    starts = np.flatnonzero(np.diff(sorted_user, prepend=-1))
    counts = np.diff(np.append(starts, len(sorted_user)))
    return np.arange(len(sorted_user)) - np.repeat(starts, counts) + 1


def _prime_at_least(n: int) -> int:
    def is_prime(m: int) -> bool:
        return m > 1 and all(m % d for d in range(2, int(m**0.5) + 1))

    while not is_prime(n):
        n += 1
    return n


def write_files(preds: pa.Table, truth: pa.Table, out: Path, parquet: bool = False,
                text: str = "string") -> None:
    """preds.csv and truth.csv (ids never need quotes), and Parquet twins, their text stored
    as ``text``: string (pyarrow's and Spark's writers) or large_string (pandas 3's)."""
    out.mkdir(parents=True, exist_ok=True)
    plain = pa_csv.WriteOptions(quoting_style="none")
    pa_csv.write_csv(preds, out / "preds.csv", plain)
    pa_csv.write_csv(truth, out / "truth.csv", plain)
    if parquet:
        for table, name in ((preds, "preds.parquet"), (truth, "truth.parquet")):
            pq.write_table(table.cast(pa.schema([
                pa.field(f.name, pa.type_for_alias(text) if pa.types.is_string(f.type)
                         else f.type) for f in table.schema])), out / name)


def write_trec(preds: pa.Table, truth: pa.Table, out: Path) -> None:
    """preds.run (``qid Q0 docno rank score tag``) and truth.qrels (``qid 0 docno rel``), the
    same data as TREC text, for trec_eval."""
    zero = pa.array(["0"] * truth.num_rows)
    q0, tag = pa.array(["Q0"] * preds.num_rows), pa.array(["bench"] * preds.num_rows)
    for table, name in ((pa.table([preds["user_id"], q0, preds["item_id"], preds["rank"],
                                   preds["score"], tag],
                                  names=["qid", "q0", "docno", "rank", "score", "tag"]),
                         "preds.run"),
                        (pa.table([truth["user_id"], zero, truth["item_id"], truth["relevance"]],
                                  names=["qid", "iter", "docno", "rel"]), "truth.qrels")):
        pa_csv.write_csv(table, out / name, pa_csv.WriteOptions(
            include_header=False, delimiter=" ", quoting_style="none"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--users", type=int, required=True)
    ap.add_argument("--list", type=int, default=10, help="predictions per user")
    ap.add_argument("--judged", type=int, default=5, help="truth rows per user")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--popularity", choices=["pool", "zipf", "uniform"], default="pool",
                    help="pool: i<n> string ids from a pool (S, M, W); zipf or uniform: numeric "
                    "ids from a catalog of --items, lists of variable length")
    ap.add_argument("--ids", choices=list(ID_KINDS), default="dense",
                    help="the kind of user and item ids of the zipf and uniform catalogs")
    ap.add_argument("--zipf", type=float, default=1.1, help="the Zipf exponent of popularity")
    ap.add_argument("--lengths", choices=["uniform", "geometric"], default="uniform",
                    help="list lengths: uniform over 1 to 2 x --list, or geometric of mean --list")
    ap.add_argument("--trec", action="store_true", help="also write preds.run and truth.qrels")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parquet", action="store_true", help="also write Parquet twins")
    ap.add_argument("--parquet-text", choices=["string", "large_string"], default="string",
                    help="how the Parquet twins store text: string (pyarrow's and Spark's "
                    "writers) or large_string (pandas 3's to_parquet)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.popularity == "pool":
        preds, truth = generate(a.users, a.list, a.judged, a.items, a.seed)
    else:
        preds, truth = generate_catalog(a.users, a.list, a.judged, a.items, a.popularity, a.seed,
                                        a.ids, a.zipf, a.lengths)
    write_files(preds, truth, a.out, a.parquet, a.parquet_text)
    if a.trec:
        write_trec(preds, truth, a.out)
    print(f"{a.out}: {preds.num_rows:,} prediction rows, {truth.num_rows:,} truth rows")


if __name__ == "__main__":
    main()
