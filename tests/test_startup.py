"""A command loads what its run uses, no more: its start is part of every run's time, and on
the small files of a pipeline or a CI gate it is most of it (#47: a score run had come to
load 565 modules, every command's reports and verbs among them, where it had loaded 366).

The rules are by class, from the tables they come from: a run loads no other command's verb
(``rankeval.api``) and no other command's report model (``report.MODELS``); help's drawing
(cloup, and the package metadata it reads) only for ``--help``; the terminal's tables (rich)
only for a report drawn on a console; and ``--help`` loads neither numpy nor pyarrow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rankeval.report import FORMATS, MODELS

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, sys
from rankeval.cli import cli
code = cli.main(sys.argv[1:], standalone_mode=False)
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

# each command's own verb, where its name is not the command's
VERBS = {"interleave": ("interleave",), "gold": ("gold", "gold_compare"),
         "power": ("power",), "compare": ("compare",), "agree": ("agree",),
         "ope": ("ope",), "sampled": ("sampled",), "convert": ("convert",),
         "validate": ("validate",), "preferences": ("preferences",), "rbo": ("rbo",)}
HELP_ONLY = ("cloup", "importlib.metadata")
# what --mlflow, --wandb and the GitHub Action's runner load, for those alone
INTEGRATIONS = tuple(f"rankeval.integrations.{m}" for m in ("mlflow", "wandb", "support",
                                                             "action"))
NEVER = ("pandas", "scipy")


def _loaded(tmp_path: Path, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=tmp_path, text=True,
                          capture_output=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    (tmp_path / "p.csv").write_text("user,item,score\n1,a,0.5\n1,b,0.4\n2,a,0.3\n")
    (tmp_path / "t.csv").write_text("user,item,relevance\n1,a,1\n2,b,1\n")
    return ["p.csv", "t.csv"]


def _others(loaded: set[str], own: str) -> list[str]:
    """Modules of other commands' verbs and report models among ``loaded``."""
    verbs = {f"rankeval.api.{m}" for c, ms in VERBS.items() if c != own for m in ms}
    models = {f"rankeval.report.{m.module}" for c, m in MODELS.items()
              if m.module != MODELS[own].module}
    return sorted(loaded & (verbs | models))


@pytest.mark.parametrize("fmt", sorted(f for f in FORMATS if "score" in FORMATS[f].commands
                                       and not FORMATS[f].optional))
def test_a_score_run_loads_no_other_commands_modules(tmp_path, files, fmt):
    loaded = _loaded(tmp_path, "score", *files, "--k", "2", "-f", fmt, "-o", "out", "-q")
    assert (tmp_path / "out").stat().st_size > 0
    assert _others(loaded, "score") == []
    assert sorted(loaded & {*HELP_ONLY, *NEVER, *INTEGRATIONS}) == []
    # the terminal's tables for a report drawn on a console, and only then
    assert ("rich" in loaded) == FORMATS[fmt].console


def test_the_rules_see_what_they_look_for(tmp_path, files):
    """The probe itself: a compare run loads the compare verb and the models of the score's
    sections, which the rule above then names for a score."""
    loaded = _loaded(tmp_path, "compare", files[0], files[0], files[1], "-f", "json", "-o",
                     "out", "-q")
    assert "rankeval.api.compare" in loaded
    assert "rankeval.api.compare" in _others(loaded, "score")


def test_help_draws_with_cloup_and_loads_no_numbers(tmp_path):
    for args in (["--help"], ["score", "--help"], ["interleave", "score", "--help"]):
        loaded = _loaded(tmp_path, *args)
        assert "cloup" in loaded
        assert sorted(loaded & {"numpy", "pyarrow", "rich", *NEVER}) == []
