"""``rankeval validate``: every problem and every count of two inputs, without scoring them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError, Notice, Problems
from .evaluation import build_inputs
from .ranking import UserCounts
from .readers import open_table
from .validate import Predictions, Truth, load_predictions, load_truth


@dataclass
class Check:
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: UserCounts | None = None
    rows_beyond_k: int | None = None

    def ok(self, strict: bool = False) -> bool:
        """Scorable: no errors (and, when strict, no warnings either)."""
        return not self.errors and not (strict and self.notices)

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        return {
            "valid": self.ok(strict),
            "strict": strict,
            "errors": [str(e) for e in self.errors],
            "warnings": [n.message for n in self.notices],
            "notices": [dataclasses.asdict(n) for n in self.notices],
            "inputs": self.inputs,
            "users": dataclasses.asdict(self.users) if self.users else None,
            "rows_beyond_k": self.rows_beyond_k,
        }


def check_inputs(
    predictions: str,
    truth: str,
    settings,
    *,
    preds_format: str | None = None,
    truth_format: str | None = None,
    user_col: str | None = None,
    item_col: str | None = None,
    rank_col: str | None = None,
    score_col: str | None = None,
    relevance_col: str | None = None,
) -> Check:
    """Read both inputs and run every check of ``score``, collecting problems, not stopping."""
    result = Check()
    problems = Problems()
    preds: Predictions | None = None
    gold: Truth | None = None
    try:
        table = open_table(predictions, preds_format, "--preds-format", role="predictions")
        preds = load_predictions(table, user_col, item_col, rank_col, score_col, problems)
    except InputError as exc:  # unreadable: nothing more to learn from this file
        problems.errors.append(exc)
    try:
        table = open_table(truth, truth_format, "--truth-format", role="truth")
        gold = load_truth(table, user_col, item_col, relevance_col, problems)
    except InputError as exc:
        problems.errors.append(exc)
    for role, data in (("predictions", preds), ("truth", gold)):
        if data is not None:
            result.inputs[role] = {
                "path": data.source.path,
                "format": data.source.format,
                "rows": data.source.rows,
                "columns": data.columns,
            }
    if preds is not None and gold is not None:
        try:
            built = build_inputs(preds, gold, settings, problems)
        except InputError as exc:
            problems.errors.append(exc)
        else:
            result.users = built.counts
            result.notices = built.notices
            result.rows_beyond_k = built.prediction_rows_beyond_k
            result.inputs["predictions"]["users"] = built.counts.in_predictions
            result.inputs["truth"]["users"] = built.counts.in_truth
            if built.counts.evaluated == 0:
                problems.errors.append(
                    InputError(gold.source.label, "no user can be evaluated (see the counts)")
                )
    result.errors = problems.errors
    return result
