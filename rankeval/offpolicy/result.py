"""What an off-policy evaluation reports: each run's estimates with intervals, the weights'
diagnostics and the warnings they raise, and the paired differences between runs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.errors import plural
from rankeval.offpolicy.estimators import Parts

# Past this many resampled slates (slates x rounds), intervals come from the normal
# approximation of each estimate (its influence function), as the segment gaps do.
BOOTSTRAP_LIMIT = 20_000_000


@dataclass(frozen=True)
class Estimate:
    """An estimator's value with its interval (``method``: 'bootstrap' or 'normal')."""

    name: str
    value: float
    low: float
    high: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {"estimator": self.name, "value": _json(self.value),
                "ci": [_json(self.low), _json(self.high)], "method": self.method}


@dataclass(frozen=True)
class Weights:
    """The diagnostics of one kind of weight (slate, position, cascade): over its ``n``
    units (slates or slots), the effective sample size (sum w)^2 / sum w^2, the mean (1 in
    expectation when the logging policy covers the new one), the largest and the quantiles,
    the share of units the new policy gives no chance (weight 0: not a lack of support, which
    in the OPE literature is the reverse, a unit the new policy shows and the logging policy
    never does), the share of the weight
    in the top 1% of units, and how many ``--clip`` cut."""

    kind: str
    unit: str
    n: int
    ess: float
    mean: float
    max: float
    p50: float
    p90: float
    p99: float
    zero: float
    top1: float
    clipped: int

    @classmethod
    def of(cls, kind: str, unit: str, w: np.ndarray, clip: float | None) -> Weights:
        total, squares = float(w.sum()), float((w * w).sum())
        top = max(1, math.ceil(0.01 * len(w)))
        largest = np.partition(w, len(w) - top)[len(w) - top:] if len(w) else w
        q = np.quantile(w, [0.5, 0.9, 0.99]) if len(w) else [math.nan] * 3
        return cls(kind, unit, len(w), total**2 / squares if squares > 0 else 0.0,
                   float(w.mean()) if len(w) else math.nan, float(w.max(initial=0.0)),
                   float(q[0]), float(q[1]), float(q[2]),
                   float((w == 0).mean()) if len(w) else math.nan,
                   float(largest.sum() / total) if total > 0 else math.nan,
                   int((w > clip).sum()) if clip is not None else 0,
                   float(w.std()) if len(w) else math.nan)

    sd: float = math.nan  # of the weights, for the mean's check

    def warnings(self, run: str) -> list[str]:
        """Why not to trust the estimates that read these weights, with the numbers."""
        out = []
        if self.n and self.ess == 0:
            return [f"{run}: the new policy gives no chance to any logged {self.unit}: the "
                    f"{self.kind} estimates are 0 (or undefined, self-normalised)"]
        share = self.ess / self.n if self.n else 0.0
        if self.n and share < 0.01:
            out.append(f"{run}: {self.kind} weights: effective sample size {self.ess:,.1f} of "
                       f"{self.n:,} {self.unit}s ({share:.2%}): a few {self.unit}s decide the "
                       "estimates")
        if self.n >= 100 and self.top1 > 0.5:
            out.append(f"{run}: {self.kind} weights: the top 1% of {self.unit}s carry "
                       f"{self.top1:.0%} of the weight")
        if self.zero > 0.9:
            out.append(f"{run}: the new policy gives no chance to {self.zero:.1%} of the logged "
                       f"{self.unit}s: the {self.kind} estimates rest on the other "
                       f"{1 - self.zero:.1%}")
        se = self.sd / math.sqrt(self.n) if self.n > 1 else math.nan
        if not self.clipped and abs(self.mean - 1) > max(0.05, 4 * se):
            out.append(f"{run}: the mean {self.kind} weight is {self.mean:.4f} ({4 * se:.4f} "
                       "from 1 would be chance): where the logging policy gives a chance to "
                       "everything the new one shows it is 1 in expectation; the propensities "
                       "or that support are off")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {k: _json(v) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class RunResult:
    name: str
    estimates: dict[str, Estimate]
    weights: dict[str, Weights]
    warnings: list[str]
    covered: int  # slates the policy has anything for
    parts: dict[str, Parts] = field(repr=False, compare=False, default_factory=dict)
    clip_effect: dict[str, float] = field(default_factory=dict)  # unclipped - clipped

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "estimates": {k: e.to_dict() for k, e in self.estimates.items()},
                "weights": {k: w.to_dict() for k, w in self.weights.items()},
                "clip_effect": {k: _json(v) for k, v in self.clip_effect.items()},
                "slates_covered": self.covered, "warnings": self.warnings}


