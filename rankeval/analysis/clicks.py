"""Click models: users' clicks on shown lists, drawn from the items' relevance grades, for
simulating interleaving experiments offline (#51.4).

- ``pbm``, the position-based model (Craswell et al. 2008): the slot at position ``i`` is
  examined with ``examine[i]`` (by default ``1 / i``), and clicked, once examined, with the
  chance its grade gives (``click[grade]``); slots are independent.
- ``cascade`` (Craswell et al. 2008) and the dependent click model, DCM (Guo et al. 2009): the
  user reads from the top; an examined slot is clicked with ``click[grade]``; after a click the
  user stops with ``stop[grade]`` (cascade: always), else reads on. The "perfect",
  "navigational" and "informational" users of the online learning-to-rank literature
  (Hofmann et al. 2011, 2013; Schuth et al. 2014) are this model with their tables
  (``USERS``, for grades 0 to 4).

Shown lists come as grades, impressions x slots (``NONE`` = -1 for a slot left empty: never
examined, never clicked; a shown item without a judgment has grade 0). The loop runs over
positions, every impression at once.
"""

from __future__ import annotations

import numpy as np

from rankeval.errors import OptionError

NONE = -1

# Simulated users on grades 0..4, as that literature sets them: P(click | grade) and
# P(stop | click, grade)
USERS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "perfect": ((0.0, 0.2, 0.4, 0.8, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
    "navigational": ((0.05, 0.3, 0.5, 0.7, 0.95), (0.2, 0.3, 0.5, 0.7, 0.9)),
    "informational": ((0.4, 0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4, 0.5)),
}


def _by_grade(table, grades: np.ndarray, name: str) -> np.ndarray:
    chances = np.asarray(table, dtype=np.float64)
    if not ((chances >= 0) & (chances <= 1)).all():
        raise OptionError(f"{{option}}: every chance must lie in [0, 1], got {table}", name)
    top = int(grades.max(initial=0))
    if top >= len(chances):
        raise OptionError(f"{{option}} gives chances for grades 0 to {len(chances) - 1}, but "
                          f"the truth has grade {top}", name)
    return chances[np.maximum(grades, 0)]


def pbm(grades: np.ndarray, click, rng: np.random.Generator,
        examine: np.ndarray | None = None) -> np.ndarray:
    """Clicks (impressions x slots, bool) under the position-based model."""
    slots = grades.shape[1]
    seen = 1 / np.arange(1, slots + 1) if examine is None else np.asarray(examine, float)
    if len(seen) < slots or not ((seen >= 0) & (seen <= 1)).all():
        raise OptionError("{option}: one chance in [0, 1] per position", "examine")
    chance = seen[None, :slots] * _by_grade(click, grades, "click")
    return (rng.random(grades.shape) < chance) & (grades != NONE)


def cascade(grades: np.ndarray, click, stop, rng: np.random.Generator) -> np.ndarray:
    """Clicks (impressions x slots, bool) under the cascade model with a chance to stop
    after each click (``stop``: 1 for every grade is the classic cascade, at most one click)."""
    p_click = _by_grade(click, grades, "click")
    p_stop = _by_grade(stop, grades, "stop")
    shown = grades != NONE
    clicks = np.zeros(grades.shape, dtype=bool)
    reading = np.ones(len(grades), dtype=bool)
    draws = rng.random((2, *grades.shape))
    for i in range(grades.shape[1]):
        reading &= shown[:, i]  # an empty slot ends the list
        clicks[:, i] = reading & (draws[0][:, i] < p_click[:, i])
        reading &= ~(clicks[:, i] & (draws[1][:, i] < p_stop[:, i]))
    return clicks
