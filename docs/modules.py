"""The module map of docs/development.md, made from the modules' own docstrings.

Every module under ``rankeval/`` opens with a docstring whose first sentence says its one job;
this script writes them as one table between the ``modules:start`` and ``modules:end`` markers
of docs/development.md (``make docs`` runs it; ``tests/test_docs.py`` fails when the committed
table differs from what it writes). A module's docstring is read with ``ast``, never imported,
so that the map costs no optional dependency.

The first sentence: the docstring's first paragraph up to the first full stop that is followed
by a space and a capital letter or a backquote (so that "et al. 2019" and "e.g. a" do not end
it), with its lines joined.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rankeval"
PAGE = ROOT / "docs" / "development.md"
START, END = "<!-- modules:start", "<!-- modules:end -->"
PIPE = r"\|"  # a pipe in a cell, escaped as GitHub's tables ask (docs/hooks.py)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, its lines joined."""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


def modules(package: Path = PACKAGE) -> list[tuple[str, str]]:
    """(path under the package, first sentence of its docstring) for every module, in path
    order (a package's ``__init__.py`` first); a module without a docstring is an error."""
    rows = []
    for path in sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).parts):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        name = path.relative_to(package).as_posix()
        if not docstring:
            raise SystemExit(f"docs/modules.py: rankeval/{name} has no docstring: its first "
                             "sentence is its row of the module map")
        rows.append((name, first_sentence(docstring)))
    return rows


def modules_markdown(package: Path = PACKAGE) -> str:
    """The module map as a Markdown table (the text between the page's markers)."""
    lines = ["| module | its one job |", "|---|---|"]
    for name, sentence in modules(package):
        lines.append(f"| `{name}` | {sentence.replace('|', PIPE)} |")
    return "\n".join(lines) + "\n"


def between_markers(text: str) -> tuple[int, int]:
    """Where the generated table starts and ends in the page's text."""
    start, end = text.index(START), text.index(END)
    return text.index("\n", start) + 1, end


def main() -> None:
    text = PAGE.read_text(encoding="utf-8")
    start, end = between_markers(text)
    PAGE.write_text(text[:start] + modules_markdown() + text[end:], encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
