"""Open Bandit Pipeline (obp 0.5.7), the off-policy estimators' oracle, loaded module by
module: its package __init__ imports its torch policy learners, which the estimators never
use (and obp declares Python < 3.11). The Makefile installs it without dependencies; here
its estimator and synthetic-data modules run as published, beside a stand-in ``torch``
module that only names the two attributes ``obp/utils.py`` reads when it is defined."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path


def load():
    """(obp.ope.estimators, obp.ope.estimators_slate, obp.dataset.synthetic,
    obp.dataset.synthetic_slate); fails (never skips) when obp is not installed."""
    spec = importlib.util.find_spec("obp")
    assert spec is not None and spec.submodule_search_locations, (
        "obp is not installed: make install puts it in .venv (pip install --no-deps "
        "--ignore-requires-python obp==0.5.7)")
    root = Path(next(iter(spec.submodule_search_locations)))
    stand_in = "torch" not in sys.modules
    if stand_in:
        torch = types.ModuleType("torch")
        torch.tensor = object  # type: ignore[attr-defined]  # an annotation in obp/utils.py
        torch.Tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
        sys.modules["torch"] = torch
    try:
        for name in ("obp", "obp.ope", "obp.dataset"):
            if name not in sys.modules or not hasattr(sys.modules[name], "__path__"):
                package = types.ModuleType(name)
                package.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
                sys.modules[name] = package
        return tuple(importlib.import_module(f"obp.{m}") for m in (
            "ope.estimators", "ope.estimators_slate", "dataset.synthetic",
            "dataset.synthetic_slate"))
    finally:  # obp/utils.py keeps its own reference; others (pyspark) must not see a torch
        if stand_in:
            del sys.modules["torch"]
