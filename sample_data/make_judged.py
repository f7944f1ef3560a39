"""Regenerate the machine-judged sample (deterministic): `python sample_data/make_judged.py`.

A small world where the truth is known (#48, docs/machine-judged.md): 250 queries of 15
candidate documents each, every document with a human grade 0-2. Two runs rank the same
candidates from noisy scores: ``bm25`` (less noise) and ``llm`` (more noise): under the human
grades, bm25 is the better run. A machine judge (an LLM) labels every pair from a known
confusion matrix of human grade -> machine grade, more generous on the documents the llm run
puts in its top 5 (a judge that favours rankers like itself). A uniform random 20% of the
queries (50) are judged by humans too: the gold sample.

``true_ndcg`` is each run's nDCG@10 under the human grades of every query: what an estimate
from the machine judgments and the gold sample should find.

Writes judged_bm25.run and judged_llm.run (TREC runs), judged_llm.qrels (the machine
judgments, every query), judged_human.qrels (the human judgments of the gold queries) and
prints each run's true nDCG@10.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
QUERIES, DOCS, DEPTH, GOLD_SHARE = 250, 15, 10, 0.2
NOISE = {"bm25": 1.0, "llm": 1.4}  # the score noise of each run: bm25 ranks better
# P(machine grade | human grade): rows human 0, 1, 2
JUDGE = np.array([[0.80, 0.15, 0.05],
                  [0.15, 0.65, 0.20],
                  [0.03, 0.17, 0.80]])
# ... on the documents the llm run ranks in its top 5: the judge overrates them
FAVOURED = np.array([[0.45, 0.40, 0.15],
                     [0.05, 0.45, 0.50],
                     [0.00, 0.10, 0.90]])
FAVOURED_RUN, FAVOURED_DEPTH = "llm", 5


@dataclass(frozen=True)
class World:
    human: pd.DataFrame  # query, doc, grade: every pair
    machine: pd.DataFrame  # query, doc, grade: every pair
    runs: dict[str, pd.DataFrame]  # name -> query, doc, rank, score (top DEPTH)
    gold: np.ndarray  # the gold queries


def world(seed: int = 48) -> World:
    rng = np.random.default_rng(seed)
    query = np.repeat([f"q{i:03d}" for i in range(QUERIES)], DOCS)
    doc = np.tile([f"d{j:02d}" for j in range(DOCS)], QUERIES)
    easy = np.repeat(rng.beta(2, 3, QUERIES), DOCS)  # share of relevant documents
    grade = np.where(rng.random(len(query)) < easy,
                     np.where(rng.random(len(query)) < 0.4, 2, 1), 0)
    runs, favoured = {}, np.zeros(len(query), dtype=bool)
    for name, noise in NOISE.items():
        score = np.round(grade + rng.normal(0, noise, len(query)), 4)
        order = np.lexsort((-score, query))  # by query, best score first
        rank = np.empty(len(query), dtype=np.int64)
        rank[order] = np.tile(np.arange(1, DOCS + 1), QUERIES)
        if name == FAVOURED_RUN:
            favoured = rank <= FAVOURED_DEPTH
        top = rank <= DEPTH
        runs[name] = pd.DataFrame({"query": query[top], "doc": doc[top], "rank": rank[top],
                                   "score": score[top]}).sort_values(["query", "rank"])
    # the machine grade: a draw from the judge's row of the human grade
    rows = np.where(favoured[:, None], FAVOURED[grade], JUDGE[grade])
    machine = (rng.random(len(query))[:, None] > np.cumsum(rows, axis=1)).sum(axis=1)
    gold = np.sort(rng.choice(QUERIES, int(QUERIES * GOLD_SHARE), replace=False))
    return World(pd.DataFrame({"query": query, "doc": doc, "grade": grade}),
                 pd.DataFrame({"query": query, "doc": doc, "grade": machine}), runs,
                 np.array([f"q{i:03d}" for i in gold]))


def true_ndcg(w: World) -> dict[str, float]:
    """Each run's nDCG@10 (linear gain) under the human grades of every query, by hand."""
    out = {}
    ideal = (np.sort(w.human["grade"].to_numpy().reshape(QUERIES, DOCS), axis=1)[:, ::-1]
             [:, :DEPTH] / np.log2(np.arange(2, DEPTH + 2))).sum(axis=1)
    grades = w.human.set_index(["query", "doc"])["grade"]
    for name, run in w.runs.items():
        got = grades.loc[list(zip(run["query"], run["doc"], strict=True))].to_numpy()
        dcg = (got.reshape(QUERIES, DEPTH) / np.log2(np.arange(2, DEPTH + 2))).sum(axis=1)
        scored = ideal > 0  # queries without a relevant document are skipped (the default)
        out[name] = float((dcg[scored] / ideal[scored]).mean())
    return out


def _qrels(frame: pd.DataFrame, path: Path) -> None:
    lines = [f"{q} 0 {d} {g}" for q, d, g in frame.itertuples(index=False)]
    path.write_text("\n".join(lines) + "\n")


def main(seed: int = 48) -> None:
    w = world(seed)
    for name, run in w.runs.items():
        lines = [f"{q} Q0 {d} {r} {s:.4f} {name}" for q, d, r, s in run.itertuples(index=False)]
        (HERE / f"judged_{name}.run").write_text("\n".join(lines) + "\n")
    _qrels(w.machine, HERE / "judged_llm.qrels")
    _qrels(w.human[w.human["query"].isin(w.gold)], HERE / "judged_human.qrels")
    for name, value in true_ndcg(w).items():
        print(f"{name}: true nDCG@10 {value:.4f}")


if __name__ == "__main__":
    main()
