"""The users a run helps and hurts most: per candidate run and metric, against the baseline,
from the per-user values of the users every run evaluates (arrays in, plain data out)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from rankeval.names import is_corpus


def most_changed(values: Mapping[str, Mapping[str, np.ndarray]], users: np.ndarray,
                 baseline: str, candidates: Sequence[str], metrics: Iterable[str],
                 n: int) -> dict:
    """Per run of ``candidates`` and per-user metric of ``metrics``, the ``n`` users most
    helped and most hurt against ``baseline``: ``{run: {metric: {"helped": [...], "hurt":
    [...]}}}``, each user as ``{"user", "baseline", "run"}``. ``values[run][metric]`` holds
    one value per user of ``users``, in that order; corpus metrics (no users) are left out."""
    metrics = list(metrics)
    out: dict = {}
    for name in candidates:
        out[name] = {}
        for metric in metrics:
            if is_corpus(metric):  # no users to list
                continue
            a, b = values[baseline][metric], values[name][metric]
            diff = b - a
            order = np.argsort(diff, kind="stable")
            hurt = [i for i in order[:n] if diff[i] < 0]
            helped = [i for i in order[::-1][:n] if diff[i] > 0]
            out[name][metric] = {
                label: [
                    {"user": str(users[i]), "baseline": float(a[i]), "run": float(b[i])}
                    for i in idx
                ]
                for label, idx in (("helped", helped), ("hurt", hurt))
            }
    return out
