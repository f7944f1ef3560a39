"""The off-policy estimators (SPEC section 10), vectorised over the log's rows.

Each estimator is a sum over a slate's rows of weighted rewards, averaged over slates; the
self-normalised ones divide by the mean weight (over slates for the standard estimator, per
position for the independent and reward-interaction ones, as Open Bandit Pipeline does). An
estimate is kept as per-slate parts from which the value, its influence on the value (for
normal intervals) and any resample's value follow (``Parts``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from rankeval.offpolicy.inputs import Log
from rankeval.offpolicy.policy import Target


@dataclass(frozen=True)
class Estimator:
    name: str
    title: str
    weights: str  # the weight it reads: 'slate', 'position', 'cascade', or '' (none)
    normalised: bool = False
    model: bool = False  # reads the reward model
    assumption: str = ""


def _normalised(plain: Estimator, title: str = "") -> Estimator:
    """``plain``'s self-normalised variant: its weights divided by their mean."""
    return replace(plain, name=f"sn{plain.name}", normalised=True,
                   title=title or f"self-normalised {plain.title}",
                   assumption=f"as {plain.name}; biased, lower variance")


# the direct method: of both families (it reads no weights)
_DIRECT = Estimator("dm", "direct method", "", model=True,
                    assumption="the reward model is right (no weights)")
_SLATE_IPS = (
    Estimator("sips", "standard IPS", "slate",
              assumption="none beyond the logging policy's support of the whole slate"),
    Estimator("iips", "independent IPS", "position",
              assumption="position-based: a slot's reward depends on its own item only "
              "(Li et al. 2018)"),
    Estimator("rips", "reward-interaction IPS", "cascade",
              assumption="cascade: a slot's reward depends on the items at and above it "
              "(McInerney et al. 2020)"),
)
_IPS = Estimator("ips", "inverse propensity scoring", "position",
                 assumption="the logging policy's support covers the new one")
# The slate estimators, then their top-1 names (a log of single slots: they coincide)
SLATE: tuple[Estimator, ...] = (
    *_SLATE_IPS, *(_normalised(e) for e in _SLATE_IPS), _DIRECT,
    Estimator("cascade_dr", "cascade doubly robust", "cascade", model=True,
              assumption="cascade; unbiased when the propensities or the reward model are "
              "right (Kiyohara et al. 2022)"),
)
TOP1: tuple[Estimator, ...] = (
    _IPS, _normalised(_IPS, "self-normalised IPS"), _DIRECT,
    Estimator("dr", "doubly robust", "position", model=True,
              assumption="unbiased when the propensities or the reward model are right"),
)
ESTIMATORS = {e.name: e for e in (*SLATE, *TOP1)}
# the propensity each kind of weight divides by, and the policy's probability it reads
NEEDS = {"slate": ("slate_propensity", "slate"), "position": ("propensity", "marginal"),
         "cascade": ("cascade_propensity", "cascade")}


def propensity(log: Log, kind: str) -> np.ndarray | None:
    """The logging policy's probability a weight divides by; on a log of single slots the
    three are one, so whichever is given serves."""
    wanted = NEEDS[kind][0]
    if wanted in log.propensity:
        return log.propensity[wanted]
    if log.longest == 1 and log.propensity:
        return next(iter(log.propensity.values()))
    return None


def probability(target: Target, log: Log, kind: str) -> np.ndarray | None:
    wanted = getattr(target, NEEDS[kind][1])
    if wanted is not None or log.longest != 1:
        return wanted
    return next((p for p in (target.marginal, target.cascade, target.slate) if p is not None),
                None)


