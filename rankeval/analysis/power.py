"""Power and sample size for a paired comparison of two runs (``rankeval power``).

From the per-user differences d = B - A of one metric: their standard deviation; the
minimum detectable effect at the users at hand (for a significance level and a power); the
power achieved for a given effect; and the users needed for it. The paired t-test is exact
through the noncentral t distribution (as statsmodels' ``TTestPower``); ``bootstrap``
simulates the test on resamples of the observed differences shifted to the effect, for
skewed per-user values (many zeros). ``systems``: Sakai's topic-set-size design for m
systems (one-way ANOVA, from the residual variance), the users needed to detect a range D
between the best and the worst of m systems.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankeval.analysis.choices import ALTERNATIVES, MAX_ROUNDS, MAX_SYSTEMS, METHODS
from rankeval.errors import OptionError
from rankeval.notices import Notice
from rankeval.version import __version__

MAX_USERS = 10**8  # the sample sizes searched (beyond it: "more than")


@dataclass(frozen=True)
class Effect:
    """An effect to detect: absolute (0.01) or relative to the baseline mean (1%)."""

    value: float
    relative: bool = False

    @classmethod
    def parse(cls, text: str | float) -> Effect:
        word = str(text).strip()
        relative = word.endswith("%")
        try:
            value = float(word.rstrip("%"))
        except ValueError:
            raise OptionError(f"{{option}} {text!r}: expected a number (0.01) or a "
                              "percentage of the baseline mean (1%)", "effect") from None
        if not math.isfinite(value) or value <= 0:
            raise OptionError(f"{{option}} {text!r}: an effect is a positive number", "effect")
        return cls(value / 100 if relative else value, relative)

    def absolute(self, baseline_mean: float) -> float:
        return self.value * abs(baseline_mean) if self.relative else self.value

    def __str__(self) -> str:
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"


@dataclass(frozen=True)
class PowerRow:
    """One metric's answer. NaN where undefined (no spread, no users)."""

    metric: str
    users: int  # paired users with a value in both runs
    baseline_mean: float
    mean_difference: float  # observed B - A
    sd: float  # standard deviation of the paired differences (n - 1)
    mde: float  # the smallest effect the users at hand detect with the power asked
    effect: float | None  # the effect asked, absolute
    achieved: float | None  # the power for that effect with the users at hand
    users_needed: int | None  # for that effect (None: not asked; -1: more than MAX_USERS)
    n_exact: float | None  # the t-test's continuous solution (users_needed is its ceiling)
    anova_users: int | None = None  # Sakai's design for ``systems`` systems

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PowerResult:
    rows: list[PowerRow]
    alpha: float
    power: float
    alternative: str
    method: str
    effect: Effect | None
    systems: int | None
    rounds: int
    seed: int
    runs: tuple[str, str]
    notices: list[str] = field(default_factory=list)
    config: str | None = None  # the configuration file whose keys gave option defaults

    def to_dict(self) -> dict[str, Any]:
        return {
            "rankeval": __version__, "schema": 1, "runs": list(self.runs),
            "alpha": self.alpha, "power": self.power, "alternative": self.alternative,
            "method": self.method, "effect": None if self.effect is None else str(self.effect),
            "systems": self.systems, "rounds": self.rounds if self.method != "t" else None,
            "seed": self.seed if self.method != "t" else None,
            "metrics": [r.to_dict() for r in self.rows], "warnings": list(self.notices),
            "config": self.config,
        }


# --- the paired t-test, exactly -------------------------------------------------------------

def t_power(d: float, n: float, alpha: float, alternative: str = "two-sided") -> float:
    """The power of the paired t-test for a standardised effect d (effect / sd) with n
    users: the noncentral t's mass past the critical values (as statsmodels computes it)."""
    from scipy import special, stats  # import cost: scipy (~0.3 s), only when a test is run

    df = n - 1
    nc = d * math.sqrt(n)
    level = alpha / 2 if alternative == "two-sided" else alpha

    def cdf(x: float) -> float:
        v = float(special.nctdtr(df, nc, x))
        # far in a tail, scipy's series can fail (NaN) where the mass is 0 or 1 to double
        # precision (statsmodels then answers NaN too)
        return v if not math.isnan(v) else 0.0 if x < nc else 1.0

    out = 0.0
    if alternative in ("two-sided", "larger"):
        out += 1.0 - cdf(float(stats.t.isf(level, df)))
    if alternative in ("two-sided", "smaller"):
        out += cdf(float(stats.t.ppf(level, df)))
    return out


