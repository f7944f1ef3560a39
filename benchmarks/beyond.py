"""Beyond-accuracy and scores-path timings (issue #14's targets), in-process, medians.

    python benchmarks/beyond.py --rounds 3

- ild@10 with 64-dimensional item features on 1,000,000 users (target: under 10 s, end to end
  from in-memory tables);
- personalization@10 on 1,000,000 users: the kernel alone, from the merged item counts (target:
  under 1 s), and end to end;
- evaluate_scores: 100,000 users x 50,000 items from 64-dimensional factors, six accuracy
  metrics @10, 5,000,000 seen pairs masked (target: under 30 s).

Data is generated with a fixed seed: Zipf-like item popularity over 100,000 items, lists of 10.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rankeval
from rankeval.kernels.corpus import CORPUS_KERNELS, Lists


def lists(rng, n_users: int, n_items: int, length: int) -> tuple[pa.Table, pa.Table]:
    """Top-``length`` lists with Zipf-like popularity (distinct items per user), and a truth
    of one relevant item per user."""
    weights = 1.0 / np.arange(1, n_items + 1) ** 0.9
    cdf = np.cumsum(weights / weights.sum())
    items = np.searchsorted(cdf, rng.random((n_users, length * 2)))
    items = np.minimum(items, n_items - 1)
    rows = np.sort(items, axis=1)
    distinct = np.concatenate([np.ones((n_users, 1), bool), rows[:, 1:] != rows[:, :-1]], 1)
    # Keep the first ``length`` distinct items of each user (a few users get fewer).
    keep = distinct & (np.cumsum(distinct, axis=1) <= length)
    user = np.repeat(np.arange(n_users), keep.sum(axis=1))
    item = rows[keep]
    rank = np.concatenate([np.arange(1, c + 1) for c in np.bincount(user, minlength=n_users)])
    preds = pa.table({"user_id": user, "item_id": item, "rank": rank})
    truth = pa.table({"user_id": np.arange(n_users), "item_id": rows[:, 0],
                      "relevance": np.ones(n_users)})
    return preds, truth


def timed(label: str, rounds: int, work) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"{label:<58} {median:8.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)})")
    return median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--users", type=int, default=1_000_000)
    a = ap.parse_args()
    rng = np.random.default_rng(2026)
    n_items = 100_000
    preds, truth = lists(rng, a.users, n_items, 10)
    features = pa.table({"item_id": np.arange(n_items),
                         **{f"f{d}": rng.normal(size=n_items) for d in range(64)}})
    print(f"{a.users:,} users, {preds.num_rows:,} predictions, {n_items:,} items")
    timed("ild@10, 64-d features (end to end)", a.rounds, lambda: rankeval.evaluate(
        preds, truth, ["ild@10"], item_features=features))
    timed("personalization@10 (end to end)", a.rounds, lambda: rankeval.evaluate(
        preds, truth, ["personalization@10"]))
    counts = np.bincount(preds.column("item_id").to_numpy(), minlength=n_items)
    x = Lists(counts=counts[counts > 0], users=a.users, k=10, catalog_size=n_items)
    timed("personalization@10 (kernel, from item counts)", a.rounds,
          lambda: CORPUS_KERNELS["personalization"](x))

    nu, ni = 100_000, 50_000
    # float32 factors, as models keep them (float64 ones take about 1.5x longer).
    u = rng.normal(size=(nu, 64)).astype(np.float32)
    v = rng.normal(size=(ni, 64)).astype(np.float32)

    def pairs(n: int):
        m = sp.csr_matrix((np.ones(n), (rng.integers(0, nu, n), rng.integers(0, ni, n))),
                          shape=(nu, ni))
        m.data[:] = 1.0
        return m

    test, train = pairs(2_000_000), pairs(5_000_000)

    timed("evaluate_scores 100k x 50k, 64-d float32 factors, 6 metrics @10", a.rounds,
          lambda: rankeval.evaluate_scores(
              (u, v), test, ["precision", "recall", "hit_rate", "mrr", "map", "ndcg"], k=10,
              exclude=train))


if __name__ == "__main__":
    main()
