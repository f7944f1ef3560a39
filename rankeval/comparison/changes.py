"""Where a comparison's differences lie, beyond the overall tests: within each user segment,
and each run's interval over the users compared (the users most helped and most hurt:
``analysis.changes``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.significance import compare, correct
from rankeval.comparison.result import Cell, CompareResult
from rankeval.comparison.runs import _both_scored, _on_scale
from rankeval.names import from_name, is_corpus
from rankeval.registry import GEOMETRIC, REGISTRY


def intervals_of(result: CompareResult) -> dict[str, dict[str, tuple[float, float]]]:
    """Per run and per-user metric, the bootstrap interval of its mean over the users
    compared (the same users for every run, so that the bands of a K curve are comparable)."""
    from rankeval.analysis.significance import bootstrap_mean_ci

    o = result.options
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for run, metrics in result.values.items():
        out[run] = {}
        for metric, v in metrics.items():
            low, high = bootstrap_mean_ci(v[~np.isnan(v)], o["rounds"], o["seed"], o["ci_level"])
            if REGISTRY[from_name(metric).name].overall == GEOMETRIC:  # a mean of logs
                low, high = math.exp(low), math.exp(high)
            out[run][metric] = (low, high)
    return out


def by_segment(result: CompareResult, table_or_path, by, reading) -> dict:
    """Every per-user metric compared within each segment value; p-values corrected over
    all (run, segment) tests of one metric and segment column."""
    from rankeval.analysis.segments import ordered_values, user_labels
    from rankeval.io.load import open_input

    table = open_input(table_or_path, "segments", None, reading)
    shared = pa.array(result.shared_users.tolist(), pa.string())
    opts = result.options
    out = {}
    for word, (labels, rank) in user_labels(shared, table, by).items():
        rows: list[dict[str, Any]] = [
            {"value": v, "users": int(np.count_nonzero(labels == v)), "cells": []}
            for v in ordered_values(labels, rank)]
        for metric in result.metrics:
            if is_corpus(metric):
                continue
            tests = []
            for row in rows:
                members = labels == row["value"]
                for base in result.baselines:
                    a = result.values[base][metric][members]
                    for run in result.candidates:
                        b = result.values[run][metric][members]
                        stats = _on_scale(metric, compare(*_both_scored(a, b), opts["test"],
                                                          opts["rounds"], opts["seed"],
                                                          opts["ci_level"]))
                        tests.append((row, run, base, stats))
            adjusted = correct([t[3].p_value for t in tests], opts["correction"])
            for (row, run, base, stats), p in zip(tests, adjusted, strict=True):
                row["cells"].append(Cell(run, metric, stats, p, bool(p < opts["alpha"])
                                         if math.isfinite(p) else None, baseline=base))
        out[word] = rows
    return out
