"""Regenerate the sampled-ranks sample (deterministic): `python sample_data/make_sampled.py`.

Two models rank 500 held-out items among 400 candidates; each item is then ranked again
among 50 negatives sampled without replacement, as sampled evaluations do. Model A puts
many items at the very top and the rest far down; model B puts most items fairly high but
few at the top. Written: sampled_a.csv and sampled_b.csv (user_id, item_id, rank among the
51), and full_a.csv and full_b.csv (the true rank among the 400) to check the corrections
against.
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


if __name__ == "__main__":
    main()
