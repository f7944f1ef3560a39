"""The outcome of ``agree`` (``rankeval agree``, ``rankeval.agree``): which pairs each qrels
judged, the agreement on their labels, and with runs, per metric what the two qrels say about
the systems. Plain data; ``report/agreement.py`` draws it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rankeval.analysis.agreement import Coverage, Labels, Ordering
from rankeval.notices import Notice
from rankeval.version import __version__

__all__ = ["Agreement", "Side"]


@dataclass(frozen=True)
class Side:
    """One qrels as read: its name in reports, its path, its judged pairs and queries, and
    the grades it uses."""

    label: str
    path: str
    pairs: int
    queries: int
    grades: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "pairs": self.pairs, "queries": self.queries,
                "grades": list(self.grades)}


@dataclass
class Agreement:
    human: Side
    machine: Side
    coverage: Coverage
    labels: Labels
    threshold: float | None  # relevant: relevance >= threshold (None: > 0)
    runs: dict[str, str] = field(default_factory=dict)  # name -> path
    orderings: list[Ordering] = field(default_factory=list)  # one per metric, with runs
    # queries both qrels evaluate for every run (the orderings' queries), and how many each
    # qrels evaluates beyond them
    queries: dict[str, int] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # the test of the swaps
    notices: list[Notice] = field(default_factory=list)  # its warnings, by code
    config: str | None = None  # the configuration file whose keys gave option defaults

    def ordering(self, metric: str) -> Ordering:
        return next(o for o in self.orderings if o.metric == metric)

    def to_dict(self) -> dict[str, Any]:
        """Every number (undefined: null, with why under each part's ``undefined``)."""
        return {
            "rankeval": __version__,
            "human": self.human.to_dict(),
            "machine": self.machine.to_dict(),
            **self.coverage.to_dict(),
            "labels": self.labels.to_dict(),
            "runs": dict(self.runs),
            "system_queries": dict(self.queries) or None,
            "test": dict(self.options) if self.runs else None,
            "metrics": [o.to_dict() for o in self.orderings],
            "warnings": [n.message for n in self.notices],
            "notices": [n.to_dict() for n in self.notices],
            "config": self.config,
        }
