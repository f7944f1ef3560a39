"""rankeval validate: every problem and count, exit 0 when scorable, 2 when not."""

from __future__ import annotations

import json

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "preds.csv", SAMPLE / "truth.csv"


def test_good_inputs_exit_0_with_counts_and_warnings(run_cli):
    r = run_cli("validate", PREDS, TRUTH)
    assert r.exit_code == 0
    assert "298 can be evaluated" in r.stdout
    assert "warning: 2 truth users have no relevant item" in r.stdout
    assert "warning: ndcg: the gains are the grades of" in r.stdout  # a graded truth
    assert "ok: the inputs can be scored (3 warnings)" in r.stderr


def test_strict_turns_warnings_into_failure(run_cli):
    r = run_cli("validate", PREDS, TRUTH, "--strict", "-f", "json")
    assert r.exit_code == 2
    report = json.loads(r.stdout)
    assert report["valid"] is False and report["strict"] is True
    assert len(report["warnings"]) == 3
    # a gain chosen answers the graded gains' notice: it is not given
    chosen = run_cli("validate", PREDS, TRUTH, "--strict", "--gain", "linear", "-f", "json")
    assert len(json.loads(chosen.stdout)["warnings"]) == 2


def test_every_problem_of_both_files_is_listed(run_cli, write):
    p = write("p.csv", "user_id,item_id,rank\nu1,A,1\nu1,A,2\n,B,3\nu2,C,0\n")
    t = write("t.csv", "user_id,item_id,relevance\nu1,A,1\nu1,A,2\nu2,C,nan\n")
    r = run_cli("validate", p, t, "-f", "json")
    assert r.exit_code == 2
    errors = json.loads(r.stdout)["errors"]
    joined = "\n".join(errors)
    for needle in ("column 'user_id': 1 empty id,", "rank below 1", "column 'relevance': 1 NaN",
                   "p.csv: 1 (user, item) pair listed more than once",
                   "t.csv: 1 (user, item) pair listed more than once"):
        assert needle in joined, (needle, errors)
    assert "cannot be scored (5 problems)" in r.stderr


def test_validate_agrees_with_score(run_cli, write):
    p = write("p.csv", "user_id,item_id,score\nu1,A,1\nu1,B,1\n")
    t = write("t.csv", "user_id,item_id\nu1,A\n")
    checked = run_cli("validate", p, t, "--k", "1", "-f", "json")
    scored = run_cli("score", p, t, "--k", "1", "-f", "json")
    assert checked.exit_code == scored.exit_code == 0
    assert json.loads(checked.stdout)["warnings"] == scored.json()["warnings"]


def test_unreadable_numbers_do_not_hide_the_other_problems(run_cli, write):
    p = write("p.csv", "user_id,item_id,rank,score\nu1,A,1,x\nu1,A,two,0.5\n,B,3,0.1\n")
    t = write("t.csv", "user_id,item_id,relevance\nu1,A,high\nu1,B,1\n")
    r = run_cli("validate", p, t, "-f", "json")
    assert r.exit_code == 2
    joined = "\n".join(json.loads(r.stdout)["errors"])
    for needle in ("column 'rank': 1 non-numeric value, e.g. row 2 ('two')",
                   "column 'score': 1 non-numeric value, e.g. row 1 ('x')",
                   "column 'user_id': 1 empty id,",
                   "column 'relevance': 1 non-numeric value",
                   "p.csv: 1 (user, item) pair listed more than once"):
        assert needle in joined, (needle, joined)
