"""Non-inferiority and equivalence of a candidate run against a baseline (paired t).

Non-inferiority (``--non-inferior METRIC=MARGIN``): the candidate is shown not worse than
the baseline by more than MARGIN when the one-sided (1 - alpha) lower confidence bound of the
mean paired difference (candidate - baseline) lies above -MARGIN. Equivalence
(``--equivalent METRIC=MARGIN``, two one-sided tests, TOST): both bounds of the (1 - 2 alpha)
interval lie within (-MARGIN, MARGIN). A margin is absolute (0.005) or relative to the
baseline's mean (1%). The question a CI gate asks when a refactor, a cheaper model or a faster
index must not lose quality.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.analysis.gates import lower_better
from rankeval.errors import OptionError, plural
from rankeval.names import from_name
from rankeval.settings import Settings, metric_named

KINDS = ("non_inferior", "equivalent")
_MARGIN = re.compile(r"^\s*((?:[^=\s(]|\([^)]*\))+)\s*=\s*([0-9.eE+-]+)\s*(%?)\s*$")


@dataclass(frozen=True)
class Margin:
    """One gate: ``kind`` on ``metric`` with an absolute or relative margin."""

    kind: str  # "non_inferior" | "equivalent"
    metric: str
    value: float
    relative: bool
    text: str

    def absolute(self, baseline_mean: float) -> float:
        return self.value * abs(baseline_mean) if self.relative else self.value

    def shown(self) -> str:
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"


def parse(kind: str, text: str, metrics: list[str], settings: Settings | None = None) -> Margin:
    """``ndcg@10=0.005`` or ``ndcg@10=1%``, checked against the metrics computed."""
    flag = f"{{opt:{kind}}}"
    match = _MARGIN.match(text)
    if not match:
        raise OptionError(f"{flag} {text!r}: expected METRIC=MARGIN, e.g. ndcg@10=0.005 or "
                          "ndcg@10=1%")
    word, number, percent = match.groups()
    name = str(metric_named(word, settings) if settings is not None else from_name(word))
    if name not in metrics:
        raise OptionError(f"{flag} {text}: {name} is not computed by this run (computed: "
                          f"{', '.join(metrics)}); add it with {{opt:metrics}} {name}")
    try:
        value = float(number)
    except ValueError:
        raise OptionError(f"{flag} {text}: {number!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise OptionError(f"{flag} {text}: a margin is a positive number")
    return Margin(kind, name, value / 100 if percent else value, bool(percent), text)


@dataclass(frozen=True)
class Verdict:
    """A margin gate's outcome for one candidate run."""

    margin: Margin
    run: str
    users: int
    difference: float  # mean of candidate - baseline
    margin_abs: float
    low: float  # the lower bound (and the upper, for equivalence) of the interval
    high: float
    p_value: float  # of the one-sided test (non-inferiority), the larger of two (TOST)
    passed: bool
    users_to_show: int | None  # about how many users would show it at this difference
    baseline: str | None = None  # its name in compare (score's is a file)
    # how the difference was estimated, when not by the paired t over the per-user values
    # (score --gold: "PPI++ on ..." or why the machine judgments alone)
    judged_by: str | None = None

    def message(self) -> str:
        m = self.margin
        base = self.baseline or "the baseline"
        what = (f"not worse than {base} by more than" if m.kind == "non_inferior"
                else f"equivalent to {base} within")
        margin = f"{self.margin_abs:.4g}" + (f" ({m.shown()})" if m.relative else "")
        bound = (f"upper bound {self.high:+.4f} (lower is better)" if self._upward else
                 f"lower bound {self.low:+.4f}" if m.kind == "non_inferior" else
                 f"interval [{self.low:+.4f}, {self.high:+.4f}]")
        head = (f"{'passed' if self.passed else 'FAILED'} {self.run} {m.metric} {what} "
                f"{margin}: difference {self.difference:+.4f}, {bound}, p = {self.p_value:.3g}")
        if self.judged_by is not None:
            head += f" ({self.judged_by})"
        if self.passed or self.ppi:
            return head
        if self.users_to_show is None:
            return head + (" (the difference itself is outside the margin: more users would "
                           "not show it)")
        return head + (f" (about {plural(self.users_to_show, 'user')} would show it at this "
                       f"difference; {self.users:,} here)")

    # As a gate among the others (score's gates table, Markdown, HTML, JUnit): the bound
    # that decides, against the margin.
    @property
    def gate(self) -> Margin:
        return self.margin

    @property
    def metric(self) -> str:
        return self.margin.metric

    @property
    def _upward(self) -> bool:
        """Non-inferiority on a metric where lower is better (ee_l): the upper bound
        decides."""
        return self.margin.kind == "non_inferior" and lower_better(self.margin.metric)

    @property
    def value(self) -> float:
        """The bound that decides non-inferiority (the lower one; the upper one where lower
        is better), or the farther bound from 0 (equivalence)."""
        if self.margin.kind == "non_inferior":
            return self.high if self._upward else self.low
        return max(-self.low, self.high)

    @property
    def limit(self) -> float:
        if self.margin.kind == "non_inferior" and not self._upward:
            return -self.margin_abs
        return self.margin_abs

    @property
    def ppi(self) -> bool:
        """Judged on the PPI estimate of the difference (``analysis.ppi.judge_ppi``)."""
        return self.judged_by is not None and self.judged_by.startswith("PPI")

    def condition(self) -> str:
        said = "" if self.judged_by is None else " (PPI)" if self.ppi else " (machine judgments)"
        return self._condition() + said

    def _condition(self) -> str:
        base = self.baseline or "baseline"
        if self._upward:
            return (f"upper bound of {self.run} - {base} < {self.margin_abs:.4g} (lower is "
                    "better)")
        if self.margin.kind == "non_inferior":
            return f"lower bound of {self.run} - {base} > {-self.margin_abs:.4g}"
        return f"interval of {self.run} - {base} within ±{self.margin_abs:.4g}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.margin.kind, "metric": self.margin.metric, "run": self.run,
                # the baseline run in compare (a threshold gate's "baseline" is a number)
                **({"baseline_run": self.baseline} if self.baseline is not None else {}),
                "margin": self.margin_abs, "relative": self.margin.relative,
                "users": self.users, "difference": self.difference, "low": self.low,
                "high": self.high, "p_value": self.p_value, "passed": self.passed,
                "users_to_show": self.users_to_show,
                **({"judged_by": self.judged_by} if self.judged_by is not None else {})}