def _signed(alternative: str) -> float:
    return -1.0 if alternative == "smaller" else 1.0


def t_mde(n: int, alpha: float, power: float, alternative: str) -> float:
    """The standardised effect the t-test detects with ``power`` at n users."""
    from scipy.optimize import brentq  # import cost: scipy (~0.3 s), only when a test is run

    s = _signed(alternative)
    f = lambda d: t_power(s * d, n, alpha, alternative) - power  # noqa: E731
    high = 1.0
    while f(high) < 0:
        high *= 2
    return brentq(f, 1e-12, high, xtol=1e-14, rtol=1e-12)


def t_users(d: float, alpha: float, power: float, alternative: str) -> float:
    """The (continuous) number of users at which the t-test reaches ``power`` for the
    standardised effect d; inf past MAX_USERS."""
    from scipy.optimize import brentq  # import cost: scipy (~0.3 s), only when a test is run

    s = _signed(alternative)
    f = lambda n: t_power(s * d, n, alpha, alternative) - power  # noqa: E731
    if f(2.0) >= 0:
        return 2.0
    if f(float(MAX_USERS)) < 0:
        return math.inf
    return brentq(f, 2.0, float(MAX_USERS), xtol=1e-10, rtol=1e-14)


# --- by simulation: resampled differences -----------------------------------------------------

def _rejected(samples: np.ndarray, alpha: float, alternative: str) -> np.ndarray:
    """Per row of paired differences: does the t-test reject at ``alpha``?"""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    n = samples.shape[1]
    mean = samples.mean(axis=1)
    sd = samples.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / (sd / math.sqrt(n)), np.sign(mean) * np.inf)
    if alternative == "two-sided":
        return np.abs(t) > stats.t.isf(alpha / 2, n - 1)
    if alternative == "larger":
        return t > stats.t.isf(alpha, n - 1)
    return t < stats.t.ppf(alpha, n - 1)


_CELLS = 1 << 22  # differences drawn at once


