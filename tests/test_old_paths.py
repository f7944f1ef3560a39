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
