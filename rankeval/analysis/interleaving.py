"""Interleaving outcomes (SPEC §13): from the clicks on interleaved lists to which ranker users
prefer, and by how much.

A log holds one row per shown slot: its impression, the team the slot was credited to (the
ranker whose pick it was: team-draft, Radlinski et al. 2008; team-draft multileaving, Schuth et
al. 2014) and whether it was clicked. An impression's credit for a ranker is the number of its
team's clicked slots. Between two rankers A and B an impression is a win for A when A's credit
is larger, a loss when smaller, a tie when equal and not zero; an impression without a click
on either team is left out and counted. Then (Chapelle et al. 2012)

    Delta_AB = (wins + ties / 2) / (wins + losses + ties) - 1/2

with a sign test (the two-sided binomial test of wins against losses) and a bootstrap interval
that resamples the queries (or users) the impressions belong to, whole: impressions of one
query are not independent. With more than two rankers every pair gets its Delta.

Numbers in, numbers out: integer codes for impressions, teams and groups, no files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Generic, TypeVar

import numpy as np
from scipy.stats import binomtest

from rankeval.errors import OptionError

Ranker = TypeVar("Ranker")  # how a preference names its rankers: a code here, a team's name


@dataclass(frozen=True)
class Preference(Generic[Ranker]):
    """How impressions judged ranker ``a`` against ranker ``b``: counts, Delta_AB with its
    bootstrap interval over groups, and the sign test's p-value. Delta is NaN (undefined)
    when no impression had a click on either team. Here the rankers are codes
    (``Preference[int]``); a report's pair names them (``results.interleaving.PairResult``)."""

    a: Ranker
    b: Ranker
    wins: float  # whole numbers, except expected counts (probabilistic interleaving)
    losses: float
    ties: float
    no_click: int
    delta: float
    low: float
    high: float
    p_value: float
    groups: int  # queries (or users) with at least one impression of the pair


def credits(impression: np.ndarray, team: np.ndarray, clicked: np.ndarray, impressions: int,
            rankers: int) -> np.ndarray:
    """Each impression's credit for each ranker (impressions x rankers): its team's clicked
    slots. ``impression`` and ``team`` are codes (0..impressions-1, 0..rankers-1), one per
    shown slot."""
    key = impression.astype(np.int64) * rankers + team
    counts = np.bincount(key[np.asarray(clicked, dtype=bool)], minlength=impressions * rankers)
    return counts.reshape(impressions, rankers)


def balanced_credits(impression: np.ndarray, position: np.ndarray, rank_a: np.ndarray,
                     rank_b: np.ndarray, clicked: np.ndarray, impressions: int) -> np.ndarray:
    """Balanced interleaving's credit (Joachims 2002), impressions x 2: with the lowest
    clicked slot's item at rank ``k`` in the list that ranks it higher, each ranker is
    credited the clicked items in its own top ``k``. Per shown slot: its ``impression``
    code, its ``position`` in the interleaved list, and its item's rank in each ranker's list
    (1 = top; ``inf`` where the ranker does not list it)."""
    clicked = np.asarray(clicked, dtype=bool)
    imp, pos = impression[clicked], position[clicked]
    ra, rb = (np.asarray(r, dtype=np.float64)[clicked] for r in (rank_a, rank_b))
    order = np.lexsort((pos, imp))
    imp, ra, rb = imp[order], ra[order], rb[order]
    last = np.flatnonzero(np.append(imp[1:] != imp[:-1], True))  # each impression's lowest
    cut = np.full(impressions, np.inf)
    cut[imp[last]] = np.minimum(ra[last], rb[last])
    out = np.zeros((impressions, 2), dtype=np.int64)
    for column, ranks in enumerate((ra, rb)):
        out[:, column] = np.bincount(imp, weights=ranks <= cut[imp], minlength=impressions)
    return out


def outcomes(credit: np.ndarray, a: int, b: int) -> np.ndarray:
    """Per impression: 1 a win for ``a``, -1 a loss, 0 a tie, and -2 no click on either."""
    ca, cb = credit[:, a], credit[:, b]
    out = np.sign(ca - cb).astype(np.int8)
    out[(ca == 0) & (cb == 0)] = -2
    return out


