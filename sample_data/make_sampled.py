"""Regenerate the sampled-ranks sample (deterministic): `python sample_data/make_sampled.py`.

Two models rank 500 held-out items among 400 candidates; each item is then ranked again
among 50 negatives sampled without replacement, as sampled evaluations do. Model A puts
many items at the very top and the rest far down; model B puts most items fairly high but
few at the top. Written: sampled_a.csv and sampled_b.csv (user_id, item_id, rank among the
51), and full_a.csv and full_b.csv (the true rank among the 400) to check the corrections
against.

Then the form a scoring job writes: a model scores all 400 candidates of 300 users, and
sampled_scores.csv keeps the scores of each user's held-out item and 50 sampled negatives
(user_id, item_id, score, rounded to 2 decimals, so some tie); sampled_heldout.csv names the
held-out items. The held-out items' true hit_rate@10 among the 400 is printed.
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
CANDIDATES, NEGATIVES, ITEMS = 400, 50, 500


def main(seed: int = 20261125) -> None:
    rng = np.random.default_rng(seed)
    full = {
        "a": np.where(rng.random(ITEMS) < 0.35, rng.integers(1, 4, ITEMS),
                      rng.integers(60, CANDIDATES + 1, ITEMS)),
        "b": np.minimum(rng.integers(8, 40, ITEMS), CANDIDATES),
    }
    for name, ranks in full.items():
        sampled = np.array([1 + int((rng.choice(CANDIDATES - 1, NEGATIVES, replace=False)
                                     < r - 1).sum()) for r in ranks])
        ids = {"user_id": [f"u{i:03d}" for i in range(ITEMS)],
               "item_id": [f"i{int(x):03d}" for x in rng.integers(0, 999, ITEMS)]}
        pd.DataFrame({**ids, "rank": sampled}).to_csv(HERE / f"sampled_{name}.csv",
                                                      index=False)
        pd.DataFrame({**ids, "rank": ranks}).to_csv(HERE / f"full_{name}.csv", index=False)
    scores_and_heldout(np.random.default_rng(seed + 1))


def scores_and_heldout(rng: np.random.Generator, users: int = 300) -> None:
    rows, heldout, full = [], [], []
    for u in range(users):
        scores = np.round(rng.normal(size=CANDIDATES), 2)
        item = int(rng.integers(CANDIDATES))
        scores[item] = round(scores[item] + 1.5, 2)  # the model tends to like it
        full.append(1 + int((scores > scores[item]).sum()))
        others = np.delete(np.arange(CANDIDATES), item)
        for x in [item, *rng.choice(others, NEGATIVES, replace=False)]:
            rows.append((f"u{u:03d}", f"i{int(x):03d}", float(scores[x])))
        heldout.append((f"u{u:03d}", f"i{item:03d}"))
    pd.DataFrame(rows, columns=["user_id", "item_id", "score"]).to_csv(
        HERE / "sampled_scores.csv", index=False)
    pd.DataFrame(heldout, columns=["user_id", "item_id"]).to_csv(
        HERE / "sampled_heldout.csv", index=False)
    print(f"true hit_rate@10 among {CANDIDATES}: {np.mean(np.array(full) <= 10):.4f}")


if __name__ == "__main__":
    main()
