"""The JSON report: its layout and its schema versions (the number, and the reader of earlier
reports, are io/baseline.py's).

Keys are stable: CI scripts parse them. Schema versions (bump when a key changes meaning or
disappears; adding keys is compatible):
  1: rankeval, schema, k, metrics, settings, inputs, users, ci, gates, passed, baseline,
     warnings, notices (score); rankeval, schema, baseline, test options, settings, runs,
     users, comparisons, top_changes, warnings (compare). An undefined number (SPEC section
     9) is null, and "undefined" maps each undefined metric to why (added compatibly).
     Compare's "baselines" lists every baseline ("baseline" stays the first) and each
     comparison names its "baseline" (added compatibly). "gold" (score --gold): per metric
     the PPI, gold-only, machine-only and bias estimates with their intervals, lambda, the
     effective gold queries, strata and plan; a baseline report with it is read as its PPI
     estimates (added compatibly). "config" in "settings" (score, compare; top-level in
     validate's): the configuration file whose keys gave option defaults, or null (added
     compatibly). Compare's "gold" (compare --gold): per run, baseline and
     metric the PPI difference with its interval, p-values, significance, the machine-only
     difference and significance beside it and where they disagree (added compatibly).
     "order" in each of score's "inputs" (the predictions': rank, score or input, what ordered
     the lists; null for the other inputs) and compare's "correct_across" (pairs or
     metrics, the family of its correction) (added compatibly). "config" in interleave
     score's and simulate's: the configuration file, or null (added compatibly).
     Compare's "warnings" hold the notices about the truth (or another input every run
     shares) once, before the comparison's own, and "notices" the same as score's do
     (code, message, count); each of its "runs" its own "warnings" and "notices" (added
     compatibly: before, the runs' notices were in no JSON report).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rankeval.io.baseline import SCHEMA_VERSION
from rankeval.report.catalog import records
from rankeval.report.numbers import dumps
from rankeval.version import __version__


def document(ev) -> dict[str, Any]:
    """The score report as a JSON-ready dict."""
    return {
        "rankeval": __version__,
        "schema": SCHEMA_VERSION,
        "k": list(ev.settings.k),
        "metrics": dict(ev.metrics),  # undefined: null, and why in "undefined"
        "undefined": ev.undefined,
        "corpus_metrics": ev.corpus,
        "settings": ev.settings.to_dict(),
        "inputs": {
            role: dataclasses.asdict(summary)
            | ({"rows_beyond_k": ev.prediction_rows_beyond_k} if role == "predictions" else {})
            for role, summary in ev.inputs.items()
        },
        "users": dataclasses.asdict(ev.users),
        "ci": (
            {"level": ev.interval_level,
             "intervals": {k: list(v) for k, v in ev.intervals.items()}}
            if ev.intervals
            else None
        ),
        "gates": [v.to_dict() for v in ev.gates.verdicts],
        "passed": ev.passed,
        "baseline": ev.gates.baseline,
        "ties": (
            {"users": ev.tied_users,
             "range": {m: {"pessimistic": lo, "optimistic": hi}
                       for m, (lo, hi) in ev.tie_range.items()}}
            if ev.tied_users else None
        ),
        "curves": curves(ev),
        "distribution": ev.distribution or None,
        "segments": ({column: [seg.to_dict() for seg in rows]
                      for column, rows in ev.segments.items()} or None),
        "exposure": ev.exposure.to_dict() if ev.exposure is not None else None,
        "samples": ev.samples.to_dict() if ev.samples is not None else None,
        "gaps": ({column: [g.to_dict() for g in rows] for column, rows in ev.gaps.items()}
                 or None),
        "group_exposure": ({metric: {"users": t.users, "groups": [
            {"group": g, "exposure": e, "target": tg, "ratio": None if r != r else r}
            for g, e, tg, r in t.rows()]} for metric, t in ev.group_exposure.items()} or None),
        **({"gold": ev.gold.to_dict()} if ev.gold is not None else {}),
        "warnings": ev.warnings,
        "notices": [n.to_dict() for n in ev.notices],
    }


def curves(ev) -> dict[str, dict[str, list[float]]]:
    """Metrics measured at levels as curves: ``iprec`` is the interpolated precision-recall
    curve (``{"level": [0.0, ...], "value": [...]}``)."""
    out: dict[str, dict[str, list[float]]] = {}
    for spec in ev.specs:
        if spec.level is not None:
            curve = out.setdefault(spec.name, {"level": [], "value": []})
            curve["level"].append(spec.level)
            curve["value"].append(ev.metrics[str(spec)])
    return out


def render(ev) -> str:
    return dumps(document(ev))


def compare_document(result) -> dict[str, Any]:
    """The compare report as a JSON-ready dict."""
    said = [*result.shared_notices, *dict.fromkeys(result.notices)]  # each run's: its own
    return {
        "rankeval": __version__,
        "schema": SCHEMA_VERSION,
        "baseline": result.baseline,
        "baselines": result.baselines,
        **result.options,
        "settings": result.settings.to_dict(),
        "runs": [
            {
                "name": r.name,
                "path": r.path,
                "evaluated_users": r.evaluation.users.evaluated,
                "dropped_users": r.dropped,
                "metrics": {m: result.mean(r.name, m) for m in result.metrics},
                "ci": ({m: list(v) for m, v in result.intervals[r.name].items()}
                       if result.intervals else None),
                "exposure": (r.evaluation.exposure.to_dict()
                             if r.evaluation.exposure is not None else None),
                "warnings": [n.message for n in result.run_notices(r.name)],
                "notices": [n.to_dict() for n in result.run_notices(r.name)],
            }
            for r in result.runs
        ],
        "users": {"shared": len(result.shared_users)},
        "undefined": result.undefined,
        "comparisons": [c.to_dict() for c in result.cells],
        "segments": ({column: [{"value": row["value"], "users": row["users"],
                                "comparisons": [c.to_dict() for c in row["cells"]]}
                               for row in rows]
                      for column, rows in result.segments.items()} or None),
        "top_changes": result.top,
        "gates": [g.to_dict() for g in result.gates],
        "all_pairs": [p.to_dict() for p in result.pairs] or None,
        "rbo": [o.to_dict() for o in result.overlaps] or None,
        **({"gold": result.gold.to_dict()} if result.gold is not None else {}),
        "passed": result.passed,
        "warnings": [n.message for n in said],
        "notices": [n.to_dict() for n in said],
    }


def render_compare(result) -> str:
    return dumps(compare_document(result))


def render_ope(result) -> str:
    """``rankeval ope -f json``: every estimate, interval, diagnostic and verdict."""
    return dumps({"rankeval": __version__, **result.to_dict()})


def render_sampled(result) -> str:
    """``rankeval sampled -f json``: every estimate of every run, and the reversed orders."""
    return dumps({"rankeval": __version__, **result.to_dict()})


def render_power(result) -> str:
    return dumps(result.to_dict())


def render_metrics(registry) -> str:
    """The metric registry (``rankeval metrics -f json``)."""
    return dumps(records(registry))


def render_validation(result, strict: bool = False) -> str:
    """``rankeval validate -f json``: every problem and count."""
    return dumps(result.to_dict(strict))


def render_agree(result) -> str:
    """``rankeval agree -f json``: every number, undefined ones null with why."""
    return dumps(result.to_dict())
def render_interleave(result) -> str:
    """``rankeval interleave score|simulate -f json``: every pair, plan and gate."""
    return dumps({"rankeval": __version__, **result.to_dict()})