def delta(wins, losses, ties):
    """Delta_AB from counts (arrays work elementwise); NaN where nothing was decided."""
    wins, losses, ties = (np.asarray(x, dtype=np.float64) for x in (wins, losses, ties))
    decided = wins + losses + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        return (wins + ties / 2) / decided - 0.5


def preference(outcome: np.ndarray, group: np.ndarray, a: int = 0, b: int = 1,
               level: float = 0.95, rounds: int = 10_000, seed: int = 0) -> Preference[int]:
    """Delta_AB of per-impression outcomes, its percentile bootstrap interval over the
    groups (``group``: each impression's query or user code), whole groups drawn with
    replacement, and the sign test. ``outcome``: codes (``outcomes``), or impressions x 3
    chances of a win, a loss and a tie (``probabilistic_outcomes``; all 0: no click), whose
    counts are expected counts and which have no sign test (p NaN: the interval judges)."""
    if not 0 < level < 1:
        raise OptionError(f"{{option}} must lie in (0, 1), got {level}", "confidence")
    if rounds < 1:
        raise OptionError(f"{{option}} must be at least 1, got {rounds}", "rounds")
    outcome = np.asarray(outcome)
    codes = outcome.ndim == 1
    chance = (np.stack([outcome == v for v in (1, -1, 0)], axis=1).astype(np.float64)
              if codes else outcome.astype(np.float64))
    shown = chance.sum(axis=1) > 0
    wins, losses, ties = (float(x) for x in chance.sum(axis=0))
    value = float(delta(wins, losses, ties))
    names, group_codes = np.unique(np.asarray(group)[shown], return_inverse=True)
    per_group = np.stack([np.bincount(group_codes, weights=chance[shown, j],
                                      minlength=len(names)) for j in range(3)], axis=1)
    low = high = math.nan
    if len(names) and math.isfinite(value):
        low, high = _bootstrap(per_group, level, rounds, np.random.default_rng(seed))
    p = math.nan
    if codes and wins + losses:
        p = float(binomtest(int(wins), int(wins + losses), 0.5).pvalue)
    count = int if codes else float
    return Preference(a, b, count(wins), count(losses), count(ties), int((~shown).sum()),
                      value, low, high, p, len(names))