def simulated_power(diff: np.ndarray, effect: float, n: int, alpha: float, alternative: str,
                    rounds: int, seed: int) -> float:
    """The share of ``rounds`` resamples of n differences, shifted so that their mean is
    ``effect`` (signed), in which the t-test rejects."""
    rng = np.random.default_rng(seed)
    shifted = diff - diff.mean() + effect
    hits, done = 0, 0
    step = max(1, _CELLS // max(n, 1))
    while done < rounds:
        take = min(step, rounds - done)
        idx = rng.integers(0, len(shifted), size=(take, n))
        hits += int(np.count_nonzero(_rejected(shifted[idx], alpha, alternative)))
        done += take
    return hits / rounds


def _search(f, low: float, high: float, integer: bool, steps: int = 60) -> float:
    """The smallest x in [low, high] with f(x) true (f monotone), by bisection."""
    for _ in range(steps):
        if (integer and high - low <= 1) or (not integer and high - low <= 1e-9 * high):
            break
        mid = (low + high) // 2 if integer else (low + high) / 2
        low, high = (low, mid) if f(mid) else (mid, high)
    return high


# --- Sakai's topic-set-size design for m systems ------------------------------------------

def anova_users(range_: float, variance: float, systems: int, alpha: float,
                power: float) -> int:
    """The smallest n at which a one-way ANOVA over ``systems`` systems detects a range
    ``range_`` between the best and the worst mean with ``power`` (Sakai 2016: noncentral F,
    lambda = n D^2 / (2 sigma^2), sigma^2 the residual variance); -1 past MAX_USERS."""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    def enough(n: float) -> bool:
        df1, df2 = systems - 1, (systems - 1) * (n - 1)
        crit = stats.f.isf(alpha, df1, df2)
        return float(stats.ncf.sf(crit, df1, df2, n * range_**2 / (2 * variance))) >= power

    if not enough(float(MAX_USERS)):
        return -1
    return int(_search(enough, 1, MAX_USERS, integer=True)) if not enough(2) else 2


# --- the notice of compare: when p says nothing ----------------------------------------------

def large_sample_notices(result) -> list:
    """Per metric, when so many users are compared that a difference below 1% of the
    baseline is detected (at 80% power): p then says nothing about whether it matters."""
    out: list[Notice] = []
    n = len(result.shared_users)
    if n < 3:
        return out
    for metric in result.metrics:
        cells = [c for c in result.cells if c.metric == metric and c.tested and c.defined
                 and c.stats.n > 2]
        if not cells:
            continue
        base = cells[0].stats.mean_a
        sds = [abs(c.stats.delta / c.stats.effect_size) for c in cells
               if c.stats.effect_size and math.isfinite(c.stats.effect_size)]
        if not sds or not base:
            continue
        mde = t_mde(cells[0].stats.n, result.options["alpha"], 0.8, "two-sided") * min(sds)
        if mde < 0.01 * abs(base):
            out.append(Notice("large_sample", cells[0].stats.n,
                              {"metric": metric, "mde": mde, "share": mde / abs(base)}))
    return out


# --- one metric ----------------------------------------------------------------------------

def analyse(metric: str, a: np.ndarray, b: np.ndarray, effect: Effect | None, alpha: float,
            power: float, alternative: str, method: str, rounds: int, seed: int,
            systems: int | None) -> PowerRow:
    """The power analysis of one metric from paired per-user values (NaN: no value)."""
    both = ~(np.isnan(a) | np.isnan(b))
    a, b = a[both], b[both]
    diff = b - a
    n = len(diff)
    nan = math.nan
    if n < 2:
        return PowerRow(metric, n, float(a.mean()) if n else nan, float(diff.mean()) if n
                        else nan, nan, nan, None, None, None, None)
    sd = float(diff.std(ddof=1))
    base = float(a.mean())
    want = None if effect is None else effect.absolute(base)
    if sd == 0:  # no spread: any effect is certain, none is measurable from these values
        return PowerRow(metric, n, base, float(diff.mean()), 0.0, nan, want, None, None, None)
    s = _signed(alternative)
    achieved = needed = exact = anova = None
    if method == "t":
        mde = t_mde(n, alpha, power, alternative) * sd
        if want is not None:
            achieved = t_power(s * want / sd, n, alpha, alternative)
            exact = t_users(want / sd, alpha, power, alternative)
            needed = -1 if math.isinf(exact) else math.ceil(exact - 1e-9)
    else:
        def detects(e: float, users: int = n) -> bool:
            return simulated_power(diff, s * e, users, alpha, alternative, rounds,
                                   seed) >= power
        high = t_mde(n, alpha, power, alternative) * sd
        while not detects(high):
            high *= 2
        mde = _search(detects, 0.0, high, integer=False, steps=40)
        if want is not None:
            achieved = simulated_power(diff, s * want, n, alpha, alternative, rounds, seed)
            guess = t_users(want / sd, alpha, power, alternative)
            if math.isinf(guess):
                needed = -1
            else:
                top = max(4, math.ceil(guess))
                while not detects(want, top) and top < MAX_USERS:
                    top *= 2
                needed = (-1 if not detects(want, top) else
                          int(_search(lambda u: detects(want, int(u)), 2, top, integer=True)))
    if systems is not None and want is not None:
        anova = anova_users(want, sd**2 / 2, systems, alpha, power)
    return PowerRow(metric, n, base, float(diff.mean()), sd, mde, want, achieved, needed,
                    exact, anova)


def check(alpha: float, power: float, alternative: str, method: str, rounds: int,
          systems: int | None) -> None:
    if not 0 < alpha < 1:
        raise OptionError("{option} must lie strictly between 0 and 1", "alpha")
    if not 0 < power < 1:
        raise OptionError("{option} must lie strictly between 0 and 1", "power")
    if alternative not in ALTERNATIVES:
        raise OptionError(f"{{option}} must be one of {', '.join(ALTERNATIVES)}", "alternative")
    if method not in METHODS:
        raise OptionError(f"{{option}} must be one of {', '.join(METHODS)}", "method")
    if not 100 <= rounds <= MAX_ROUNDS:
        raise OptionError(f"{{option}} must be from 100 to {MAX_ROUNDS:,}", "rounds")
    if systems is not None and not 2 <= systems <= MAX_SYSTEMS:
        raise OptionError(f"{{option}} must be from 2 to {MAX_SYSTEMS:,}", "systems")
