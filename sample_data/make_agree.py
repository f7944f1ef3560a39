"""Regenerate the judge-agreement sample (deterministic): `python sample_data/make_agree.py`.

A small pool: 20 queries, 10 documents each, a true grade 0-3 per document. The human qrels
hold the true grades; the machine judge reads each grade with noise and overrates (one grade
up a third of the time), and it judged 2 documents of every query that the humans did not,
while the humans judged 2 queries the machine did not. Three runs rank the pool: each sees
the true grades through its own noise, and ``agree_llm.csv`` prefers what the machine judge
overrates (it ranks by the machine's grades), the bias such judges show toward rankers like
them.

Writes agree_human.csv, agree_machine.csv and agree_bm25.csv, agree_dense.csv,
agree_llm.csv (query, docid, rank).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
QUERIES, DOCS = 20, 10


def main(seed: int = 48) -> None:
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i + 1}" for i in range(QUERIES)], DOCS)
    d = np.tile([f"d{j + 1}" for j in range(DOCS)], QUERIES)
    grade = rng.choice(4, size=len(q), p=[0.5, 0.25, 0.15, 0.1])
    machine = np.clip(grade + rng.choice([-1, 0, 1], size=len(q), p=[0.1, 0.55, 0.35]), 0, 3)
    pool = pd.DataFrame({"query": q, "docid": d})
    doc = np.tile(np.arange(DOCS), QUERIES)
    late = np.isin(q, ["q19", "q20"])
    pool.assign(relevance=grade)[(doc < 8) & ~np.isin(q, ["q1", "q2"]) | (doc < 8) & late
                                 ].to_csv(HERE / "agree_human.csv", index=False)
    pool.assign(relevance=machine)[~late].to_csv(HERE / "agree_machine.csv", index=False)
    for name, seen, noise in (("bm25", grade, 1.4), ("dense", grade, 0.9),
                              ("llm", machine, 0.9)):
        score = seen + rng.normal(0, noise, len(q))
        run = pool.assign(score=score).sort_values(["query", "score"], ascending=[True, False],
                                                   kind="stable")
        run["rank"] = run.groupby("query", sort=False).cumcount() + 1
        run.sort_values(["query", "rank"], key=lambda c: c.str[1:].astype(int)
                        if c.name == "query" else c)[["query", "docid", "rank"]].to_csv(
            HERE / f"agree_{name}.csv", index=False)


if __name__ == "__main__":
    main()
