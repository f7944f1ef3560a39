"""Which input is which: a file's role from its name or header, and predictions and truth
given the wrong way round."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankeval.errors import InputError
from rankeval.io.columns import resolve_column
from rankeval.io.formats import named_format
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Table, for_role, open_table


def looks_like(table: Table | MemoryTable) -> str | None:
    """``truth`` (a relevance column, no rank or score), ``predictions`` (a rank or score
    column, no relevance) or None, from a table's column names."""

    def has(column: str) -> bool:
        try:
            return resolve_column(table.columns, column, None, table.label, False) is not None
        except InputError:  # ambiguous: certainly present
            return True

    ordered, judged = has("rank") or has("score"), has("relevance")
    return "truth" if judged and not ordered else "predictions" if ordered and not judged else None


def swapped(preds: Table | MemoryTable, truth: Table | MemoryTable) -> None:
    """Refuse predictions that look like a truth file while the truth looks like a run: the
    two were given in the wrong order, and scoring them would give numbers with exit 0."""
    if looks_like(preds) == "truth" and looks_like(truth) == "predictions":
        raise InputError(
            preds.label,
            f"looks like ground truth (a relevance column, no rank or score) and {truth.label} "
            "like predictions: the two seem swapped (every command takes the predictions "
            "first and the truth last)",
        )


def guess_role(path: str, fmt: str | None = None, reading: Mapping[str, Any] | None = None,
               flag: str = "{opt:preds_format}") -> str | None:
    """What a file holds, when its name or header says: ``.qrels`` or a relevance column
    without rank or score is truth; ``.run`` or rank/score without relevance is predictions.
    ``flag``: what a message about an unknown format tells the reader to use."""
    if path == "-":
        return None
    kind = named_format(path, fmt, flag)
    if kind is None:  # told from the content: a TREC run's or qrels' fields say which
        try:
            found = open_table(path, None, flag, **for_role(reading, "predictions"))
        except InputError:  # qrels: not a run's layout
            return None
        return found.sniffed.role if found.sniffed and found.sniffed.role else looks_like(found)
    if kind == "trec":
        suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
        return {".qrels": "truth", ".run": "predictions"}.get(suffixes[-1] if suffixes else "")
    if kind == "json":  # a run and qrels look alike
        return None
    return looks_like(open_table(path, fmt, flag, role="predictions",
                                 **for_role(reading, "predictions")))
