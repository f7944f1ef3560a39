"""pytrec_eval (trec_eval's C code): pandas reads, the run is cut at K, dicts are built."""

import pandas as pd
import pytrec_eval
from common import METRICS, K, args, write

preds_path, truth_path, out = args()
preds = pd.read_csv(preds_path, dtype={"user_id": str, "item_id": str})
truth = pd.read_csv(truth_path, dtype={"user_id": str, "item_id": str})
preds = preds.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
preds = preds.groupby("user_id", sort=False).head(K)
run: dict = {}
for u, i, s in zip(preds.user_id, preds.item_id, preds.score.astype(float), strict=True):
    run.setdefault(u, {})[i] = s
qrels: dict = {}
for u, i, r in zip(truth.user_id, truth.item_id, truth.relevance.astype(int), strict=True):
    qrels.setdefault(u, {})[i] = r
measures = {m for m, _ in METRICS.values()}
per_user = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
n = len(qrels)  # trec_eval -c: qrels users without a run count as 0
write(out, {ours: sum(v[m] for v in per_user.values()) / n for ours, (m, _) in METRICS.items()})
