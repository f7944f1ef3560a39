"""What ``validate`` gives back: ``Validation``, the problems and counts of two inputs (or
one file alone), as plain data."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from rankeval.build.users import UserCounts
from rankeval.errors import InputError
from rankeval.notices import Notice, spelled


@dataclass
class Validation:
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: UserCounts | None = None
    rows_beyond_k: int | None = None
    # Notice codes the user chose explicitly (``dedupe``, a user policy): still shown, never
    # counted as problems by ``strict``.
    acknowledged: frozenset[str] = frozenset()
    config: str | None = None  # the configuration file whose keys gave option defaults

    @property
    def unacknowledged(self) -> list[Notice]:
        return [n for n in self.notices if n.code not in self.acknowledged]

    def ok(self, strict: bool = False) -> bool:
        """Scorable: no errors (and, when strict, no warnings the user did not choose)."""
        return not self.errors and not (strict and self.unacknowledged)

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        return {
            "valid": self.ok(strict),
            "strict": strict,
            # named as the notices are: the command line's flags in its reports
            "errors": [e.render(spelled()) for e in self.errors],
            "warnings": [n.message for n in self.notices],
            "notices": [n.to_dict() for n in self.notices],
            "inputs": self.inputs,
            "users": dataclasses.asdict(self.users) if self.users else None,
            "rows_beyond_k": self.rows_beyond_k,
            "config": self.config,
        }