@dataclass(frozen=True)
class Parts:
    """An estimate as per-slate parts: ``num`` (slates x positions) summed over positions,
    divided (when ``den`` is set, self-normalised) position by position by the mean of
    ``den`` over the slates that have that position (``has``)."""

    num: np.ndarray
    den: np.ndarray | None = None
    has: np.ndarray | None = None
    per_slate_den: bool = False  # snsips: one normaliser, the mean slate weight

    def value(self, counts: np.ndarray | None = None) -> float:
        """The estimate; with ``counts`` (slates drawn, per slate), on that resample."""
        c = np.ones(len(self.num)) if counts is None else counts
        n = c.sum()
        if self.den is None:
            return float(c @ self.num.sum(axis=1) / n)
        if self.per_slate_den:  # no weight at all (no slate the policy would show): NaN
            weight = float(c @ self.den[:, 0])
            return float(c @ self.num.sum(axis=1)) / weight if weight > 0 else math.nan
        assert self.has is not None
        num, den, has = c @ self.num, c @ self.den, c @ self.has
        with np.errstate(invalid="ignore", divide="ignore"):
            per = np.where(den > 0, num / den * has, 0.0)
        return float(per.sum() / n)

    def influence(self) -> np.ndarray:
        """Each slate's influence on the value (its mean is 0): the normal interval's
        variance is their variance over n."""
        n = len(self.num)
        if self.den is None:
            c = self.num.sum(axis=1)
            return c - c.mean()
        if self.per_slate_den:
            c, w = self.num.sum(axis=1), self.den[:, 0]
            a, b = c.mean(), w.mean()
            return (c - a) / b - a * (w - b) / b**2 if b > 0 else np.zeros(n)
        assert self.has is not None
        a, b, h = self.num.mean(axis=0), self.den.mean(axis=0), self.has.mean(axis=0)
        ok = b > 0
        out = np.zeros(n)
        for k in np.flatnonzero(ok):
            out += (a[k] / b[k]) * (self.has[:, k] - h[k]) + (h[k] / b[k]) * (
                self.num[:, k] - a[k]) - (h[k] * a[k] / b[k] ** 2) * (self.den[:, k] - b[k])
        return out

    def per_slate(self) -> np.ndarray:
        """Each slate's share of the value (their mean is the value)."""
        if self.den is None:
            return self.num.sum(axis=1)
        if self.per_slate_den:
            mean = self.den[:, 0].mean()
            return self.num.sum(axis=1) / mean if mean > 0 else np.zeros(len(self.num))
        assert self.has is not None
        b, h = self.den.mean(axis=0), self.has.mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(b > 0, h / b, 0.0)
        return (self.num * scale).sum(axis=1)


def weights(log: Log, target: Target, kind: str, clip: float | None) -> np.ndarray | None:
    """Per row, the policy's probability over the logging policy's (clipped at ``clip``);
    None when the log or the policy lacks what the weight needs."""
    p0, pi = propensity(log, kind), probability(target, log, kind)
    if p0 is None or pi is None:
        return None
    w = pi / p0
    return np.minimum(w, clip) if clip is not None else w


def parts(e: Estimator, log: Log, target: Target, clip: float | None) -> Parts | None:
    """The estimator's per-slate parts; None when its inputs are missing."""
    rows = (log.slate, log.position - 1)
    shape = (log.n, log.longest)
    if e.name == "dm":
        return None if target.direct is None else Parts(target.direct[:, None])
    w = weights(log, target, e.weights, clip)
    if w is None:
        return None
    num = np.zeros(shape)
    if e.model:  # cascade-DR (dr on single slots): weighted residuals + the model's part
        if target.expected is None or target.observed is None:
            return None
        observed = target.observed
        prev = np.ones_like(w)
        later = log.position > 1
        prev[later] = w[np.flatnonzero(later) - 1]
        num[rows] = w * (log.reward - observed) + prev * target.expected
        return Parts(num)
    num[rows] = w * log.reward
    if not e.normalised:
        return Parts(num)
    den = np.zeros(shape)
    den[rows] = w
    has = np.zeros(shape)
    has[rows] = 1.0
    if e.weights == "slate":
        return Parts(num, den[:, :1], per_slate_den=True)
    return Parts(num, den, has)
