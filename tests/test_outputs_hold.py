"""Outputs that hold what they are given (#46.11): CSV headers quoted where a name needs it
(rankeval reads its own per-user files back), TREC and ir_measures lines refused for ids they
cannot hold, Markdown cells that a '|' cannot break, run names given once each."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "preds.csv", SAMPLE / "truth.csv"



@pytest.mark.parametrize("metric", ["ndcg(gains={1:1,2:3})@2", "precision(rel=2)@3"])
def test_a_per_user_file_is_read_back_by_the_commands_that_take_one(run_cli, tmp_path, metric):
    users = tmp_path / "users.csv"
    r = run_cli("score", PREDS, TRUTH, "-m", metric, "--per-user", users, "-q")
    assert r.exit_code == 0, r.stderr
    assert list(pd.read_csv(users).columns) == ["user_id", metric]
    gate = run_cli("score", PREDS, TRUTH, "-m", metric, "--baseline-per-user", users,
                   "--non-inferior", f"{metric}=0.01", "-q")
    assert gate.exit_code == 0, gate.stderr
    power = run_cli("power", "--per-user-a", users, "--per-user-b", users, "-m", metric,
                    "--effect", "0.01", "-f", "json")
    assert power.exit_code == 0, power.stderr


@pytest.mark.parametrize("name", ["a,b", 'say "hi"', "two words"])
def test_compare_run_names_survive_the_per_user_header(run_cli, tmp_path, name):
    users = tmp_path / "users.csv"
    r = run_cli("compare", PREDS, SAMPLE / "preds.parquet", TRUTH, "--name", "base",
                "--name", name, "-m", "ndcg@10", "--per-user", users, "-q")
    assert r.exit_code == 0, r.stderr
    assert any(name in column for column in pd.read_csv(users).columns)


@pytest.mark.parametrize("command", ["compare", "ope"])
def test_a_run_name_given_twice_is_refused(run_cli, command):
    runs = ([PREDS, SAMPLE / "preds.parquet", TRUTH] if command == "compare"
            else [SAMPLE / "log.csv", SAMPLE / "log_candidate.csv", SAMPLE / "log_candidate.csv"])
    r = run_cli(command, *runs, *(["--name", "a"] * (len(runs) - 1)))
    assert r.exit_code == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "--name 'a' is given to more than one run" in r.stderr


@pytest.mark.parametrize("fmt", ["trec", "ir_measures"])
@pytest.mark.parametrize("user", ["all", "q 1", "q\t1", "q\n1"])
def test_per_query_lines_refuse_ids_they_cannot_hold(run_cli, write, fmt, user):
    preds = pd.DataFrame({"user_id": [user, "ok"], "item_id": ["A", "B"], "rank": [1, 1]})
    truth = pd.DataFrame({"user_id": [user, "ok"], "item_id": ["A", "B"], "relevance": [1, 1]})
    p, t = write("p.parquet", preds), write("t.parquet", truth)
    r = run_cli("score", p, t, "-m", "ndcg@1", "-f", fmt, "--per-query")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "cannot be written in TREC format" in r.stderr
    assert r.stdout == ""
    summary = run_cli("score", p, t, "-m", "ndcg@1", "-f", fmt)  # no per-query lines
    assert summary.exit_code == 0, summary.stderr


def test_markdown_tables_keep_their_columns_whatever_a_segment_is_called(run_cli, write):
    segs = write("seg.csv", 'user_id,"country|x"\nu001,a|b\nu002,c\nu003,d*e\n')
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10", "--segments", segs, "--segment-by",
                "country|x", "-f", "markdown", "-q")
    assert r.exit_code == 0, r.stderr
    tables = [line for line in r.stdout.splitlines() if line.startswith("|")]
    assert any("a\\|b" in line for line in tables)
    for line in tables:  # every row of a table has as many cells as its rule
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        assert cells >= 2 and "a|b" not in line.replace("\\|", ""), line
    widths = {}
    block = 0
    for line in r.stdout.splitlines():
        if not line.startswith("|"):
            block += 1
            continue
        widths.setdefault(block, set()).add(len(re.split(r"(?<!\\)\|", line)))
    assert all(len(w) == 1 for w in widths.values()), widths
