"""Gains from a graded column are never silent (#52): a truth whose relevance column holds
grades (a ``rating`` of 1-5) gives NDCG, DCG and CG graded gains by default; when no gain was
chosen (no ``--gain``, no preset or config setting it) a notice names the column, its grades
and ``--gain binary``, on stderr and in the JSON. The same notice on every engine, from every
truth format; none where the gain was chosen or does not come from grades."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import rankeval
from rankeval.api.request import request as make_request
from rankeval.api.validate import validate
from rankeval.conventions import ROWS
from rankeval.engines import Engine, get
from rankeval.presets import PRESETS, UNSET

from .test_engines import CUT, INPUTS, MARKS, OTHERS, STARTED, partitions  # noqa: F401
from .test_trec import write_qrels

CODE = "graded_gains"


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six users' lists of five items; their ratings 1-5 (every rated item relevant)."""
    users = [f"u{u}" for u in range(6)]
    preds = pd.DataFrame([(u, f"i{(j + n) % 8}", j + 1) for n, u in enumerate(users)
                          for j in range(5)], columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame([(u, f"i{(2 * j + n) % 8}", 1 + (j + n) % 5) for n, u in enumerate(users)
                          for j in range(4)], columns=["user_id", "item_id", "rating"])
    return preds, truth


def _graded(notices) -> list:
    return [n for n in notices if n.code == CODE]


@pytest.mark.parametrize("name", ["local", *[pytest.param(n, marks=MARKS.get(n, ()))
                                             for n in OTHERS]])
def test_every_engine_says_the_gains_come_from_the_grades(request, name):
    """The notice is the truth's, said once (not once per partition), with the column's own
    name: the distributed engines carry it from their tasks."""
    started = request.getfixturevalue(STARTED[name]) if name in STARTED else None
    preds, truth = _frames()
    given = INPUTS.get(name, lambda _, df, __: df)
    ev = rankeval.evaluate(given(started, preds, 3), given(started, truth, 2), k=[3, 5],
                           metrics="ndcg,dcg,precision", engine=name,
                           engine_options=CUT.get(name))
    found = _graded(ev.notices)
    assert len(found) == 1, [n.code for n in ev.notices]
    text = found[0].message
    assert "'rating'" in text and "1 to 5" in text and "gain='binary'" in text
    assert "ndcg, dcg" in text and "precision" not in text
    graded = int((truth.rating != 1).sum())
    assert found[0].count == graded
    report = ev.to_dict()
    assert {"code": CODE, "message": text, "count": graded} in report["notices"]
    engine = get(name)
    if type(engine).validate is Engine.validate:  # an engine without ``validate``
        return
    local = validate(make_request(preds, truth, "ndcg"))
    theirs = validate(make_request(given(started, preds, 3), given(started, truth, 2), "ndcg",
                              engine=name, engine_options=CUT.get(name)))
    assert [n.to_dict() for n in _graded(theirs.notices)] == [
        n.to_dict() for n in _graded(local.notices)] != []


def _truth_file(fmt: str, truth: pd.DataFrame, write):
    if fmt == "qrels":
        path = write("t.qrels", "")
        write_qrels(truth.rename(columns={"rating": "relevance"}), path)
        return path
    return write(f"t.{fmt}", truth)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "qrels"])
def test_the_command_line_warns_on_stderr_and_in_the_json(fmt, write, run_cli):
    preds, truth = _frames()
    r = run_cli("score", write("p.csv", preds), _truth_file(fmt, truth, write), "-m", "ndcg",
                "--k", "5", "-f", "json")
    assert r.exit_code == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "gains are the grades" in line]
    assert len(lines) == 1 and lines[0].startswith("rankeval: warning: ")
    assert "1 to 5" in lines[0] and "--gain binary" in lines[0]
    column = "relevance" if fmt == "qrels" else "rating"
    assert f"column {column!r}" in lines[0]
    codes = [n["code"] for n in r.json()["notices"]]
    assert codes.count(CODE) == 1
    assert any("gains are the grades" in w for w in r.json()["warnings"])


# Every preset sets the gain (its tool's): the user chose the tool's numbers
GAIN_PRESETS = [p for p in PRESETS if ROWS["gain"].preset(p) is not UNSET]


@pytest.mark.parametrize("args", [
    *[["--gain", g] for g in ROWS["gain"].choices],
    *[["--compat", p] for p in GAIN_PRESETS],
    ["--gains", "1=1,2=3,3=7,4=15,5=31"],
    ["-m", "precision,recall,map"],  # no metric the gain changes
], ids=" ".join)
def test_no_notice_where_the_gain_was_chosen_or_unused(args, write, run_cli):
    preds, truth = _frames()
    metrics = [] if "-m" in args else ["-m", "ndcg"]
    r = run_cli("score", write("p.csv", preds), write("t.csv", truth), *metrics, "--k", "5",
                *args, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert CODE not in [n["code"] for n in r.json()["notices"]]
    assert "gains are the grades" not in r.stderr


def test_a_config_file_choosing_the_gain_is_a_choice(write, run_cli):
    preds, truth = _frames()
    config = write("rankeval.toml", 'gain = "binary"\n')
    r = run_cli("score", write("p.csv", preds), write("t.csv", truth), "-m", "ndcg", "--k", "5",
                "--config", config, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["settings"]["gain"] == "binary"
    assert CODE not in [n["code"] for n in r.json()["notices"]]


@pytest.mark.parametrize("grades", [[0, 1], [1], [0, -1, 1]], ids=str)
def test_no_notice_where_the_grades_gain_as_hits(grades):
    """Grades of 0 and 1 (negatives: unjudged) gain what a binary gain gives."""
    preds, truth = _frames()
    truth["rating"] = [grades[i % len(grades)] for i in range(len(truth))]
    ev = rankeval.evaluate(preds, truth, metrics="ndcg,dcg", k=5)
    assert not _graded(ev.notices)


def test_a_metrics_own_gain_is_a_choice():
    preds, truth = _frames()
    own = rankeval.evaluate(preds, truth, metrics="ndcg(gains={1: 1, 2: 3, 3: 7, 4: 15, 5: 31})@5")
    assert not _graded(own.notices)
    assert _graded(rankeval.evaluate(preds, truth, metrics="ndcg@5").notices)


def test_the_library_names_its_keyword():
    preds, truth = _frames()
    text = _graded(rankeval.evaluate(preds, truth, metrics="ndcg", k=5).notices)[0].message
    assert "gain='binary'" in text and "--gain" not in text
    assert not _graded(rankeval.evaluate(preds, truth, metrics="ndcg", k=5,
                                         gain="linear").notices)
    assert json.dumps(rankeval.evaluate(preds, truth, metrics="ndcg", k=5).to_dict())
