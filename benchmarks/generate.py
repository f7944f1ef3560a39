"""Synthetic runs and qrels of any size, generated with vectorized numpy (fixed seeds).

    python benchmarks/generate.py --users 1000000 --list 10 --judged 5 --out /tmp/M

writes preds.csv, truth.csv (and .parquet twins with --parquet) in --out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
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
    users: int, list_len: int, judged: int, items: int, popularity: str = "zipf", seed: int = 0
) -> tuple[pa.Table, pa.Table]:
    """Data shaped like a real catalog: numeric ids, lists of variable length (1 to
    2 x ``list_len``), items drawn from ``items`` ids either with Zipf-like popularity (a few items
    everywhere, a long tail) or uniformly (the worst case for id dictionaries)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 2 * list_len, users)
    p_user = np.repeat(np.arange(users), lengths)
    p_item = _draw(rng, len(p_user), items, popularity)
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
                      _draw(rng, len(t_user), items, popularity))
    t_user, t_item = _distinct_pairs(t_user, t_item, items)
    grade = rng.integers(0, 4, len(t_item))
    offset = 10**6  # numeric ids that read as integers and never as 0-padded text
    preds = pa.table({"user_id": pa.array(p_user + offset), "item_id": pa.array(p_item + offset),
                      "rank": pa.array(rank), "score": pa.array(score)})
    truth = pa.table({"user_id": pa.array(t_user + offset), "item_id": pa.array(t_item + offset),
                      "relevance": pa.array(grade)})
    return preds, truth


def _draw(rng, n: int, items: int, popularity: str) -> np.ndarray:
    if popularity == "uniform":
        return rng.integers(0, items, n)
    # Zipf-like: P(rank r) ~ 1 / r^1.1, truncated at the catalog size, popular ids spread out.
    r = np.minimum(rng.zipf(1.1, n), items) - 1
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


def write_files(preds: pa.Table, truth: pa.Table, out: Path, parquet: bool = False) -> None:
    """preds.csv and truth.csv (ids never need quotes), and Parquet twins."""
    out.mkdir(parents=True, exist_ok=True)
    plain = pa_csv.WriteOptions(quoting_style="none")
    pa_csv.write_csv(preds, out / "preds.csv", plain)
    pa_csv.write_csv(truth, out / "truth.csv", plain)
    if parquet:
        pq.write_table(preds, out / "preds.parquet")
        pq.write_table(truth, out / "truth.parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--users", type=int, required=True)
    ap.add_argument("--list", type=int, default=10, help="predictions per user")
    ap.add_argument("--judged", type=int, default=5, help="truth rows per user")
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--popularity", choices=["pool", "zipf", "uniform"], default="pool",
                    help="pool: i<n> string ids from a pool (S, M, W); zipf or uniform: numeric "
                    "ids from a catalog of --items, lists of variable length")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parquet", action="store_true", help="also write Parquet twins")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.popularity == "pool":
        preds, truth = generate(a.users, a.list, a.judged, a.items, a.seed)
    else:
        preds, truth = generate_catalog(a.users, a.list, a.judged, a.items, a.popularity, a.seed)
    write_files(preds, truth, a.out, a.parquet)
    print(f"{a.out}: {preds.num_rows:,} prediction rows, {truth.num_rows:,} truth rows")


if __name__ == "__main__":
    main()
