"""Regenerate the sample data (deterministic): `python sample_data/make_sample.py`.

A small catalogue recommender: 300 users, 400 items with a popularity skew, graded relevance 0..4
(0 = judged not relevant), and a model whose scores are the true affinity plus noise. Two users
have only non-relevant judgements and three have no predictions, so the report shows how such
users are counted. users.csv gives a country and an activity count per user (six are missing).
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent


def main(seed: int = 20261122) -> None:
    rng = np.random.default_rng(seed)
    n_users, n_items, top = 300, 400, 20
    users = [f"u{u:03d}" for u in range(1, n_users + 1)]
    items = np.array([f"i{i:04d}" for i in range(1, n_items + 1)])
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    popularity /= popularity.sum()
    preds, truth = [], []
    for u, user in enumerate(users):
        n_judged = int(rng.integers(3, 16))
        judged = rng.choice(n_items, size=n_judged, replace=False, p=popularity)
        grades = rng.choice([0, 1, 2, 3, 4], size=n_judged, p=[0.25, 0.3, 0.2, 0.15, 0.1])
        if u in (41, 207):
            grades[:] = 0
        truth += [(user, items[i], int(g)) for i, g in zip(judged, grades, strict=True)]
        if u in (17, 123, 288):
            continue
        affinity = np.zeros(n_items)
        affinity[judged] = grades
        score = 0.6 * affinity + np.log(popularity) * 0.4 + rng.normal(0, 1.2, n_items)
        best = np.argsort(-score)[:top]
        preds += [(user, items[i], r + 1, round(float(score[i]), 4)) for r, i in enumerate(best)]
    p = pd.DataFrame(preds, columns=["user_id", "item_id", "rank", "score"])
    t = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    p.to_csv(HERE / "preds.csv", index=False)
    t.to_csv(HERE / "truth.csv", index=False)
    p.to_parquet(HERE / "preds.parquet", index=False)
    t.to_parquet(HERE / "truth.parquet", index=False)
    # A second model to compare with: the 20 most popular items for everyone (no randomness).
    popular = [(user, items[i], r + 1) for user in users for r, i in enumerate(range(top))]
    pd.DataFrame(popular, columns=["user_id", "item_id", "rank"]).to_csv(
        HERE / "popular.csv", index=False)
    _train_and_catalog(np.random.default_rng(seed + 1), users, items, popularity, t)
    _users(np.random.default_rng(seed + 2), users)
    _stochastic(np.random.default_rng(seed + 3), p)
    _item_groups(np.random.default_rng(seed + 4), items)


def _item_groups(rng, items) -> None:
    """Item groups (--item-groups, awrf): a provider (a few large ones own the popular head,
    as catalogs go; some items have two) and a popularity tier by catalog rank."""
    providers = np.where(np.arange(len(items)) < 80, rng.choice(["acme", "globex"], len(items)),
                         rng.choice(["acme", "globex", "initech", "umbrella", "hooli"],
                                    len(items)))
    tier = np.where(np.arange(len(items)) < 40, "head",
                    np.where(np.arange(len(items)) < 200, "mid", "tail"))
    rows = [(i, p, t) for i, p, t in zip(items, providers, tier, strict=True)]
    second = rng.choice(len(items), size=30, replace=False)  # co-produced items
    rows += [(items[j], "indie", tier[j]) for j in second]
    pd.DataFrame(rows, columns=["item_id", "provider", "tier"]).to_csv(
        HERE / "item_groups.csv", index=False)


def _stochastic(rng, preds: pd.DataFrame, samples: int = 8, depth: int = 10) -> None:
    """A stochastic ranker (stochastic.run, TREC, the sample in the Q0 field): per user,
    ``samples`` Plackett-Luce draws of a top ``depth`` over the model's 20 items, weighted by
    exp(score), drawn by the Gumbel trick."""
    lines = []
    for user, rows in preds.groupby("user_id", sort=True):
        score = rows.score.to_numpy()
        for s in range(samples):
            order = np.argsort(-(score + rng.gumbel(size=len(score))))[:depth]
            lines += [f"{user} s{s + 1} {rows.item_id.iloc[i]} {r + 1} {depth - r} pl\n"
                      for r, i in enumerate(order)]
    (HERE / "stochastic.run").write_text("".join(lines))


def _users(rng, users) -> None:
    """User attributes to break the metrics down by (--segments): a country, and the number
    of training interactions. Six users are missing, as in real user tables."""
    train = pd.read_csv(HERE / "train.csv")
    activity = train.groupby("user_id").size()
    country = rng.choice(["DE", "FR", "KR", "US", "BR"], size=len(users),
                         p=[0.3, 0.2, 0.2, 0.2, 0.1])
    rows = [(u, c, int(activity.get(u, 0))) for u, c in zip(users, country, strict=True)]
    missing = set(rng.choice(len(users), size=6, replace=False).tolist())
    pd.DataFrame([r for i, r in enumerate(rows) if i not in missing],
                 columns=["user_id", "country", "train_interactions"]).to_csv(
        HERE / "users.csv", index=False)


def _train_and_catalog(rng, users, items, popularity, truth: pd.DataFrame) -> None:
    """What each user consumed before the test period (never a test item), with play counts;
    and the catalog: every item, including some nobody saw."""
    held_out = set(zip(truth.user_id, truth.item_id, strict=True))
    rows = []
    for user in users:
        seen = rng.choice(len(items), size=int(rng.integers(8, 31)), replace=False, p=popularity)
        rows += [(user, items[i], int(rng.integers(1, 6))) for i in seen
                 if (user, items[i]) not in held_out]
    pd.DataFrame(rows, columns=["user_id", "item_id", "count"]).to_csv(HERE / "train.csv",
                                                                        index=False)
    pd.DataFrame({"item_id": items}).to_csv(HERE / "catalog.csv", index=False)


if __name__ == "__main__":
    main()