@dataclass(frozen=True)
class Difference:
    """A run's estimate minus the first run's, with the paired interval (the same slates
    resampled for both)."""

    run: str
    baseline: str
    estimator: str
    value: float
    low: float
    high: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "baseline": self.baseline, "estimator": self.estimator,
                "difference": _json(self.value), "ci": [_json(self.low), _json(self.high)],
                "method": self.method}


@dataclass(frozen=True)
class OffPolicy:
    """The result of ``rankeval.ope``: the log's shape, each run's result, the paired
    differences and the gates' verdicts."""

    log: dict[str, Any]
    runs: list[RunResult]
    differences: list[Difference]
    level: float
    clip: float | None
    verdicts: list = field(default_factory=list)
    contexts: Any = field(default=None, repr=False)  # per slate its id (pa.Array)
    context: str = "user_id"  # what the ids are: slate_id, or user_id without slates
    config: str | None = None  # the configuration file whose keys gave option defaults

    def per_context(self) -> Any:
        """An Arrow table: per slate its id and each estimate's share of it (their mean is
        the estimate; self-normalised ones scaled by the mean weight); columns
        ``estimator``, or ``run:estimator`` with several runs."""
        columns: dict[str, Any] = {self.context: self.contexts}
        for run in self.runs:
            for name, part in run.parts.items():
                key = name if len(self.runs) == 1 else f"{run.name}:{name}"
                columns[key] = pa.array(part.per_slate(), pa.float64())
        return pa.table(columns)

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"log": self.log, "level": self.level, "clip": self.clip,
                               "runs": [r.to_dict() for r in self.runs],
                               "differences": [d.to_dict() for d in self.differences],
                               "config": self.config}
        if self.verdicts:
            out["gates"] = {"passed": self.passed, "verdicts": [
                {"gate": v.metric, "value": _json(v.value), "condition": v.condition(),
                 "passed": v.passed} for v in self.verdicts]}
        return out

    def __repr__(self) -> str:
        lines = [f"OffPolicy({plural(self.log['slates'], 'slate')}, {len(self.runs)} run(s))"]
        for r in self.runs:
            shown = ", ".join(f"{k}={e.value:.4g}" for k, e in r.estimates.items())
            lines.append(f"  {r.name}: {shown}")
        return "\n".join(lines)


def _json(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def intervals(parts: list[dict[str, Parts]], level: float, rounds: int, seed: int
              ) -> tuple[list[dict[str, tuple[float, float, str]]],
                         list[dict[str, tuple[float, float, str]]]]:
    """Per run and estimator, its interval; per later run, the interval of its difference
    from the first run's estimate, paired: each resample draws the same slates for all."""
    n = len(next(iter(parts[0].values())).num) if parts and parts[0] else 0
    alpha = (1 - level) / 2
    if n == 0:
        return ([{k: (math.nan, math.nan, "none") for k in p} for p in parts],
                [{k: (math.nan, math.nan, "none") for k in p if k in parts[0]}
                 for p in parts[1:]])
    if n * rounds <= BOOTSTRAP_LIMIT:
        rng = np.random.default_rng(seed)
        draws = {(i, k): np.empty(rounds) for i, p in enumerate(parts) for k in p}
        for r in range(rounds):
            counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
            for (i, k), out in draws.items():
                out[r] = parts[i][k].value(counts)
        qs = [100 * alpha, 100 * (1 - alpha)]
        own = [{k: _percentiles(draws[i, k], qs) for k in p} for i, p in enumerate(parts)]
        diff = [{k: _percentiles(draws[i, k] - draws[0, k], qs) for k in p if k in parts[0]}
                for i, p in enumerate(parts) if i > 0]
        return own, diff
    from scipy.stats import norm  # import cost: scipy (~0.3 s), only for an interval

    z = float(norm.ppf(1 - alpha))
    infl = [{k: e.influence() for k, e in p.items()} for p in parts]

    def band(v: float, f: np.ndarray) -> tuple[float, float, str]:
        se = float(f.std() / math.sqrt(n))
        return v - z * se, v + z * se, "normal"

    own = [{k: band(p[k].value(), infl[i][k]) for k in p} for i, p in enumerate(parts)]
    diff = [{k: band(p[k].value() - parts[0][k].value(), infl[i][k] - infl[0][k])
             for k in p if k in parts[0]} for i, p in enumerate(parts) if i > 0]
    return own, diff


def _percentiles(values: np.ndarray, qs: list[float]) -> tuple[float, float, str]:
    """The bootstrap interval over the resamples where the estimate is defined (a
    self-normalised estimate is not on a resample without any weight); undefined when
    fewer than half are."""
    defined = values[~np.isnan(values)]
    if len(defined) * 2 < len(values):
        return math.nan, math.nan, "bootstrap"
    low, high = np.percentile(defined, qs)
    return float(low), float(high), "bootstrap"
