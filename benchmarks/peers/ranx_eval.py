"""ranx: Qrels and Run from pandas DataFrames, then ranx.evaluate (numba)."""

import pandas as pd
import ranx
from common import METRICS, args, write

preds_path, truth_path, out = args()
preds = pd.read_csv(preds_path, dtype={"user_id": str, "item_id": str})
truth = pd.read_csv(truth_path, dtype={"user_id": str, "item_id": str})
# ranx wants object (not pandas' string) dtype for ids.
preds[["user_id", "item_id"]] = preds[["user_id", "item_id"]].astype(object)
truth[["user_id", "item_id"]] = truth[["user_id", "item_id"]].astype(object)
qrels = ranx.Qrels.from_df(truth, q_id_col="user_id", doc_id_col="item_id", score_col="relevance")
run = ranx.Run.from_df(preds, q_id_col="user_id", doc_id_col="item_id", score_col="score")
means = ranx.evaluate(qrels, run, [r for _, r in METRICS.values()], make_comparable=True)
write(out, {ours: float(means[r]) for ours, (_, r) in METRICS.items()})
