"""The report of ``rankeval ope``: its sections (each run's estimates and weights, the paired
differences, the gates), and its CSV rows. Every format draws these; JSON is the result's
own ``to_dict``."""

from __future__ import annotations

import csv
import io

from rankeval.errors import plural
from rankeval.offpolicy.estimators import ESTIMATORS
from rankeval.report.blocks import Section, config_section, table
from rankeval.report.numbers import UNDEFINED, exact, fixed
from rankeval.report.sections import verdict_section


def sections(result, undefined: str = UNDEFINED) -> list[Section]:
    """Gates first; per run its estimates, then its weights; then the differences."""
    out = verdict_section(result.verdicts)
    log = result.log
    level = f"{result.level:.0%}"
    for run in result.runs:
        methods = {e.method for e in run.estimates.values()}
        ci = ("bootstrap over slates" if methods == {"bootstrap"} else
              "normal approximation (influence functions)" if methods == {"normal"} else
              "bootstrap over slates or normal approximation")
        out.append(table(
            f"ope:{run.name}", ["estimator", "value", f"{level} CI", "assumption"],
            [[e.name, fixed(e.value, undefined=undefined), _band(e.low, e.high, undefined),
              _assumption(e.name)] for e in run.estimates.values()],
            title="Off-policy estimates of {}", subject=run.name, left=frozenset({0, 3}),
            notes=(f"{plural(log['slates'], 'slate')} ({plural(log['rows'], 'slot')}, up to "
                   f"{log['longest']} "
                   f"per slate) of {log['path']}; the logged policy earned "
                   f"{fixed(log['mean_reward'], undefined=undefined)} per slate; "
                   f"CI: {ci}"
                   + (f"; weights clipped at {result.clip:g}" if result.clip else ""),
                   *([f"clipping moved {k} by {fixed(v, sign=True)}"
                      for k, v in run.clip_effect.items() if v] if result.clip else ()))))
        if run.weights:
            out.append(table(
                f"weights:{run.name}", ["weights", "units", "ESS", "ESS share", "mean", "max",
                                        "p50", "p90", "p99", "weight 0", "top 1%",
                                        "clipped"],
                [[w.kind, f"{w.n:,}", f"{w.ess:,.1f}", _share(w.ess / w.n if w.n else None),
                  fixed(w.mean), fixed(w.max), fixed(w.p50), fixed(w.p90), fixed(w.p99),
                  _share(w.zero), _share(w.top1), f"{w.clipped:,}"]
                 for w in run.weights.values()],
                title="Weights of {}", subject=run.name,
                notes=("ESS: effective sample size, (sum w)^2 / sum w^2; mean: 1 in "
                       "expectation when the logging policy gives a chance to everything the "
                       "new one shows; weight 0: units the new policy never shows (the reverse "
                       "of a lack of support, which is what the new policy shows and the logging "
                       "one never does); top 1%: "
                       "the weight the largest 1% of units carry",)))
    if result.differences:
        out.append(table(
            "differences", ["run", "estimator", "difference", f"{level} CI"],
            [[d.run, d.estimator, fixed(d.value, sign=True, undefined=undefined),
              _band(d.low, d.high, undefined)] for d in result.differences],
            title="Against {}", subject=result.runs[0].name, data=frozenset({0}),
            left=frozenset({0, 1}),
            tones=tuple((0, 0, _tone(d), 0) for d in result.differences),
            notes=("paired: each resample draws the same slates for every run",)))
    return out + config_section(result.config)


def _assumption(name: str) -> str:
    return ESTIMATORS[name].assumption


def _band(low: float, high: float, undefined: str) -> str:
    if low != low or high != high:  # NaN
        return undefined
    return f"[{fixed(low)}, {fixed(high)}]"


def _share(value: float | None) -> str:
    return UNDEFINED if value is None or value != value else f"{value:.1%}"


def _tone(d) -> int:
    """1: the interval lies above 0, -1: below."""
    return 1 if d.low > 0 else -1 if d.high < 0 else 0


def csv_text(result) -> str:
    """One row per run and estimator, then per difference: full-precision values (empty:
    undefined)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["kind", "run", "baseline", "estimator", "value", "ci_low", "ci_high",
                     "method"])
    for run in result.runs:
        for e in run.estimates.values():
            writer.writerow(["estimate", run.name, "", e.name, exact(e.value), exact(e.low),
                             exact(e.high), e.method])
    for d in result.differences:
        writer.writerow(["difference", d.run, d.baseline, d.estimator, exact(d.value),
                         exact(d.low), exact(d.high), d.method])
    return out.getvalue()
