"""Quality gates: absolute thresholds and allowed drops against a baseline report.

Everything that can be wrong with a gate (an unknown metric, a threshold outside [0, 1], an
unreadable or incomparable baseline) is found by ``plan_gates`` before any data is read; a
failing gate is a verdict, not an error: the report is complete and the exit code is 1.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rankeval.errors import OptionError, plural
from rankeval.io.baseline import Report, load_baseline
from rankeval.names import MetricSpec, from_name
from rankeval.registry import LOOKUP, REGISTRY
from rankeval.settings import Settings, metric_named

# METRIC[COLUMN=VALUE] names a segment (--segments); the bracket may hold "=".
# a metric may hold parameters, '=' included: P(rel=2)@10>=0.3
_NAME = r"(?:[^<>=\s\[(]|\([^)]*\))+"
_THRESHOLD = re.compile(rf"^\s*({_NAME}(?:\[[^\]]*\])?)\s*(>=|<=|=)\s*(\S+)\s*$")
_SEGMENT = re.compile(r"^([^\[]+)\[\s*([^=\]]+?)\s*=\s*([^\]]*?)\s*\]$")
_DROP = re.compile(rf"^\s*(?:({_NAME})\s*=\s*)?([0-9.eE+-]+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Gate:
    """One condition on one metric (``metric`` None: every metric of the baseline, max_drop)."""

    kind: str  # "fail_under" | "fail_over" | "max_drop" | "max_gap"
    metric: str | None
    threshold: float = math.nan  # fail_under / fail_over
    drop: float = math.nan  # max_drop: absolute, or a fraction when relative
    relative: bool = False
    text: str = ""


def lower_better(metric: str) -> bool:
    """Whether a lower value of ``metric`` (a name like ``ee_l@10``, ``eel(p=0.8)``) is the
    better one."""
    name = LOOKUP.get(metric.split("@")[0].split("(")[0].strip().lower())
    return name is not None and REGISTRY[name].lower_better


@dataclass(frozen=True)
class Verdict:
    gate: Gate
    metric: str
    value: float
    limit: float  # the value must be >= limit (or <= for fail_over)
    passed: bool
    baseline: float | None = None

    @property
    def op(self) -> str:
        lower = self.gate.kind == "max_drop" and lower_better(self.metric)
        return "<=" if self.gate.kind in ("fail_over", "max_gap") or lower else ">="

    def condition(self) -> str:
        """``>= 0.35``, or ``>= 0.3411 (baseline 0.3446 - 1%)``, digits enough to agree."""
        _, limit = show_pair(self.value, self.limit)
        text = f"{self.op} {limit}"
        if self.baseline is not None:
            drop = f"{self.gate.drop * 100:g}%" if self.gate.relative else f"{self.gate.drop:g}"
            sign = "+" if self.op == "<=" else "-"  # a lower-is-better metric worsens upward
            text += f" (baseline {show_pair(self.baseline, self.limit)[0]} {sign} {drop})"
        return text

    def message(self) -> str:
        value, limit = show_pair(self.value, self.limit)
        if self.passed:
            return f"passed {self.metric} = {value} {self.op} {limit}"
        broken = "<" if self.op == ">=" else ">"
        text = f"FAILED {self.metric} = {value} {broken} {limit}"
        if self.baseline is not None:
            text += f" (baseline {show_pair(self.baseline, self.limit)[0]}, max drop "
            text += f"{self.gate.drop * 100:g}%)" if self.gate.relative else f"{self.gate.drop:g})"
        return text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metric": self.metric,
            "kind": self.gate.kind,
            "op": self.op,
            "threshold": self.limit,
            "value": self.value,
            "passed": self.passed,
        }
        if self.baseline is not None:
            out["baseline"] = self.baseline
            out["max_drop"] = self.gate.drop
            out["relative"] = self.gate.relative
        return out


@dataclass(frozen=True)
class Gates:
    """What an evaluation's gates decided, apart from the evaluation: every verdict (threshold,
    drop, non-inferiority and equivalence gates) and, with a baseline report, its metrics and
    the deltas against them."""

    verdicts: tuple = ()  # Verdict, analysis.equivalence.Verdict
    baseline: dict[str, Any] | None = None  # {"path", "metrics", "delta"}

    @property
    def passed(self) -> bool:
        """Whether every gate passed (True when there are none)."""
        return all(v.passed for v in self.verdicts)

    def __bool__(self) -> bool:
        """Whether there is anything to report: a verdict or a baseline."""
        return bool(self.verdicts) or self.baseline is not None


def outcome(verdicts) -> str:
    """``the gate passed``, ``all 3 gates passed``, ``1 of 3 gates failed``."""
    failed, n = sum(not v.passed for v in verdicts), len(verdicts)
    if n == 1:
        return "the gate failed" if failed else "the gate passed"
    return (f"{failed} of {plural(n, 'gate')} failed" if failed
            else f"all {plural(n, 'gate')} passed")


def show_pair(value: float, limit: float) -> tuple[str, str]:
    """Both numbers with the fewest decimals (at least 4) that keep different numbers apart.

    ``0.34999996 < 0.35`` must not print as ``0.3500 < 0.3500``.
    """
    for digits in range(4, 18):
        a, b = f"{value:.{digits}f}", f"{limit:.{digits}f}"
        if (a != b) == (value != limit):
            return a, b
    return repr(value), repr(limit)


@dataclass
class GatePlan:
    gates: list[Gate] = field(default_factory=list)
    baseline: Report | None = None

    def __bool__(self) -> bool:
        return bool(self.gates) or self.baseline is not None

    def check(self, metrics: dict[str, float],
              undefined: dict[str, str] | None = None) -> list[Verdict]:
        """Every gate's verdict against the computed means. A gate on an undefined value
        (NaN; ``undefined`` says why) cannot pass or fail: it is an error (SPEC section 9)."""
        verdicts = []
        explicit = {g.metric for g in self.gates if g.kind == "max_drop" and g.metric}
        why = undefined or {}

        def defined(gate: Gate, name: str, value: float, baseline: bool = False) -> float:
            if math.isnan(value):
                reason = (f"{name} is undefined in the baseline {self.baseline.path} (null)"
                          if baseline and self.baseline else why.get(name,
                                                                     f"{name} is undefined"))
                raise OptionError(f"gate {gate.text or name!r} can neither pass nor fail: "
                                  f"{reason}")
            return value

        for gate in self.gates:
            if gate.kind == "max_gap":  # one verdict per segment column: ndcg@10[gap:country]
                assert gate.metric is not None
                for name in [m for m in metrics if m.startswith(f"{gate.metric}[gap:")]:
                    value = defined(gate, name, metrics[name])
                    verdicts.append(Verdict(gate, name, value, gate.threshold,
                                            value <= gate.threshold))
                continue
            if gate.kind != "max_drop":
                assert gate.metric is not None  # only max_drop may cover every metric
                value = defined(gate, gate.metric, metrics[gate.metric])
                passed = value >= gate.threshold if gate.kind == "fail_under" else (
                    value <= gate.threshold)
                verdicts.append(Verdict(gate, gate.metric, value, gate.threshold, passed))
                continue
            assert self.baseline is not None
            names = [gate.metric] if gate.metric else [
                m for m in metrics if m in self.baseline.metrics and m not in explicit]
            for name in names:
                base = defined(gate, name, self.baseline.metrics[name], baseline=True)
                value = defined(gate, name, metrics[name])
                if lower_better(name):  # a loss (ee_l) drops in quality as it rises
                    limit = base * (1 + gate.drop) if gate.relative else base + gate.drop
                    passed = value <= limit
                else:
                    limit = base * (1 - gate.drop) if gate.relative else base - gate.drop
                    passed = value >= limit
                verdicts.append(Verdict(gate, name, value, limit, passed, base))
        return verdicts

    def comparison(self, metrics: dict[str, float]) -> list[tuple[str, float, float, float]]:
        """(metric, baseline, current, delta) for every metric in both reports."""
        if self.baseline is None:
            return []
        return [
            (m, self.baseline.metrics[m], v, v - self.baseline.metrics[m])
            for m, v in metrics.items()
            if m in self.baseline.metrics
        ]


def plan_gates(
    settings: Settings,
    fail_under: Iterable[str] = (),
    fail_over: Iterable[str] = (),
    max_drop: Iterable[str] = (),
    baseline: str | None = None,
    allow_settings_change: bool = False,
    max_gap: Iterable[str] = (),
    segmented: bool = False,
) -> GatePlan:
    """Parse and check every gate against the metrics that will be computed. ``max_gap``:
    gates on the largest gap between user segments, which need ``segmented`` (--segments
    and --segment-by)."""
    computed = set(settings.metrics)
    plan = GatePlan()
    for kind, texts in (("fail_under", fail_under), ("fail_over", fail_over)):
        for text in texts:
            plan.gates.append(_threshold(kind, text, settings, computed))
    for text in max_gap:
        if not segmented:
            raise OptionError("{opt:max_gap} needs {opt:segments} FILE and {opt:segment_by} "
                              "COLUMN: the gap is between the segments of a user attribute")
        gate = _threshold("fail_over", text, settings, computed, flag="{opt:max_gap}")
        if "[" in str(gate.metric):
            raise OptionError(f"{{opt:max_gap}} {text}: a gap is between every segment; name "
                              "the metric alone")
        plan.gates.append(dataclasses.replace(gate, kind="max_gap"))
    drops = [_drop(text, settings, computed) for text in max_drop]
    if baseline is not None:
        plan.baseline = load_baseline(baseline, settings, allow_settings_change)
        for gate in drops:
            if gate.metric and gate.metric not in plan.baseline.metrics:
                raise OptionError(
                    f"{{opt:max_drop}} {gate.text}: {gate.metric} is not in the baseline "
                    f"{baseline} (it has {', '.join(plan.baseline.metrics) or 'no metrics'})"
                )
        global_drop = drops and not any(g.metric for g in drops)
        if global_drop and not computed & set(plan.baseline.metrics):
            raise OptionError(f"{{opt:max_drop}}: no metric is in both this run and {baseline}")
    elif drops:
        raise OptionError(
            "{opt:max_drop} needs {opt:baseline} FILE (a JSON report of an earlier run)"
        )
    plan.gates += drops
    return plan


def _metric(word: str, settings: Settings, computed: set[str], flag: str, text: str) -> str:
    segment = _SEGMENT.match(word)
    if segment:  # ndcg@10[country=DE]: the segment is checked once segments are computed
        base = _metric(segment.group(1), settings, computed, flag, text)
        return f"{base}[{segment.group(2)}={segment.group(3)}]"

    try:
        spec: MetricSpec = metric_named(word, settings)
    except OptionError as e:
        raise OptionError(f"{flag} {text}: {e}") from None
    name = str(spec)
    if name not in computed:
        raise OptionError(
            f"{flag} {text}: {name} is not computed by this run (computed: "
            f"{', '.join(sorted(computed))}); add it with {{opt:metrics}} {name}"
        )
    return name


def _number(text: str, flag: str, whole: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise OptionError(f"{flag} {whole}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise OptionError(f"{flag} {whole}: the threshold must be finite")
    return value


def _threshold(kind: str, text: str, settings: Settings, computed: set[str], flag: str = ""
               ) -> Gate:
    flag = flag or f"{{opt:{kind}}}"
    match = _THRESHOLD.match(text)
    if not match:
        raise OptionError(f"{flag} {text!r}: expected METRIC=VALUE, e.g. ndcg@10=0.35")
    word, op, number = match.groups()
    expected = ">=" if kind == "fail_under" else "<="
    if op not in ("=", expected):
        raise OptionError(f"{flag} {text}: use {expected} (or =) with {flag}")
    name = _metric(word, settings, computed, flag, text)
    threshold = _number(number, flag, text)
    if REGISTRY[from_name(name.split("[")[0]).name].bounded and not 0 <= threshold <= 1:
        raise OptionError(f"{flag} {text}: {name} lies in [0, 1], so {threshold:g} cannot be met")
    return Gate(kind, name, threshold=threshold, text=text)


def _drop(text: str, settings: Settings, computed: set[str]) -> Gate:
    if "[" in text:
        raise OptionError(f"{{opt:max_drop}} {text}: a baseline report holds whole-run means; "
                          "gate a segment with {opt:fail_under} or {opt:fail_over}")
    match = _DROP.match(text)
    if not match:
        raise OptionError(
            f"{{opt:max_drop}} {text!r}: expected METRIC=DROP or DROP, e.g. ndcg@10=0.01, "
            "ndcg@10=2% or 1%"
        )
    word, number, percent = match.groups()
    name = _metric(word, settings, computed, "{opt:max_drop}", text) if word else None
    drop = _number(number, "{opt:max_drop}", text)
    if drop < 0:
        raise OptionError(f"{{opt:max_drop}} {text}: a drop cannot be negative")
    if percent:
        drop /= 100
        if drop > 1:
            raise OptionError(f"{{opt:max_drop}} {text}: a relative drop is at most 100%")
    return Gate("max_drop", name, drop=drop, relative=bool(percent), text=text)


def judge(ev, plan) -> Gates:
    """``plan``'s verdicts on an evaluation's values (its metrics, the segment gaps for
    --max-gap, each segment's means for METRIC[COLUMN=VALUE]) and its baseline deltas."""
    baseline = None
    means = dict(ev.metrics)
    why = dict(ev.undefined)
    gold = getattr(ev, "gold", None)
    if gold is not None:  # --gold: the gates judge each metric's PPI estimate (SPEC §12)
        means.update(gold.estimates())
        why.update({m: f"{m}'s PPI estimate is undefined (fewer than two gold queries with "
                    "a value, or no other query)" for m, v in gold.estimates().items()
                    if math.isnan(v)})
    if plan.baseline is not None:
        rows = plan.comparison(means)
        baseline = {
            "path": plan.baseline.path,
            "metrics": {m: b for m, b, _, _ in rows},
            "delta": {m: d for m, _, _, d in rows},
        }
    values = dict(means)
    for column, rows in ev.gaps.items():  # ndcg@10[gap:country], for --max-gap
        for gap in rows:
            values[f"{gap.metric}[gap:{column}]"] = gap.gap
            why[f"{gap.metric}[gap:{column}]"] = (f"{gap.metric} has a value in fewer "
                                                  f"than two segments of {column}")
    for column, segments in ev.segments.items():  # ndcg@10[country=DE]
        values.update({f"{m}[{column}={seg.value}]": v
                       for seg in segments for m, v in seg.metrics.items()})
        why.update({f"{m}[{column}={seg.value}]": f"{m}[{column}={seg.value}] is "
                    "undefined: no user of the segment has a value"
                    for seg in segments for m, v in seg.metrics.items() if math.isnan(v)})
    for gate in plan.gates:
        if gate.metric and gate.metric not in values:
            column = gate.metric.partition("[")[2].partition("=")[0]
            known = [seg.value for seg in ev.segments.get(column, [])]
            raise OptionError(
                f"gate {gate.text!r}: no segment {gate.metric.partition('[')[2][:-1]!r} "
                + (f"(values of {column}: {', '.join(known)})" if known else
                   f"({column!r} is not a --segment-by column of this run)"))
    return Gates(tuple(plan.check(values, why)), baseline)
