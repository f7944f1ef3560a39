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
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parquet", action="store_true", help="also write Parquet twins")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    preds, truth = generate(a.users, a.list, a.judged, a.items, a.seed)
    write_files(preds, truth, a.out, a.parquet)
    print(f"{a.out}: {preds.num_rows:,} prediction rows, {truth.num_rows:,} truth rows")


if __name__ == "__main__":
    main()