def _bootstrap(per_group: np.ndarray, level: float, rounds: int, rng) -> tuple[float, float]:
    """The percentile interval of Delta over ``rounds`` resamples of the groups: each
    resample's counts are its groups' counts weighted by how often each was drawn (one
    multinomial draw per block of rounds, never a loop over groups)."""
    groups = len(per_group)
    values = np.empty(rounds)
    block = max(1, 2_000_000 // max(groups, 1))
    for start in range(0, rounds, block):
        stop = min(rounds, start + block)
        weights = rng.multinomial(groups, np.full(groups, 1 / groups), size=stop - start)
        sums = weights @ per_group
        values[start:stop] = delta(sums[:, 0], sums[:, 1], sums[:, 2])
    values = values[np.isfinite(values)]
    if not len(values):
        return math.nan, math.nan
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def preferences(credit: np.ndarray, group: np.ndarray, level: float = 0.95,
                rounds: int = 10_000, seed: int = 0) -> list[Preference[int]]:
    """Every pair of rankers (a < b) of a multileaved log, each judged on the impressions
    where either had a click."""
    rankers = credit.shape[1]
    return [preference(outcomes(credit, a, b), group, a, b, level, rounds, seed)
            for a in range(rankers) for b in range(a + 1, rankers)]


def probabilistic_outcomes(chances: np.ndarray, clicked: np.ndarray, a: int = 0, b: int = 1
                           ) -> np.ndarray:
    """Probabilistic interleaving's outcome marginalised over the assignments of slots to
    rankers (Hofmann et al. 2011), impressions x 3: the chances of a win for ``a``, a loss and
    a tie. ``chances[impression, slot, ranker]`` is each ranker's chance of having picked the
    slot's item given the slots above it; given the list, each slot's ranker is then ``a``
    with ``chances[.., a] / (chances[.., a] + chances[.., b])``, independently of the other
    slots, so the credit difference over the clicked slots has a Poisson-binomial law (one
    convolution step per slot, every impression at once). An impression without a click is
    (0, 0, 0): left out."""
    impressions, slots = clicked.shape
    pa, pb = chances[:, :, a], chances[:, :, b]
    with np.errstate(invalid="ignore", divide="ignore"):
        to_a = np.where(pa + pb > 0, pa / (pa + pb), np.nan)
    counted = clicked & np.isfinite(to_a)
    law = np.zeros((impressions, 2 * slots + 1))
    law[:, slots] = 1.0  # the credit difference a - b, shifted by ``slots``
    for i in range(slots):
        p = np.where(counted[:, i], to_a[:, i], 0.0)[:, None]
        moved = np.zeros_like(law)
        moved[:, 1:] += law[:, :-1] * p  # a credited
        moved[:, :-1] += law[:, 1:] * np.where(counted[:, i], 1 - to_a[:, i], 0.0)[:, None]
        law = np.where(counted[:, i, None], moved, law)
    out = np.stack([law[:, slots + 1:].sum(axis=1), law[:, :slots].sum(axis=1),
                    law[:, slots]], axis=1)
    out[~counted.any(axis=1)] = 0.0
    return out


@dataclass(frozen=True)
class Plan:
    """How many impressions an interleaving experiment needs to tell a preference of
    ``delta`` from none (two-sided, ``alpha``) with chance ``power``: ``decided`` impressions
    (with a click on either team) and ``impressions`` in all, at the observed share without
    a click; ``design_effect``: how much the clustering of impressions in queries (or users)
    widens the interval over independent impressions (1 when they are independent)."""

    delta: float
    alpha: float
    power: float
    decided: float
    impressions: float
    no_click_share: float
    design_effect: float


def impressions_needed(outcome: np.ndarray, group: np.ndarray, delta: float,
                       alpha: float = 0.05, power: float = 0.8) -> Plan:
    """From a pilot's per-impression outcomes (codes, or win/loss/tie chances): Delta is half
    the mean of the decided impressions' scores (+1 a win, -1 a loss, 0 a tie), so with their
    spread sigma, n = ((z_{1 - alpha/2} + z_power) sigma / (2 delta))^2 decided impressions,
    times the design effect of the groups (the ratio estimator's linearised variance over
    groups against the independent one)."""
    if not 0 < abs(delta) < 0.5:
        raise OptionError(f"{{option}} must lie in (-0.5, 0.5) and not be 0, got {delta}",
                          "delta")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise OptionError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    outcome = np.asarray(outcome)
    chance = (np.stack([outcome == v for v in (1, -1, 0)], axis=1).astype(np.float64)
              if outcome.ndim == 1 else outcome.astype(np.float64))
    decided_rows = chance.sum(axis=1) > 0
    n = float(decided_rows.sum())
    no_click = 1 - n / len(chance) if len(chance) else math.nan
    if n < 2:
        return Plan(delta, alpha, power, math.nan, math.nan, no_click, math.nan)
    score = chance[decided_rows, 0] - chance[decided_rows, 1]  # expected +1/-1/0
    square = chance[decided_rows, 0] + chance[decided_rows, 1]  # expected score^2
    mean = float(score.mean())
    sigma2 = float(square.mean()) - mean**2
    names, codes = np.unique(np.asarray(group)[decided_rows], return_inverse=True)
    groups = len(names)
    effect = 1.0
    if groups > 1 and sigma2 > 0:
        totals = np.bincount(codes, weights=score, minlength=groups)
        sizes = np.bincount(codes, minlength=groups)
        linear = groups / (groups - 1) * float(((totals - mean * sizes) ** 2).sum()) / n**2
        effect = max(1.0, linear / (sigma2 / n))
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    needed = (z * math.sqrt(sigma2) / (2 * abs(delta))) ** 2 * effect
    return Plan(delta, alpha, power, needed, needed / (1 - no_click) if no_click < 1
                else math.nan, no_click, effect)
