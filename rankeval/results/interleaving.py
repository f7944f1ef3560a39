"""What ``rankeval interleave`` gives back, as plain data: the interleaved lists (``make``),
a log's verdict (``score``: every pair's preference, plans, gates) and a simulation's
(``simulate``). ``to_dict`` is the JSON report's body; its schema is versioned
(``SCHEMA``: bump when a key changes meaning or disappears; adding keys is compatible)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rankeval.analysis.interleave_judge import Pair
from rankeval.analysis.interleaving import Preference

SCHEMA = 1


def _json(x: Any) -> Any:
    """A number for JSON: NaN and infinities (undefined) are null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True)
class Interleaved:
    """``make``'s interleaved lists: ``table`` (pyarrow: user_id, item_id, rank, team, and
    per ranker ``p_<team>`` for probabilistic, ``rank_<team>`` for balanced)."""

    table: Any
    method: str
    teams: tuple[str, ...]
    k: int
    seed: int
    tau: float | None
    queries: int


@dataclass(frozen=True)
class PairResult(Preference[str]):
    """One pair of teams judged: the preference (``analysis.interleaving.Preference``) with
    its rankers named: ``delta`` is Delta of ``a`` over ``b`` (positive: users prefer ``a``);
    counts are expected counts under probabilistic interleaving. Beside it, the p-value
    corrected over every pair and the plan (None unless asked for)."""

    p_adjusted: float
    plan: dict[str, float] | None = None

    @classmethod
    def named(cls, pair: Pair, teams: Sequence[str]) -> PairResult:
        """``pair`` (its rankers as codes) with its rankers named by ``teams``."""
        plan = pair.plan
        return cls(**{**asdict(pair.preference), "a": teams[pair.preference.a],
                      "b": teams[pair.preference.b]}, p_adjusted=pair.p_adjusted,
                   plan=None if plan is None else {
                       "decided": plan.decided, "impressions": plan.impressions,
                       "no_click_share": plan.no_click_share,
                       "design_effect": plan.design_effect})

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "wins": self.wins, "losses": self.losses,
                "ties": self.ties, "no_click": self.no_click, "delta": _json(self.delta),
                "ci": [_json(self.low), _json(self.high)], "p_value": _json(self.p_value),
                "p_adjusted": _json(self.p_adjusted), "groups": self.groups,
                "plan": ({k: _json(v) for k, v in self.plan.items()}
                         if self.plan is not None else None)}


@dataclass
class InterleaveScore:
    """A log judged: its summary, the options that decided what counts, every pair, the
    gates and whether they passed."""

    log: dict[str, Any]
    method: str
    teams: tuple[str, ...]
    clicks: str
    min_dwell: float | None
    group_by: str
    level: float
    rounds: int
    seed: int
    correction: str
    pairs: list[PairResult]
    gates: list[Any] = field(default_factory=list)  # analysis.interleave_judge.Gate
    baseline: str | None = None
    alpha: float = 0.05
    power: float = 0.8
    plan_delta: float | None = None
    # Delta of the first pair as the impressions came in (their first row in the log, or
    # their earliest time): (impressions, delta, low, high) at a few checkpoints
    trajectory: list[tuple[int, float, float, float]] = field(default_factory=list)
    config: str | None = None  # the configuration file whose keys gave option defaults

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    def matrix(self) -> list[list[tuple[float, float] | None]]:
        """Team x team: (Delta of the row's team over the column's, p adjusted); None on the
        diagonal. Delta of b over a is minus Delta of a over b."""
        index = {t: i for i, t in enumerate(self.teams)}
        out: list[list[tuple[float, float] | None]] = [[None] * len(self.teams)
                                                       for _ in self.teams]
        for p in self.pairs:
            out[index[p.a]][index[p.b]] = (p.delta, p.p_adjusted)
            out[index[p.b]][index[p.a]] = (-p.delta, p.p_adjusted)
        return out

    @property
    def verdicts(self) -> list[Any]:
        return self.gates

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": "interleave_score", "log": self.log,
                "method": self.method, "teams": list(self.teams),
                "clicks": {"rule": self.clicks, "min_dwell": self.min_dwell},
                "group_by": self.group_by,
                "ci": {"level": self.level, "rounds": self.rounds, "seed": self.seed,
                       "method": "percentile bootstrap", "unit": self.group_by},
                "correction": self.correction,
                "pairs": [p.to_dict() for p in self.pairs],
                "plan": ({"delta": self.plan_delta, "alpha": self.alpha,
                          "power": self.power} if self.plan_delta is not None else None),
                "baseline": self.baseline,
                "trajectory": [{"impressions": n, "delta": _json(d), "ci": [_json(lo),
                                                                          _json(hi)]}
                               for n, d, lo, hi in self.trajectory],
                "gates": [g.to_dict() for g in self.gates], "passed": self.passed,
                "config": self.config}


@dataclass
class InterleaveSimulation:
    """Simulated interleaving experiments: per pair the Delta of each trial's impressions
    (mean, spread, how often its sign agreed with the mean's), the impressions a Delta that
    size needs, and the offline metric of each run under the truth."""

    method: str
    teams: tuple[str, ...]
    click_model: str
    parameters: dict[str, Any]
    impressions: int
    trials: int
    seed: int
    queries: int
    pairs: list[dict[str, Any]]
    offline: dict[str, dict[str, float]]  # team -> metric -> value
    metric: str
    alpha: float = 0.05
    power: float = 0.8
    gates: list[Any] = field(default_factory=list)
    config: str | None = None  # the configuration file whose keys gave option defaults

    @property
    def passed(self) -> bool:
        return True

    @property
    def verdicts(self) -> list[Any]:
        return []

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "kind": "interleave_simulation", "method": self.method,
                "teams": list(self.teams),
                "click_model": {"name": self.click_model, **self.parameters},
                "impressions": self.impressions, "trials": self.trials, "seed": self.seed,
                "queries": self.queries, "metric": self.metric,
                "plan": {"alpha": self.alpha, "power": self.power},
                "pairs": [{k: _json(v) for k, v in p.items()} for p in self.pairs],
                "offline": {t: {m: _json(v) for m, v in d.items()}
                            for t, d in self.offline.items()},
                "config": self.config}
