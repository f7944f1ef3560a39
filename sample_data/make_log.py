"""Regenerate the interaction-log sample (deterministic): `python sample_data/make_log.py`.

A small world where the truth is known: 8 items, slates of 3, users of two tastes. Each
taste clicks an item with its own probability; a user reads the slate top down
(``cascade``: clicks at most once, stops there; ``position``: examines position k with
probability 1, 0.6, 0.35 and clicks independently). The logging policy draws slates by
Plackett-Luce from the items' popularity, so every propensity (of the item at a position,
of the top k, of the slate) is exact by enumerating the 336 possible slates. The new policy
ranks each taste's favourite items first. ``true_value`` is what the new policy earns per
slate on the users drawn, and the tests check that the unbiased estimators find it on
average over many simulated logs.

Writes log.csv (the logging policy's slates), log_candidate.csv (the new policy's ranked
lists), log_reward_model.csv (a deliberately rough reward model: per taste, the items'
click rates at the top) and prints the true value.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
ITEMS, LENGTH = 8, 3
EXAMINE = np.array([1.0, 0.6, 0.35])  # the position-based model's examination


@dataclass(frozen=True)
class World:
    click: np.ndarray  # tastes x items
    slates: np.ndarray  # every slate: slates x LENGTH item indices
    slate_p: np.ndarray  # the logging policy's probability of each slate
    new: np.ndarray  # tastes x LENGTH: the new policy's slate for each taste


def world(seed: int = 7) -> World:
    rng = np.random.default_rng(seed)
    click = rng.uniform(0.02, 0.45, size=(2, ITEMS))
    popularity = np.linspace(0.6, -0.6, ITEMS)
    slates = np.array(list(itertools.permutations(range(ITEMS), LENGTH)))
    weight = np.exp(popularity)
    p = np.ones(len(slates))
    for s, slate in enumerate(slates):
        left = weight.sum()
        for a in slate:
            p[s] *= weight[a] / left
            left -= weight[a]
    new = np.argsort(-(click + rng.normal(0, 0.05, click.shape)), axis=1)[:, :LENGTH]
    return World(click, slates, p, new)


def expected(w: World, taste: np.ndarray, slate: np.ndarray, model: str) -> np.ndarray:
    """Per (user, position), the expected reward of ``slate`` for users of ``taste``."""
    theta = w.click[taste[:, None], slate]
    if model == "position":
        return theta * EXAMINE
    before = np.cumprod(1 - theta, axis=1)
    return theta * np.concatenate([np.ones((len(theta), 1)), before[:, :-1]], axis=1)


def simulate(w: World, users: int, rng: np.random.Generator, model: str = "cascade"
             ) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """(log, the new policy's run, its true value per slate on these users)."""
    taste = rng.integers(0, 2, size=users)
    drawn = rng.choice(len(w.slates), size=users, p=w.slate_p)
    slate = w.slates[drawn]
    mean = expected(w, taste, slate, model)
    if model == "position":
        reward = (rng.random(mean.shape) < mean).astype(float)
    else:  # read top down, click at most once
        theta = w.click[taste[:, None], slate]
        clicks = rng.random(theta.shape) < theta
        first = np.where(clicks.any(axis=1), clicks.argmax(axis=1), LENGTH)
        reward = (np.arange(LENGTH) == first[:, None]).astype(float)
    marginal, prefix = _propensities(w)
    user = np.repeat([f"u{i:05d}" for i in range(users)], LENGTH)
    position = np.tile(np.arange(1, LENGTH + 1), users)
    items = slate.ravel()
    log = pd.DataFrame({
        "user_id": user, "position": position, "item_id": [f"i{a}" for a in items],
        "reward": reward.ravel(),
        "propensity": marginal[position - 1, items],
        "cascade_propensity": [prefix[tuple(s[:k])] for s in slate for k in range(1, 4)],
        "slate_propensity": np.repeat(w.slate_p[drawn], LENGTH)})
    run = pd.DataFrame({"user_id": user, "item_id": [f"i{a}" for a in w.new[taste].ravel()],
                        "rank": position})
    truth = float(expected(w, taste, w.new[taste], model).sum(axis=1).mean())
    return log, run, truth


def _propensities(w: World) -> tuple[np.ndarray, dict]:
    """The logging policy's probability of each item at each position, and of each top k."""
    marginal = np.zeros((LENGTH, ITEMS))
    prefix: dict[tuple, float] = {}
    for slate, p in zip(w.slates, w.slate_p, strict=True):
        for k in range(LENGTH):
            marginal[k, slate[k]] += p
            prefix[tuple(slate[: k + 1])] = prefix.get(tuple(slate[: k + 1]), 0.0) + p
    return marginal, prefix


def reward_model(w: World, log: pd.DataFrame) -> pd.DataFrame:
    """A rough model: every taste's click rate of each item, whatever its position."""
    users = log.user_id.unique()
    rows = [(u, k, f"i{a}", float(w.click[:, a].mean()))
            for u in users for k in range(1, LENGTH + 1) for a in range(ITEMS)]
    return pd.DataFrame(rows, columns=["user_id", "position", "item_id", "predicted_reward"])


def main(seed: int = 20261125) -> None:
    w = world()
    log, run, truth = simulate(w, 1000, np.random.default_rng(seed))
    log.to_csv(HERE / "log.csv", index=False)
    run.to_csv(HERE / "log_candidate.csv", index=False)
    reward_model(w, log).to_csv(HERE / "log_reward_model.csv", index=False)
    print(f"the new policy's true value: {truth:.4f} clicks per slate; the logging "
          f"policy's: {log.reward.sum() / log.user_id.nunique():.4f}")


if __name__ == "__main__":
    main()
