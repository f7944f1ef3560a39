"""Rewrite the docs' generated tables (`make docs`): each of ``rankeval.report.catalog.GENERATED``
between its page's ``<!-- NAME:start`` and ``<!-- NAME:end -->`` lines (tests/test_docs.py
checks that each page holds what this writes)."""

from __future__ import annotations

from pathlib import Path

from rankeval.report.catalog import GENERATED

DOCS = Path(__file__).resolve().parent


def between(text: str, name: str, new: str) -> str:
    """``text`` with the lines between NAME's markers replaced by ``new``."""
    start, end = text.index(f"<!-- {name}:start"), text.index(f"<!-- {name}:end -->")
    start = text.index("\n", start) + 1
    return text[:start] + new + text[end:]


if __name__ == "__main__":
    for page, name, write in GENERATED:
        path = DOCS / page
        path.write_text(between(path.read_text(), name, write()))
