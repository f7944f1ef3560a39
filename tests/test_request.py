"""One request (#47, S16): an engine's ``Job`` is assembled in one place, ``api/request.py``;
the library's keywords stay what they were (reading options are not ``evaluate``'s), and a
verb's settings are parsed once."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import rankeval.api.request as request_module
from rankeval import evaluate, evaluate_scores
from rankeval.api.request import BREAKDOWN, NEEDS, request
from rankeval.errors import OptionError
from rankeval.io.options import Reading

from .conftest import SAMPLE

ROOT = Path(__file__).parents[1] / "rankeval"
PREDS, TRUTH = str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv")


def _builds_a_job(path: Path) -> bool:
    calls = (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call))
    return any(getattr(c.func, "id", getattr(c.func, "attr", None)) == "Job" for c in calls)


def test_a_job_is_assembled_in_one_place():
    assert [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.rglob("*.py"))
            if _builds_a_job(p)] == ["api/request.py"]


@pytest.mark.parametrize("keyword", ["delimiter", "encoding", "reading", "stats", "segments",
                                     "intervals", "keep_values", "quiet", "checks"])
def test_evaluate_takes_no_keyword_of_the_request_alone(keyword):
    with pytest.raises(TypeError, match=f"unknown option.*{keyword}"):
        evaluate(PREDS, TRUTH, **{keyword: None})


def test_evaluate_scores_parses_its_settings_once(monkeypatch):
    calls = []
    parse = request_module.make_settings
    monkeypatch.setattr(request_module, "make_settings",
                        lambda *a, **kw: calls.append(a) or parse(*a, **kw))
    u, v = np.random.default_rng(0).random((3, 2)), np.random.default_rng(1).random((4, 2))
    ev = evaluate_scores((u, v), sp.csr_matrix(np.eye(3, 4)), ["ndcg", "coverage"], 2)
    assert len(calls) == 1 and set(ev.metrics) == {"ndcg@2", "coverage@2"}


def test_the_checks_run_in_the_callers_order_and_keep_their_values():
    seen = []
    made = request(PREDS, TRUTH, "ndcg", 5, {"preds_format": "csv", "user_col": "user_id"},
                   reading={"delimiter": ","},
                   breakdown={"stats": "median", "segments": "users.csv",
                              "segment_by": ("country",)},
                   checks={"first": lambda s: seen.append("first") or s.k,
                           "needs": NEEDS, "breakdown": BREAKDOWN,
                           "last": lambda s: seen.append("last")})
    assert seen == ["first", "last"] and made.checked == {"first": (5,), "last": None}
    job = made.job
    assert (job.preds_format, job.columns["user_col"], job.reading) == (
        "csv", "user_id", Reading(delimiter=","))
    assert (job.stats, job.segments, list(job.segment_by)) == ("median", "users.csv",
                                                                ["country"])


def test_without_the_breakdown_step_nothing_is_broken_down():
    made = request(PREDS, TRUTH, options={}, breakdown={"stats": "bogus"}, checks={})
    assert made.job.stats is None
    with pytest.raises(OptionError, match="unknown statistic"):
        request(PREDS, TRUTH, breakdown={"stats": "bogus"})
