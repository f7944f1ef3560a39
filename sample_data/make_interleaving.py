"""Regenerate the interleaving sample (deterministic): `python sample_data/make_interleaving.py`.

A small world where the truth is known: 24 queries of 12 items each with graded judgements
(0-4). Ranker ``main`` orders each query's items by their grade with noise, ``candidate``
with less noise, so users should prefer the candidate. Each query is shown 6 times, each time
interleaved anew by team-draft (``rankeval.interleave.make``, a seed per round), and clicked
by a simulated navigational user (the cascade model with stops, DCM, from
``rankeval.analysis.clicks``). Writes interleave_main.csv and interleave_candidate.csv (the
runs), interleave_qrels.csv (the judgements) and interleave_clicks.csv (the log: one row per
shown slot, as ``rankeval interleave score`` reads it), each small.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rankeval import interleave
from rankeval.analysis.clicks import USERS, cascade

HERE = Path(__file__).parent
QUERIES, ITEMS, K, ROUNDS = 24, 12, 5, 6


def runs(seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    qrels, main, candidate = [], [], []
    for q in range(1, QUERIES + 1):
        grades = rng.choice(5, size=ITEMS, p=[0.45, 0.25, 0.15, 0.1, 0.05])
        items = [f"d{q:02d}{i:02d}" for i in range(ITEMS)]
        qrels += [(f"q{q:02d}", d, int(g)) for d, g in zip(items, grades, strict=True) if g]
        for rows, noise in ((main, 1.6), (candidate, 0.6)):
            order = np.argsort(-(grades + rng.normal(0, noise, ITEMS)), kind="stable")
            rows += [(f"q{q:02d}", items[i], r) for r, i in enumerate(order, 1)]
    columns = ["user_id", "item_id", "rank"]
    return (pd.DataFrame(main, columns=columns), pd.DataFrame(candidate, columns=columns),
            pd.DataFrame(qrels, columns=["user_id", "item_id", "relevance"]))


def clicks(main: pd.DataFrame, candidate: pd.DataFrame, qrels: pd.DataFrame,
           seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    click, stop = USERS["navigational"]
    grade = {(u, i): g for u, i, g in qrels.itertuples(index=False)}
    parts = []
    for r in range(ROUNDS):
        shown = interleave.make([main, candidate], k=K, seed=100 + r,
                                names=["main", "candidate"]).table.to_pandas()
        shown["impression_id"] = [f"i{r}-{u}" for u in shown["user_id"]]
        grades = np.array([grade.get(key, 0) for key in zip(shown["user_id"],
                                                              shown["item_id"], strict=True)])
        per = grades.reshape(-1, K)  # every list has K slots here
        shown["clicked"] = cascade(per, click, stop, rng).reshape(-1).astype(int)
        shown["dwell"] = np.where(shown["clicked"] == 1,
                                  np.round(rng.gamma(2.0, 15.0, len(shown)), 1), np.nan)
        parts.append(shown)
    log = pd.concat(parts, ignore_index=True)
    log = log.rename(columns={"user_id": "query", "rank": "position"})
    return log[["query", "impression_id", "position", "item_id", "team", "clicked", "dwell"]]


def main() -> None:
    a, b, qrels = runs()
    a.to_csv(HERE / "interleave_main.csv", index=False)
    b.to_csv(HERE / "interleave_candidate.csv", index=False)
    qrels.to_csv(HERE / "interleave_qrels.csv", index=False)
    clicks(a, b, qrels).to_csv(HERE / "interleave_clicks.csv", index=False)


if __name__ == "__main__":
    main()
