"""The import contract (make lint): floors bottom to top, the rules beside them, no other
module's _private name, an import inside a function only with its reason, no circle.

The tree holds it whole (#47, design/layers-plan.md S18): any break fails, named by module
and import; the planted violations below show that each kind of break is found.

It reads rankeval/ as text (no import of it): about a second.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "rankeval"

FLOORS = [  # bottom to top: a module imports its own floor and the floors below it
    "errors version dependencies",
    "registry* params irmeasures foreign_names names presets conventions compat settings notices",
    "kernels*", "io*", "build*", "analysis*", "results*",
    "engines* offpolicy*", "api* report*", "integrations*",
    "cli* spark* ray* evaluation interleave __main__ __init__"]
NEVER = ["results* engines*", "results* api*", "results* integrations*", "report* api*",
         "report* engines*", "api* report*", "engines.spark* engines.ray*",
         "engines.ray* engines.spark*", "spark* ray*", "ray* spark*", "engines* offpolicy*",
         "offpolicy* engines*", "* cli*"]
DOORS = ["results.evaluation report.views", "results.comparison report.views",  # repr, notebook
         "spark.submit cli", "__main__ cli", "cli* cli*"]  # the command line's own files
REASON = re.compile(r"#.*(optional dependency|--help|import cost)")


def _rule(pairs: list[str], a: str, b: str) -> bool:
    return any(fnmatch(a, x) and fnmatch(b, y) for x, y in (p.split() for p in pairs))


def floor(module: str) -> int:
    return next((i for i, f in enumerate(FLOORS) if any(fnmatch(module, p) for p in f.split())),
                -1)


def imports(root: Path = ROOT) -> dict[str, list[tuple[int, str | None, str, bool, list]]]:
    """module -> [(line, the rankeval module imported or None, name, inside a function,
    the file's lines)]; imports under ``if TYPE_CHECKING`` are left out."""
    files = {".".join(f.relative_to(root).with_suffix("").parts).removesuffix("__init__")
             .removesuffix(".") or "__init__": f for f in root.rglob("*.py")}
    out: dict[str, list] = {}
    for mod, path in files.items():
        text = path.read_text()
        tree, found, lines = ast.parse(text), out.setdefault(mod, []), text.splitlines()
        skip = {id(n) for g in ast.walk(tree) if isinstance(g, ast.If)
                and "TYPE_CHECKING" in ast.unparse(g.test) for n in ast.walk(g)}
        functions = [f for f in ast.walk(tree)
                     if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
        inner = {id(n) for f in functions for n in ast.walk(f) if n is not f}
        for node in (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)):
            if id(node) in skip:
                continue
            module = getattr(node, "module", None) or ""
            if isinstance(node, ast.ImportFrom) and node.level:  # relative: from this package
                module = ".".join(["rankeval", *mod.split(".")[:-node.level or None], module])
            base = module.removeprefix("rankeval").lstrip(".")
            for alias in node.names:
                full = alias.name if isinstance(node, ast.Import) else ".".join(
                    p for p in ("rankeval", base, alias.name) if p)
                own = (module or alias.name).startswith("rankeval")
                sub = full.removeprefix("rankeval.")
                target = (sub if sub in files else base or "__init__") if own else None
                found.append((node.lineno, target, alias.name, id(node) in inner, lines))
    return out


def problems(root: Path = ROOT) -> Iterator[str]:
    """Each break of the contract, keyed without line numbers (stable as code moves)."""
    for mod, found in imports(root).items():
        if floor(mod) < 0:
            yield f"floor: {mod} is on no floor"
        for line, target, name, deferred, lines in found:
            if target and target != mod and not _rule(DOORS, mod, target) and (
                    floor(target) > floor(mod) >= 0 or _rule(NEVER, mod, target)):
                yield f"layer: {mod} may not import {target}"
            if target is not None and name.startswith("_") and not name.startswith("__"):
                yield f"private: {mod} imports {target}.{name}"
            if deferred and not REASON.search(" ".join(lines[line - 2:line])):
                yield f"deferred: {mod} imports {target or name} in a function without a reason"


def circles(root: Path = ROOT) -> list[list[str]]:
    """The import circles (strongly connected components of more than one module)."""
    graph = {m: {t for _, t, *_ in f if t and t != m} for m, f in imports(root).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(part) > 1:
                found.append(sorted(part))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in list(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_tree_holds_the_contract():
    assert sorted(set(problems())) == [], "breaks of the import contract (design/layers-plan.md)"


def test_no_import_circle():
    assert circles() == []


PLANTED = [  # (file under rankeval/, text appended, what the contract says)
    ("report/json.py", "from rankeval.engines import ENGINES", "may not import engines"),
    ("kernels/chunk.py", "from rankeval.io.arrow import to_numpy", "may not import io.arrow"),
    ("io/load.py", "from rankeval.cli import app", "may not import cli"),
    ("io/load.py", "from rankeval.io.cast import _POWERS", "imports io.cast._POWERS"),
    ("build/join.py", "def later():\n    from rankeval.io import arrow", "without a reason"),
    ("newfloor.py", "", "on no floor"),
    ("engines/spark/engine.py", "from rankeval.engines.ray import engine", "may not import"),
    ("results/evaluation.py", "from rankeval.api import evaluate", "may not import api"),
]


@pytest.mark.parametrize(("path", "text", "said"), PLANTED)
def test_a_planted_violation_is_found(tmp_path, path, text, said):
    copy = tmp_path / "rankeval"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / path, "a") as f:
        f.write(f"\n{text}\n")
    found = set(problems(copy)) - set(problems())
    assert any(said in p for p in found), found


def test_a_planted_circle_is_found(tmp_path):
    copy = tmp_path / "rankeval"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "errors.py", "a") as f:
        f.write("\nfrom rankeval import kernels\n")
    with open(copy / "kernels" / "__init__.py", "a") as f:
        f.write("\nfrom rankeval import errors\n")
    assert any({"errors", "kernels"} <= set(c) for c in circles(copy))


if __name__ == "__main__":  # the breaks, one a line
    print("\n".join(sorted(set(problems()))))
