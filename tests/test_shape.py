"""The shape of the code (make lint): no function in rankeval/ over 80 lines of code (#47).

A function's lines of code are counted from its ``def`` line to its last line (decorators
left out, nested functions and classes counted in, as they are read with it): a line counts
when a token other than a comment starts on it or runs across it (so the lines of a
multi-line string or call count, each one). Blank lines, comment-only lines and the lines of
docstrings (a module's, a class's or a function's first statement when it is a string) do not
count. The planted case below shows the check fails on a function one line too long.

It reads rankeval/ as text (no import of it), with ``ast`` and ``tokenize``: a few seconds.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[1] / "rankeval"
LIMIT = 80
_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENCODING, tokenize.ENDMARKER}
_DEFS = ast.FunctionDef | ast.AsyncFunctionDef


def _code_lines(text: str, tree: ast.Module) -> set[int]:
    """The lines of a file that hold code: a token that is not a comment, minus docstrings."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in _NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | _DEFS) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines.difference_update(range(first.lineno, (first.end_lineno or 0) + 1))
    return lines


def _functions(node: ast.AST, prefix: str = ""
               ) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function under ``node``, nested ones included."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _DEFS):
            yield f"{prefix}{child.name}", child
        yield from _functions(child, f"{prefix}{child.name}." if isinstance(
            child, _DEFS | ast.ClassDef) else prefix)


def lengths(root: Path = ROOT) -> Iterator[tuple[str, int]]:
    """("module.py:qualified.name", lines of code) for every function under ``root``."""
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        code = _code_lines(text, tree)
        for name, node in _functions(tree):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            yield f"{path.relative_to(root).as_posix()}:{name}", len(code.intersection(span))


def too_long(root: Path = ROOT) -> dict[str, int]:
    return {name: n for name, n in lengths(root) if n > LIMIT}


def test_no_function_is_over_80_lines_of_code():
    assert too_long() == {}, f"functions over {LIMIT} lines of code: split them"


def test_a_planted_long_function_is_found(tmp_path):
    """One line over the limit fails; blank lines, comments and a docstring do not count."""
    body = [f"    x{i} = {i}" for i in range(LIMIT - 4)]
    padding = ['    """A docstring', '    over two lines."""', "", "    # a comment", ""]
    (tmp_path / "m.py").write_text("\n".join(
        ["@decorator", "def f(", "    a,", "):", *padding, *body, "    return x0", ""]))
    assert dict(lengths(tmp_path)) == {"m.py:f": LIMIT}  # def f(, a, ): , body, return
    (tmp_path / "m.py").write_text("\n".join(
        ["class C:", "    def f(self):", *[f"    {line}" for line in body],
         "        y = [", "            1,", "        ]", "        return y", ""]))
    assert too_long(tmp_path) == {"m.py:C.f": LIMIT + 1}
