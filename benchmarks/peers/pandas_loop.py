"""The script many teams write: pandas reads, then a Python loop over users."""

import math

import pandas as pd
from common import METRICS, K, args, write

preds_path, truth_path, out = args()
preds = pd.read_csv(preds_path, dtype={"user_id": str, "item_id": str})
truth = pd.read_csv(truth_path, dtype={"user_id": str, "item_id": str})
preds = preds.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
lists = preds.groupby("user_id", sort=False)["item_id"].apply(lambda s: list(s[:K])).to_dict()
judged = {
    u: dict(zip(g.item_id, g.relevance, strict=True))
    for u, g in truth.groupby("user_id", sort=False)
}
sums = dict.fromkeys(METRICS, 0.0)
for user, rels in judged.items():
    ranked = lists.get(user, [])
    gains = [rels.get(i, 0) for i in ranked]
    hits = [g > 0 for g in gains]
    r = sum(v > 0 for v in rels.values())
    ideal = sorted(rels.values(), reverse=True)[:K]
    idcg = sum(g / math.log2(j + 2) for j, g in enumerate(ideal))
    dcg = sum(g / math.log2(j + 2) for j, g in enumerate(gains))
    found, ap, first = 0, 0.0, 0
    for j, h in enumerate(hits, 1):
        if h:
            found += 1
            ap += found / j
            first = first or j
    sums["ndcg@10"] += dcg / idcg if idcg else 0.0
    sums["map@10"] += ap / r if r else 0.0
    sums["mrr@10"] += 1 / first if first else 0.0
    sums["precision@10"] += found / K
    sums["recall@10"] += found / r if r else 0.0
    sums["hit_rate@10"] += 1.0 if found else 0.0
write(out, {m: v / len(judged) for m, v in sums.items()})
