"""Fairness between groups of users (``--segments``): the largest gap in each metric between
the segments of a user attribute, with a bootstrap interval, and the gate on it
(``--max-gap ndcg@10=0.05``).

The gap is the best segment's mean minus the worst's (best: the higher mean, or the lower on
a metric where lower is better), over the segments where some user has a value; users absent
from the segment table (``(missing)``) are not a group and take no part. Its interval is the
percentile interval of the gap over bootstrap rounds that resample users within each segment
(stratified: every segment keeps its size), so the best and worst segments may change between
rounds, as they could between samples of users. Past ``_EXACT_DRAWS`` resampled values the
segments' bootstrap means are drawn from their normal approximation, N(mean, sd^2 / n), which
the central limit theorem makes exact enough for segments that large (``method`` says which).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.analysis.gates import lower_better
from rankeval.analysis.segments import MISSING, user_labels
from rankeval.kernels.distinct import with_inverse

_EXACT_DRAWS = 20_000_000  # users x rounds resampled one by one; past it, the normal draws
ROUNDS = 2000


@dataclass(frozen=True)
class Gap:
    """The largest gap in ``metric`` between the segments of ``column``."""

    column: str
    metric: str
    best: str
    worst: str
    gap: float  # NaN: fewer than two segments have a value
    low: float
    high: float
    level: float
    segments: int
    method: str  # "bootstrap" (users resampled) or "normal" (segment means drawn)

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {"column": self.column, "metric": self.metric, "best": self.best,
                "worst": self.worst, "gap": num(self.gap), "low": num(self.low),
                "high": num(self.high), "level": self.level, "segments": self.segments,
                "method": self.method}


def gaps(values_of: dict[str, np.ndarray], labels: np.ndarray, column: str,
         lower_better, level: float = 0.95, rounds: int = ROUNDS, seed: int = 0) -> list[Gap]:
    """One ``Gap`` per metric of ``values_of`` (per-user values, NaN: none) between the
    segments ``labels`` gives the users."""
    names, codes = with_inverse(labels)
    keep = names != MISSING
    out = []
    for metric, values in values_of.items():
        groups = [values[(codes == s) & ~np.isnan(values)] for s in np.flatnonzero(keep)]
        held = [(str(names[s]), v) for s, v in zip(np.flatnonzero(keep), groups, strict=True)
                if len(v)]
        if len(held) < 2:
            out.append(Gap(column, metric, "", "", math.nan, math.nan, math.nan, level,
                           len(held), "bootstrap"))
            continue
        means = np.array([v.mean() for _, v in held])
        flip = -1.0 if lower_better(metric) else 1.0
        best, worst = int(np.argmax(flip * means)), int(np.argmin(flip * means))
        draws, method = _bootstrap_means([v for _, v in held], rounds, seed)
        spread = draws.max(axis=1) - draws.min(axis=1)
        alpha = 1 - level
        low, high = np.quantile(spread, [alpha / 2, 1 - alpha / 2])
        out.append(Gap(column, metric, held[best][0], held[worst][0],
                       float(means.max() - means.min()), float(low), float(high), level,
                       len(held), method))
    return out


def _bootstrap_means(groups: list[np.ndarray], rounds: int, seed: int
                     ) -> tuple[np.ndarray, str]:
    """rounds x segments bootstrap means, users resampled within each segment (or drawn from
    the means' normal approximation when that would resample too many values)."""
    rng = np.random.default_rng(seed)
    out = np.empty((rounds, len(groups)))
    if sum(len(g) for g in groups) * rounds > _EXACT_DRAWS:
        for s, g in enumerate(groups):
            out[:, s] = rng.normal(g.mean(), g.std() / math.sqrt(len(g)), rounds)
        return out, "normal"
    for s, g in enumerate(groups):
        step = max(1, 2_000_000 // len(g))  # rounds at a time: a bounded index array
        for a in range(0, rounds, step):
            b = min(rounds, a + step)
            out[a:b, s] = g[rng.integers(0, len(g), size=(b - a, len(g)))].mean(axis=1)
    return out, "bootstrap"


def segment_gaps(store, specs, table, words, level: float, rounds: int, seed: int
                 ) -> dict[str, list[Gap]]:
    """Per segment column of ``words``, the largest gap of every per-user metric of
    ``specs`` (their values in the local ``store``) between the segments of ``table``."""
    values = {str(s): store.values(s) for s in specs}
    return {word: gaps(values, labels, word, lower_better, level, rounds, seed)
            for word, (labels, _) in user_labels(store.users(), table, words).items()}
