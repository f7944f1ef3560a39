"""Import paths users may hold keep working through the reshaping of #47: every public name
of ``rankeval``, the engines' own entry points and the ``rankeval.evaluation`` module."""

from __future__ import annotations

import importlib

import pytest

import rankeval

OLD = {
    "rankeval.evaluation": ("evaluate", "Evaluation", "InputSummary", "EvaluateOptions"),
    "rankeval.spark": ("evaluate", "session"),
    "rankeval.ray": ("evaluate", "init", "read_inputs", "validate_inputs"),
}


@pytest.mark.parametrize("name", sorted(rankeval.__all__))
def test_every_public_name_resolves(name):
    assert getattr(rankeval, name) is not None


@pytest.mark.parametrize(("module", "names"), sorted(OLD.items()))
def test_the_old_modules_keep_their_names(module, names):
    found = importlib.import_module(module)
    for name in names:
        assert getattr(found, name) is not None, f"{module}.{name}"


VOCABULARY = ["errors", "version", "registry", "registry.metric", "registry.recommender", "params",
              "irmeasures", "foreign_names", "names", "conventions", "compat", "settings",
              "notices"]


@pytest.mark.parametrize("module", VOCABULARY)
def test_each_vocabulary_module_imports_first(module):
    """No import order is needed: each module of the floor imports in a fresh interpreter
    (``import rankeval.recommender.registry`` alone was a circular-import error)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", f"import rankeval.{module}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
