"""Where a comparison's differences lie, from the per-user values of the users every run
evaluates (arrays in, plain data out): the users a run helps and hurts most
(``most_changed``), each run's interval over those users (``intervals_of``), and the tests
within each user segment (``segment_cells``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.baselines import Cell, both_scored, on_scale
from rankeval.analysis.segments import ordered_values, user_labels
from rankeval.analysis.significance import bootstrap_mean_ci, compare, correct_within, family_of
from rankeval.names import from_name, is_corpus
from rankeval.registry import GEOMETRIC, REGISTRY


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


def intervals_of(values: Mapping[str, Mapping[str, np.ndarray]], rounds: int, seed: int,
                 level: float) -> dict[str, dict[str, tuple[float, float]]]:
    """Per run and per-user metric, the bootstrap interval of its mean over the users
    compared (``values``: run -> metric -> values, the same users for every run, so that the
    bands of a K curve are comparable)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for run, metrics in values.items():
        out[run] = {}
        for metric, v in metrics.items():
            low, high = bootstrap_mean_ci(v[~np.isnan(v)], rounds, seed, level)
            if REGISTRY[from_name(metric).name].overall == GEOMETRIC:  # a mean of logs
                low, high = math.exp(low), math.exp(high)
            out[run][metric] = (low, high)
    return out


def segment_cells(values: Mapping[str, Mapping[str, np.ndarray]], shared_users: np.ndarray,
                  table, by, metrics: Iterable[str], baselines: Sequence[str],
                  candidates: Sequence[str], options: Mapping[str, Any]) -> dict:
    """Every per-user metric compared within each segment value (the segments of ``table``,
    an opened table, by its columns ``by``); p-values corrected over all (run, segment)
    tests of one metric and segment column (``correct_across="metrics"``: of every metric
    and one segment column). ``options``: the comparison's ``test``, ``rounds``, ``seed``,
    ``ci_level``, ``correction``, ``correct_across`` and ``alpha``."""
    shared = pa.array(shared_users.tolist(), pa.string())
    opts = options
    across = opts.get("correct_across", "pairs")
    metrics = list(metrics)
    out = {}
    for word, (labels, rank) in user_labels(shared, table, by).items():
        rows: list[dict[str, Any]] = [
            {"value": v, "users": int(np.count_nonzero(labels == v)), "cells": []}
            for v in ordered_values(labels, rank)]
        tests = []
        for metric in metrics:
            if is_corpus(metric):
                continue
            for row in rows:
                members = labels == row["value"]
                for base in baselines:
                    a = values[base][metric][members]
                    for run in candidates:
                        b = values[run][metric][members]
                        stats = on_scale(metric, compare(*both_scored(a, b), opts["test"],
                                                         opts["rounds"], opts["seed"],
                                                         opts["ci_level"]))
                        tests.append((metric, row, run, base, stats))
        adjusted = correct_within([t[4].p_value for t in tests],
                                  [family_of(t[0], across) for t in tests], opts["correction"])
        for (metric, row, run, base, stats), p in zip(tests, adjusted, strict=True):
            row["cells"].append(Cell(run, metric, stats, p, bool(p < opts["alpha"])
                                     if math.isfinite(p) else None, baseline=base))
        out[word] = rows
    return out
