"""What ``preferences`` computes: trec_eval's prefs_* measures per query and over the
queries (``api.preferences``), for ``report.preferences`` and the library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.settings import Settings

# the measures that count preferences: summed over queries (trec_eval prints them as
# integers); the others are means over queries
COUNTED = frozenset({"prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"})


@dataclass(frozen=True)
class PreferenceEvaluation:
    """The prefs_* measures of a run against preferences."""

    settings: Settings
    users: list[str]  # the evaluated queries, in their ids' byte order (trec_eval's)
    values: dict[str, np.ndarray]  # measure -> its value per query, in ``users``' order
    metrics: dict[str, float]  # measure -> its sum (counts) or mean over the queries
    runid: str  # the run's tag (its last line's), else its file's name
    layout: str  # how the truth was read: "prefs", "qrels_prefs" or "table"
    queries: int  # the queries counted (num_q): ``users``, and under trec_eval-9 with
    # --no-skip-missing-users the unlisted ones too (counted in the means, never scored)

    @property
    def measures(self) -> list[str]:
        return list(self.values)

    @property
    def per_user(self) -> Any:
        """One row per query: ``user_id`` and each measure (a pandas DataFrame)."""
        import pandas as pd  # --help's import cost: pandas

        return pd.DataFrame({"user_id": self.users,
                             **{m: v for m, v in self.values.items()}})

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings.to_dict(), "truth_layout": self.layout,
                "runid": self.runid, "users": {"evaluated": self.queries},
                "metrics": dict(self.metrics)}