def judge(margin: Margin, run: str, a: np.ndarray, b: np.ndarray, alpha: float,
          baseline: str | None = None) -> Verdict:
    """The gate on paired values (NaN: no value) of the baseline ``a`` (named ``baseline``)
    and candidate ``b``."""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    both = ~(np.isnan(a) | np.isnan(b))
    d = (b - a)[both]
    n = len(d)
    if n < 2:
        raise OptionError(f"gate {margin.text!r} can neither pass nor fail: {margin.metric} "
                          f"has a value in both runs for {plural(n, 'user')}")
    base = float(a[both].mean())
    delta = margin.absolute(base)
    mean = float(d.mean())
    se = float(d.std(ddof=1)) / math.sqrt(n)
    t = float(stats.t.isf(alpha, n - 1))
    if se == 0:  # every user moved alike: the difference is known exactly
        low = high = mean
        p_low = 0.0 if mean > -delta else 1.0
        p_high = 0.0 if mean < delta else 1.0
    else:
        low, high = mean - t * se, mean + t * se
        p_low = float(stats.t.sf((mean + delta) / se, n - 1))  # H0: difference <= -delta
        p_high = float(stats.t.cdf((mean - delta) / se, n - 1))  # H0: difference >= delta
    if margin.kind == "non_inferior" and lower_better(margin.metric):  # no worse: no higher
        passed, p = high < delta, p_high
        gap = delta - mean
    elif margin.kind == "non_inferior":
        passed, p = low > -delta, p_low
        gap = mean + delta  # how far the difference is inside the margin
    else:
        passed, p = low > -delta and high < delta, max(p_low, p_high)
        gap = delta - abs(mean)
    return Verdict(margin, run, n, mean, delta, low, high, p, bool(passed),
                   None if passed or gap <= 0 else _users_to_show(gap, se * math.sqrt(n),
                                                                  alpha), baseline)


def _users_to_show(gap: float, sd: float, alpha: float) -> int | None:
    """The users at which the bound, at the same mean and spread, clears the margin:
    t_{1-alpha, n-1} sd / sqrt(n) < gap."""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    def shows(n: int) -> bool:
        return float(stats.t.isf(alpha, n - 1)) * sd / math.sqrt(n) < gap

    if sd == 0:
        return 2
    high = 2
    while not shows(high):
        high *= 2
        if high > 10**12:
            return None
    low = max(2, high // 2)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if shows(mid) else (mid, high)
    return high
