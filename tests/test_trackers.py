"""The trackers (#47 S2): ``Evaluation.log_mlflow`` and ``log_wandb`` find their loggers
through rankeval's entry points (group ``rankeval.trackers``), so that results never import
the integrations; an install without them says so in one line."""

from __future__ import annotations

from importlib import metadata

import pytest

import rankeval
from rankeval.errors import RankevalError
from rankeval.integrations import mlflow, wandb

from .conftest import judged, ranked


@pytest.mark.parametrize("name, module", [("mlflow", mlflow), ("wandb", wandb)])
def test_each_tracker_is_an_entry_point_of_its_integration(name, module):
    (point,) = metadata.entry_points(group="rankeval.trackers", name=name)
    assert point.load() is module.log_evaluation


@pytest.mark.parametrize("method", ["log_mlflow", "log_wandb"])
def test_trackers_not_registered_is_one_clear_error(method, monkeypatch):
    ev = rankeval.evaluate(ranked({"u": ["a", "b"]}), judged({"u": {"a": 1}}), metrics="ndcg",
                           k=2)
    monkeypatch.setattr(metadata, "entry_points", lambda **_: [])
    with pytest.raises(RankevalError, match="trackers are not registered: reinstall rankeval"):
        getattr(ev, method)()
