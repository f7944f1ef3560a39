"""The library's door to interleaving (SPEC §13): ``make`` the interleaved lists, ``score`` a
log of clicks on them, ``simulate`` an experiment from the truth under a click model.

>>> from rankeval import interleave
>>> lists = interleave.make(["main.csv", "candidate.csv"], k=10, seed=7)
>>> result = interleave.score("clicks.parquet")
>>> result.pairs[0].delta
"""

from __future__ import annotations

from rankeval.api.interleave import make, score, simulate, write
from rankeval.results.interleaving import (
    Interleaved,
    InterleaveScore,
    InterleaveSimulation,
    PairResult,
)

__all__ = ["InterleaveScore", "InterleaveSimulation", "Interleaved", "PairResult", "make",
           "score", "simulate", "write"]
