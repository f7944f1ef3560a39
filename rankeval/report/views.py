"""The display door: the one way results reach the views that render them, for their own
``repr``, notebook display and ``to_dict``. Results are plain data and import nothing else
of the report package; a view reads a result and computes nothing (one function per kind of
result, so this module imports no result type). Each view loads its format's module by its
row (``report.FORMATS``) and the result's sections by theirs (``report.MODELS``), so that
holding a result costs no report's import."""

from __future__ import annotations

from typing import Any

from rankeval.report import module, notebook, parts


def score_text(ev) -> str:
    """An evaluation's summary as plain text (its ``repr``)."""
    return module("table").plain_text(ev)


def compare_text(result) -> str:
    """A comparison's tables as plain text (its ``repr``)."""
    table = module("table")
    return table.plain_text(result, table.render_compare)


def score_notebook(ev) -> str:
    """An evaluation as a notebook's HTML."""
    return notebook.render(parts("score", ev))


def compare_notebook(result) -> str:
    """A comparison as a notebook's HTML."""
    return notebook.render(parts("compare", result))


def score_document(ev) -> dict[str, Any]:
    """An evaluation's JSON report."""
    return module("json").document(ev)


def compare_document(result) -> dict[str, Any]:
    """A comparison's JSON report."""
    return module("json").compare_document(result)
