"""Generated predictions and truth for oracle and property tests (explicit seeds, no globals)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def generate(seed: int, n_users: int, n_items: int, list_len: int, judged: int,
             grades: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tie-free scores, integer grades 0..grades-1; some users only in one of the two files.

    Returns (predictions with user_id, item_id, score; truth with user_id, item_id, relevance).
    """
    rng = np.random.default_rng(seed)
    users = np.array([f"u{u}" for u in range(n_users)])
    items = np.array([f"d{i}" for i in range(n_items)])
    pu, pi = [], []
    for u in range(n_users):
        if u % 11 == 5:  # no predictions for this truth user
            continue
        pu.append(np.full(list_len, u))
        pi.append(rng.choice(n_items, size=min(list_len, n_items), replace=False))
    p_user = np.concatenate(pu)
    p_item = np.concatenate(pi)
    # Distinct scores: a shuffled ladder, so no two rows tie anywhere.
    scores = (rng.permutation(len(p_user)) + 1) / (len(p_user) + 1) * 10 - 3
    tu, ti, tr = [], [], []
    for u in range(n_users + 3):  # three truth users never predicted for, by id
        if u % 13 == 7:
            continue  # predicted users that are absent from the truth
        k = int(rng.integers(1, judged + 1))
        # Judge mostly items the run retrieved, so that hits are common.
        own = pi[min(u, len(pi) - 1)] if u < n_users else np.array([], dtype=int)
        pool = np.unique(np.concatenate([own[: list_len // 2], rng.choice(n_items, size=k)]))
        chosen = rng.choice(pool, size=min(k, len(pool)), replace=False)
        tu.append(np.full(len(chosen), u))
        ti.append(chosen)
        tr.append(rng.integers(0, grades, size=len(chosen)))
    all_users = np.array([f"u{u}" for u in range(n_users + 3)])
    preds = pd.DataFrame({"user_id": users[p_user], "item_id": items[p_item], "score": scores})
    truth = pd.DataFrame({
        "user_id": all_users[np.concatenate(tu)],
        "item_id": items[np.concatenate(ti)],
        "relevance": np.concatenate(tr).astype(float),
    })
    return preds, truth


def as_dicts(preds: pd.DataFrame, truth: pd.DataFrame):
    """(qrels, run) as dicts of dicts, the form ranx and pytrec_eval take."""
    qrels: dict[str, dict[str, int]] = {}
    for u, i, r in truth.itertuples(index=False):
        qrels.setdefault(u, {})[i] = int(r)
    run: dict[str, dict[str, float]] = {}
    for u, i, s in preds[["user_id", "item_id", "score"]].itertuples(index=False):
        run.setdefault(u, {})[i] = float(s)
    return qrels, run
