"""Shared by the peer scripts: the metric set, arguments, and writing the means."""

from __future__ import annotations

import json
import sys

K = 10
# rankeval name -> (pytrec_eval measure, ranx metric)
METRICS = {
    "ndcg@10": ("ndcg_cut_10", "ndcg@10"),
    "map@10": ("map_cut_10", "map@10"),
    "mrr@10": ("recip_rank", "mrr@10"),  # trec_eval's recip_rank on the run cut at 10
    "precision@10": ("P_10", "precision@10"),
    "recall@10": ("recall_10", "recall@10"),
    "hit_rate@10": ("success_10", "hit_rate@10"),
}


def args() -> tuple[str, str, str]:
    """preds.csv truth.csv out.json"""
    preds, truth, out = sys.argv[1:4]
    return preds, truth, out


def write(out: str, means: dict[str, float]) -> None:
    with open(out, "w") as fh:
        json.dump(means, fh)
