"""``rankeval interleave make | score | simulate`` (#51) from the command line and the library:
the lists in every run format, a log judged against hand-worked examples (SPEC worked example
13, Radlinski et al.'s team-draft credit, Joachims' balanced credit, Hofmann et al.'s
probabilistic outcome by enumerating every assignment), scipy's binomtest for the sign test,
multileaving's corrected p-values, the gates' exit codes, and every class of bad log as one
line and exit 2."""

from __future__ import annotations

import io
import itertools
import json
import re

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy.stats import binomtest

from rankeval import interleave
from rankeval.analysis.choices import INTERLEAVE_METHODS
from rankeval.analysis.significance import correct

A = pd.DataFrame({"user_id": ["q1"] * 4 + ["q2"] * 3, "item_id": list("abcd") + list("xyz"),
                  "rank": [1, 2, 3, 4, 1, 2, 3]})
B = pd.DataFrame({"user_id": ["q1"] * 4 + ["q2"] * 3, "item_id": list("baec") + list("zyw"),
                  "rank": [1, 2, 3, 4, 1, 2, 3]})
C = pd.DataFrame({"user_id": ["q1"] * 3 + ["q2"] * 2, "item_id": list("dca") + list("wx"),
                  "rank": [1, 2, 3, 1, 2]})


@pytest.fixture
def runs(write):
    return write("a.csv", A), write("b.csv", B), write("c.csv", C)


def _json(r) -> dict:
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


# --- make ------------------------------------------------------------------------------------

def _read(path, fmt: str) -> pd.DataFrame:
    if fmt == "parquet":
        return pq.read_table(path).to_pandas()
    if fmt == "jsonl":
        return pd.read_json(path, lines=True, dtype=False)
    if fmt == "trec":
        return pd.read_csv(path, sep=" ", header=None,
                           names=["user_id", "q0", "item_id", "rank", "score", "team"])
    return pd.read_csv(path, sep="\t" if fmt == "tsv" else ",")


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "jsonl", "trec"])
def test_make_writes_every_run_format_with_its_teams(run_cli, runs, tmp_path, fmt):
    out = tmp_path / f"lists.{ 'run' if fmt == 'trec' else fmt}"
    r = run_cli("interleave", "make", runs[0], runs[1], "--seed", "3", "-o", out)
    assert r.exit_code == 0, r.stderr
    got = _read(out, fmt)
    lib = interleave.make([str(runs[0]), str(runs[1])], seed=3).table.to_pandas()
    assert got["item_id"].tolist() == lib["item_id"].tolist()
    assert got["team"].tolist() == lib["team"].tolist()
    assert set(got["team"]) == {"a", "b"}
    # each slot's item is its team's highest item not shown above it (team-draft)
    lists = {"a": A, "b": B}
    for (q, rows) in got.groupby("user_id", sort=False):
        shown: list[str] = []
        for item, team in zip(rows["item_id"], rows["team"], strict=True):
            own = lists[team][lists[team]["user_id"] == q]["item_id"].tolist()
            assert item == next(i for i in own if i not in shown)
            shown.append(item)


def test_make_writes_stdout_as_csv_and_is_seeded(run_cli, runs):
    first = run_cli("interleave", "make", *runs[:2], "-o", "-", "--seed", "9")
    again = run_cli("interleave", "make", *runs[:2], "-o", "-", "--seed", "9")
    assert first.exit_code == 0 and first.stdout == again.stdout
    assert first.stdout.splitlines()[0] == "user_id,item_id,rank,team"


def test_make_multileaves_more_runs_and_writes_each_method_its_columns(runs):
    three = interleave.make([str(r) for r in runs], k=3, names=["x", "y", "z"]).table
    assert set(three.column("team").to_pylist()) <= {"x", "y", "z"}
    prob = interleave.make([A, B], method="probabilistic", k=4, tau=2.0).table
    assert {"p_run1", "p_run2", "team"} <= set(prob.column_names)
    chances = np.stack([prob.column("p_run1").to_numpy(), prob.column("p_run2").to_numpy()])
    assert ((chances >= 0) & (chances <= 1)).all()
    team = np.array([0 if t == "run1" else 1 for t in prob.column("team").to_pylist()])
    assert (chances[team, np.arange(len(team))] > 0).all()  # its team could have picked it
    bal = interleave.make([A, B], method="balanced", k=4).table.to_pandas()
    assert "team" not in bal.columns
    for row in bal.itertuples():
        for name, run in (("rank_run1", A), ("rank_run2", B)):
            listed = run[(run.user_id == row.user_id) & (run.item_id == row.item_id)]
            rank = getattr(row, name)
            assert (listed["rank"].iloc[0] == rank) if len(listed) else pd.isna(rank)


@pytest.mark.parametrize(("args", "words"), [
    (["-o", "x.json"], "cannot hold each slot's team"),
    (["-o", "x.run", "--method", "probabilistic"], "a TREC run cannot hold"),
    (["-o", "x.run", "--method", "balanced"], "a TREC run cannot hold"),
    (["--method", "balanced", "C"], "balanced interleaving takes two runs"),
    (["--tau", "0"], "--tau"),
    (["-k", "0"], "-k"),
    (["-o", "A"], "is the input"),
])
def test_make_refuses_in_one_line(run_cli, runs, tmp_path, args, words):
    args = [str(runs[2]) if a == "C" else str(runs[0]) if a == "A" else
            str(tmp_path / a) if a.startswith("x.") else a for a in args]
    r = run_cli("interleave", "make", runs[0], runs[1], *args)
    assert r.exit_code == 2, r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and words in r.stderr
    assert r.stderr.startswith("rankeval: error: ")
    assert A.equals(pd.read_csv(runs[0]))  # never overwritten


# --- score: hand-worked examples and oracles ---------------------------------------------------

def _log(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query", "impression_id", "position", "item_id", "team",
                                       "clicked"])


def _example_13() -> pd.DataFrame:
    """SPEC worked example 13: 7 impressions won by A, 3 by B, 2 ties, 3 without a click."""
    rows = []
    kinds = ["A"] * 7 + ["B"] * 3 + ["tie"] * 2 + ["none"] * 3
    for n, kind in enumerate(kinds):
        imp, q = f"i{n}", f"q{n % 5}"
        clicks = {"A": (1, 0), "B": (0, 1), "tie": (1, 1), "none": (0, 0)}[kind]
        rows += [(q, imp, 1, f"d{n}a", "A", clicks[0]), (q, imp, 2, f"d{n}b", "B", clicks[1])]
    return _log(rows)


def test_worked_example_13_from_a_log(run_cli, write):
    r = run_cli("interleave", "score", write("log.csv", _example_13()), "-f", "json")
    pair = _json(r)["pairs"][0]
    assert (pair["a"], pair["b"]) == ("A", "B")
    assert (pair["wins"], pair["losses"], pair["ties"], pair["no_click"]) == (7, 3, 2, 3)
    assert pair["delta"] == pytest.approx((7 + 1) / 12 - 0.5)
    assert pair["p_value"] == pytest.approx(0.34375)
    assert pair["p_value"] == pytest.approx(binomtest(7, 10, 0.5).pvalue)
    assert pair["ci"][0] < pair["delta"] < pair["ci"][1]


def test_team_draft_credit_of_radlinski_et_al(run_cli, write):
    """Radlinski et al. 2008's rule: each team is credited its own clicked slots; a click on
    an item both lists gives the credit to the team that placed it."""
    rows = [("q", "i1", 1, "b", "B", 1), ("q", "i1", 2, "a", "A", 0),  # B placed b (A's 2nd)
            ("q", "i1", 3, "e", "B", 1), ("q", "i1", 4, "c", "A", 1),
            ("q", "i2", 1, "a", "A", 1), ("q", "i2", 2, "b", "B", 0)]
    pair = _json(run_cli("interleave", "score", write("log.csv", _log(rows)), "-f",
                         "json"))["pairs"][0]
    assert (pair["wins"], pair["losses"], pair["ties"]) == (1, 1, 0)  # i2 won by A, i1 by B


def test_balanced_credit_of_joachims(run_cli, write):
    """The lowest click at rank k (in the list ranking it higher): each ranker credited its
    clicked items in its own top k. Shown b a e c; A = a b c d, B = b a e c; click on e
    (B's 3rd, not in A): k = 3, A's top 3 has none clicked, B's has e: B wins."""
    log = pd.DataFrame({"query": "q", "impression_id": "i", "position": [1, 2, 3, 4],
                        "item_id": list("baec"), "clicked": [0, 0, 1, 0],
                        "rank_A": [2, 1, None, 3], "rank_B": [1, 2, 3, 4]})
    pair = _json(run_cli("interleave", "score", write("log.csv", log), "--method", "balanced",
                         "-f", "json"))["pairs"][0]
    assert (pair["wins"], pair["losses"], pair["ties"]) == (0, 1, 0)


def test_probabilistic_outcome_by_every_assignment(run_cli, write):
    """Hofmann et al. 2011: the expected outcome over every assignment of the slots to the
    rankers, each slot to A with p_A / (p_A + p_B), enumerated by brute force."""
    p_a = [0.7, 0.2, 0.5, 1.0]
    p_b = [0.3, 0.6, 0.5, 0.25]
    clicked = [1, 0, 1, 1]
    log = pd.DataFrame({"query": "q", "impression_id": "i", "position": [1, 2, 3, 4],
                        "item_id": list("wxyz"), "clicked": clicked, "p_A": p_a, "p_B": p_b})
    want = np.zeros(3)
    for who in itertools.product((0, 1), repeat=4):
        chance = np.prod([(pa if w == 0 else pb) / (pa + pb)
                          for w, pa, pb in zip(who, p_a, p_b, strict=True)])
        diff = sum((1 if w == 0 else -1) for w, c in zip(who, clicked, strict=True) if c)
        want[0 if diff > 0 else 1 if diff < 0 else 2] += chance
    pair = _json(run_cli("interleave", "score", write("log.parquet", log), "--method",
                         "probabilistic", "-f", "json"))["pairs"][0]
    assert [pair["wins"], pair["losses"], pair["ties"]] == pytest.approx(list(want))
    assert pair["p_value"] is None  # expected counts: no sign test, JSON never NaN


def test_multileaving_corrects_every_pair(run_cli, write):
    rng = np.random.default_rng(4)
    rows = []
    for n in range(300):
        clicks = rng.random(3) < [0.6, 0.4, 0.3]
        rows += [(f"q{n % 40}", f"i{n}", j + 1, f"d{n}-{j}", t, int(c))
                 for j, (t, c) in enumerate(zip("XYZ", clicks, strict=True))]
    doc = _json(run_cli("interleave", "score", write("log.csv", _log(rows)), "--correction",
                        "holm", "-f", "json"))
    pairs = doc["pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == [("X", "Y"), ("X", "Z"), ("Y", "Z")]
    raw = [binomtest(int(p["wins"]), int(p["wins"] + p["losses"])).pvalue for p in pairs]
    assert [p["p_value"] for p in pairs] == pytest.approx(raw)
    assert [p["p_adjusted"] for p in pairs] == pytest.approx(correct(raw, "holm"))


def test_last_click_and_dwell_decide_what_counts(run_cli, write):
    """Last click: the latest in time; --min-dwell drops short clicks; both named."""
    log = _log([("q", "i1", 1, "a", "A", 1), ("q", "i1", 2, "b", "B", 1),
                ("q", "i1", 3, "c", "B", 1)])
    log["dwell"] = [40.0, 2.0, 3.0]
    log["timestamp"] = [30, 10, 20]  # the top slot was clicked last
    path = write("log.csv", log)
    assert _json(run_cli("interleave", "score", path, "-f", "json"))["pairs"][0]["losses"] == 1
    last = _json(run_cli("interleave", "score", path, "--clicks", "last", "-f", "json"))
    assert last["pairs"][0]["wins"] == 1 and last["clicks"]["rule"] == "last"
    dwell = _json(run_cli("interleave", "score", path, "--min-dwell", "30", "-f", "json"))
    assert dwell["pairs"][0]["wins"] == 1 and dwell["clicks"]["min_dwell"] == 30
    text = run_cli("interleave", "score", path, "--clicks", "last", "--min-dwell", "30")
    assert "--clicks last, --min-dwell 30" in text.stdout


def test_a_ubi_event_log_reads_as_the_slot_log(run_cli, write):
    """OpenSearch UBI's names: query_id (the impression), object_id, ordinal, client_id,
    user_query, action_name (impression rows for the slots, click rows for the clicks)."""
    slots = _example_13()
    events = slots.rename(columns={"impression_id": "query_id", "item_id": "object_id",
                                   "position": "ordinal", "query": "user_query"})
    shown = events.drop(columns="clicked").assign(action_name="impression")
    clicks = events[events["clicked"] == 1].drop(columns="clicked").assign(
        action_name="click")
    ubi = pd.concat([shown, clicks, shown.head(2).assign(action_name="hover")])
    a = _json(run_cli("interleave", "score", write("slots.csv", slots), "-f", "json"))
    b = _json(run_cli("interleave", "score", write("ubi.jsonl", ubi.to_json(
        orient="records", lines=True)), "-f", "json"))
    assert a["pairs"] == b["pairs"]
    assert b["log"]["other_events"] == 2 and b["log"]["columns"]["impression"] == "query_id"


# --- gates and plans ---------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "code", "words"), [
    (["--baseline", "B", "--fail-if-worse"], 0, "passed A is not significantly worse than B"),
    (["--baseline", "A", "--fail-if-worse"], 1, "FAILED B is significantly worse than A"),
    (["--baseline", "A", "--non-inferior", "0.45"], 0, "passed B is shown non-inferior"),
    (["--baseline", "A", "--non-inferior", "0.05"], 1, "FAILED B is not shown non-inferior"),
])
def test_gates_exit_1_only_when_they_fail(run_cli, write, args, code, words):
    rows = []
    for n in range(60):  # A wins 45, B 15
        a, b = (1, 0) if n < 45 else (0, 1)
        rows += [(f"q{n}", f"i{n}", 1, f"x{n}", "A", a), (f"q{n}", f"i{n}", 2, f"y{n}", "B", b)]
    # Delta of A over B = 45/60 - 1/2 = 0.25: B is worse than A
    r = run_cli("interleave", "score", write("log.csv", _log(rows)), *args, "-f", "json")
    assert r.exit_code == code, r.stderr
    assert words in r.stderr
    assert json.loads(r.stdout)["passed"] is (code == 0)


def test_a_gate_is_checked_before_reading(run_cli, tmp_path):
    r = run_cli("interleave", "score", tmp_path / "missing.csv", "--non-inferior", "0.7")
    assert r.exit_code == 2 and "--non-inferior" in r.stderr


def test_the_plan_is_the_analysis_plan(run_cli, write):
    from rankeval.analysis.interleaving import impressions_needed, outcomes

    log = _example_13()
    doc = _json(run_cli("interleave", "score", write("log.csv", log), "--plan", "0.1",
                        "--power", "0.9", "-f", "json"))
    credit = np.array([[int(r.clicked) for r in g.itertuples()]
                       for _, g in log.groupby("impression_id", sort=True)])
    groups = np.array([int(q[1:]) for q in log.groupby("impression_id", sort=True)["query"]
                       .first()])
    want = impressions_needed(outcomes(credit, 0, 1), groups, 0.1, 0.05, 0.9)
    assert doc["pairs"][0]["plan"]["impressions"] == pytest.approx(want.impressions)
    assert doc["plan"] == {"delta": 0.1, "alpha": 0.05, "power": 0.9}


# --- bad logs: one line, exit 2, each class --------------------------------------------------

def _bad(kind: str) -> pd.DataFrame:
    log = _example_13()
    if kind == "no team":
        log.loc[3, "team"] = None
    elif kind == "duplicate position":
        log.loc[1, "position"] = 1
    elif kind == "empty position":
        log["position"] = log["position"].astype("Int64")
        log.loc[3, "position"] = pd.NA
    elif kind == "item twice":
        log.loc[1, "item_id"] = log.loc[0, "item_id"]
    elif kind == "two queries":
        log.loc[1, "query"] = "elsewhere"
    elif kind == "clicked word":
        log["clicked"] = log["clicked"].astype(str)
        log.loc[2, "clicked"] = "maybe"
    elif kind == "no impression column":
        log = log.drop(columns="impression_id")
    elif kind == "empty item":
        log.loc[4, "item_id"] = None
    elif kind == "one team":
        log["team"] = "A"
    elif kind == "negative dwell":
        log["dwell"] = 5.0
        log.loc[0, "dwell"] = -1.0
    elif kind == "two impression columns":
        log["request_id"] = log["impression_id"]
    return log


BAD = {"no team": ("row without a team", "team"),
       "duplicate position": ("1 position shown twice in one impression", "position"),
       "empty position": ("1 empty position, e.g. row 4 ('')", "position"),
       "item twice": ("1 row showing an item twice in one impression", "item_id"),
       "two queries": ("2 rows whose impression is in more than one query", "query"),
       "clicked word": ("clicked value that is not", "clicked"),
       "no impression column": ("no impression column", None),
       "empty item": ("empty id", "item_id"),
       "one team": ("credited to one team", "team"),
       "negative dwell": ("1 dwell value below 0", "dwell"),
       "two impression columns": ("could each be the impression column", None)}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_every_bad_log_is_one_line_and_exit_2(run_cli, write, kind, fmt):
    path = write(f"log.{fmt}", _bad(kind))
    r = run_cli("interleave", "score", path)
    assert r.exit_code == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    words, column = BAD[kind]
    assert len(lines) == 1 and lines[0].startswith(f"rankeval: error: {path}"), r.stderr
    assert words in lines[0], lines[0]
    if column:
        assert f"column '{column}'" in lines[0]


@pytest.mark.parametrize(("value", "words"), [
    ("2.5", "1 position that is not a whole number, e.g. row 2 (2.5)"),
    ("nan", "1 position that is not a finite number"),
    ("inf", "1 position that is not a finite number"),
    ("", "1 empty position, e.g. row 2 ('')"),
    ("1e20", "1 position too large to be exact"),
    ("0x2", "non-numeric"),
])
def test_positions_are_whole_numbers_or_refused(run_cli, write, value, words):
    """A position is a whole number: a fraction, NaN, an infinity, an empty cell, a number
    floats hold inexactly or hexadecimal is refused naming its row, never truncated."""
    rows = ["query,impression_id,position,item_id,team,clicked", "q1,i1,1,a,A,1",
            f"q1,i1,{value},b,B,0", "q2,i2,1,a,B,0", "q2,i2,2,c,A,1"]
    path = write("log.csv", "\n".join(rows) + "\n")
    r = run_cli("interleave", "score", path)
    assert r.exit_code == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "column 'position'" in lines[0], lines


def test_a_click_on_an_item_not_shown(run_cli, write):
    events = pd.DataFrame({"user_query": "shoes", "query_id": ["i1"] * 3,
                           "object_id": ["a", "b", "zz"],
                           "ordinal": [1, 2, 2], "team": ["A", "B", "B"],
                           "action_name": ["impression", "impression", "click"]})
    r = run_cli("interleave", "score", write("ubi.csv", events))
    assert r.exit_code == 2
    assert "1 row with a click on an item the impression did not show" in r.stderr
    assert "row 3 ('i1 zz')" in r.stderr


@pytest.mark.parametrize(("method", "words"), [("probabilistic", "p_<team>"),
                                               ("balanced", "rank_<team>")])
def test_a_method_without_its_columns(run_cli, write, method, words):
    r = run_cli("interleave", "score", write("log.csv", _example_13()), "--method", method)
    assert r.exit_code == 2 and words in r.stderr and len(r.stderr.splitlines()) == 1


def test_min_dwell_without_a_dwell_column(run_cli, write):
    r = run_cli("interleave", "score", write("log.csv", _example_13()), "--min-dwell", "5")
    assert r.exit_code == 2 and "dwell column" in r.stderr


# --- reports -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown", "html"])
def test_every_report_format(run_cli, write, fmt):
    r = run_cli("interleave", "score", write("log.csv", _example_13()), "-f", fmt,
                "--plan", "0.1")
    assert r.exit_code == 0, r.stderr
    text = r.stdout
    assert "nan" not in text.lower().replace("nanosec", "")
    if fmt == "json":
        doc = json.loads(text)
        assert doc["schema"] == 1 and doc["kind"] == "interleave_score"
    elif fmt == "csv":
        frame = pd.read_csv(io.StringIO(text))
        assert frame.loc[0, "delta"] == pytest.approx(1 / 6)
    elif fmt == "html":
        assert "<svg" in text and "wins A" in text and "Delta" in text
    else:
        assert "+0.1667" in text and "--clicks all" in text


def test_the_step_summary_holds_the_markdown(run_cli, write, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = run_cli("interleave", "score", write("log.csv", _example_13()))
    assert r.exit_code == 0, r.stderr
    assert "+0.1667" in summary.read_text()


# --- simulate ----------------------------------------------------------------------------------

def test_simulate_reports_delta_spread_plan_and_offline_metrics(run_cli, write, runs):
    qrels = write("qrels.csv", pd.DataFrame({"user_id": ["q1", "q1", "q2", "q2"],
                                             "item_id": ["b", "e", "z", "w"],
                                             "relevance": [3, 2, 4, 2]}))
    args = ["interleave", "simulate", runs[0], runs[1], qrels, "--trials", "30",
            "--impressions", "200", "--seed", "1", "-f", "json"]
    doc = _json(run_cli(*args))
    pair = doc["pairs"][0]
    assert pair["delta"] < 0  # b ranks the relevant items first: users prefer b
    assert pair["spread"] > 0 and pair["agree"] == 1.0
    assert doc["offline"]["b"]["ndcg@10"] > doc["offline"]["a"]["ndcg@10"]
    assert doc["click_model"]["name"] == "cascade" and doc["click_model"]["stop"] == [1.0] * 5
    assert _json(run_cli(*args)) == doc  # seeded
    for model in ("pbm", "dcm"):
        other = _json(run_cli(*args[:-2], "--click-model", model, "-f", "json"))
        assert other["pairs"][0]["delta"] < 0
    three = _json(run_cli("interleave", "simulate", *runs, qrels, "--trials", "5", "-f",
                          "json"))
    assert len(three["pairs"]) == 3


@pytest.mark.parametrize(("args", "words"), [
    (["--click-model", "pbm", "--stop", "1,1,1,1,1"], "--stop"),
    (["--click", "0.1,x"], "--click"),
    (["--click", "0.1,0.2"], "grades 0 to 1"),
    (["--impressions", "10000000", "--trials", "1000"], "200,000,000"),
])
def test_simulate_refuses_in_one_line(run_cli, write, runs, args, words):
    qrels = write("qrels.csv", pd.DataFrame({"user_id": ["q1"], "item_id": ["b"],
                                             "relevance": [4]}))
    r = run_cli("interleave", "simulate", runs[0], runs[1], qrels, *args)
    assert r.exit_code == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("column", "value", "method", "words"), [
    ("p_A", 1.5, "probabilistic", "1 value outside [0, 1] (chances)"),
    ("p_A", None, "probabilistic", "empty value"),
    ("rank_A", 0, "balanced", "1 rank below 1 or not a number"),
])
def test_a_per_ranker_column_out_of_range(run_cli, write, column, value, method, words):
    log = _example_13().drop(columns="team")
    log["p_A"], log["p_B"] = 0.5, 0.5
    log["rank_A"], log["rank_B"] = log["position"], log["position"]
    log[column] = log[column].astype(float)
    log.loc[3, column] = value
    path = write("log.csv", log)
    r = run_cli("interleave", "score", path, "--method", method)
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert words in r.stderr and f"column '{column}'" in r.stderr


def test_a_team_without_its_per_ranker_column(run_cli, write):
    log = _example_13()
    log["p_A"], log["p_C"] = 0.5, 0.5
    r = run_cli("interleave", "score", write("log.csv", log), "--method", "probabilistic")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "teams ['B'] have no p_<team> column" in r.stderr and "column 'team'" in r.stderr


def test_by_user_groups_impressions_by_their_user(run_cli, write):
    log = _example_13()
    log["user_id"] = [f"u{i // 4}" for i in range(len(log))]
    doc = _json(run_cli("interleave", "score", write("log.csv", log), "--by", "user", "-f",
                        "json"))
    assert doc["group_by"] == "user" and doc["log"]["groups"] == log["user_id"].nunique()
    log.loc[1, "user_id"] = "someone else"  # one impression, two users
    r = run_cli("interleave", "score", write("bad.csv", log), "--by", "user")
    assert r.exit_code == 2 and "impression is in more than one user" in r.stderr


def test_the_preference_matrix_and_the_trajectory(run_cli, write):
    rng = np.random.default_rng(4)
    rows = []
    for n in range(300):
        clicks = rng.random(3) < [0.6, 0.4, 0.3]
        rows += [(f"q{n % 40}", f"i{n:03d}", j + 1, f"d{n}-{j}", t, int(c))
                 for j, (t, c) in enumerate(zip("XYZ", clicks, strict=True))]
    path = write("log.csv", _log(rows))
    doc = _json(run_cli("interleave", "score", path, "-f", "json"))
    text = run_cli("interleave", "score", path).stdout
    matrix = text[text.index("Preference matrix"):].splitlines()
    for p in doc["pairs"]:
        star = "*" if p["p_adjusted"] < 0.05 else ""
        row_a = next(line for line in matrix if line.startswith(p["a"] + " "))
        row_b = next(line for line in matrix if line.startswith(p["b"] + " "))
        assert f"{p['delta']:+.4f}{star}" in row_a and f"{-p['delta']:+.4f}{star}" in row_b
    path_points = doc["trajectory"]
    assert [t["impressions"] for t in path_points] == sorted(t["impressions"] for t in
                                                              path_points)
    last, first_pair = path_points[-1], doc["pairs"][0]
    assert last["impressions"] == 300 and last["delta"] == first_pair["delta"]
    assert last["ci"] == first_pair["ci"]
    # the first checkpoint: the impressions first in the log, judged alone
    first = path_points[0]["impressions"]
    head = _json(run_cli("interleave", "score", write("head.csv", _log(rows[:3 * first])),
                         "-f", "json"))["pairs"][0]
    assert path_points[0]["delta"] == pytest.approx(head["delta"])
    page = run_cli("interleave", "score", path, "-f", "html").stdout
    assert page.count("<svg") == 4  # three pairs' bars and the trajectory


def test_the_committed_sample_is_its_generators_output(tmp_path):
    """sample_data/make_interleaving.py, run again, writes the committed files byte for byte
    (the docs' example reads them)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "sample_data" / "make_interleaving.py"
    spec = importlib.util.spec_from_file_location("make_interleaving", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.HERE = tmp_path
    module.main()
    for name in ("interleave_main.csv", "interleave_candidate.csv", "interleave_qrels.csv",
                 "interleave_clicks.csv"):
        assert (tmp_path / name).read_bytes() == (path.parent / name).read_bytes(), name


@pytest.mark.parametrize(("args", "words"), [
    (["--by", "user"], "no user column"),
    (["--column", "colour=x"], "no column role 'colour'"),
    (["--column", "impression=nothing"], "no column 'nothing'"),
    (["--column", "impression"], "expected ROLE=NAME"),
])
def test_the_grouping_and_the_columns_are_never_guessed(run_cli, write, args, words):
    r = run_cli("interleave", "score", write("log.csv", _example_13()), *args)
    assert r.exit_code == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_ubi_events_with_nested_attributes_read_as_their_flat_form(tmp_path):
    """OpenSearch UBI writes an event's object and position nested in event_attributes: read
    as dotted columns, the nested log gives what its flattened CSV gives."""
    import json

    import rankeval

    rows = []
    for imp in range(40):
        for pos in range(1, 5):
            team = "a" if (pos + imp) % 2 else "b"
            event = {"query_id": f"i{imp}", "user_query": f"q{imp % 8}", "team": team,
                     "event_attributes": {"object": {"object_id": f"d{imp}_{pos}"},
                                          "position": {"ordinal": pos}}}
            rows.append({"action_name": "impression", **event})
            if (imp * 7 + pos * 3) % (4 if team == "a" else 6) == 0:
                rows.append({"action_name": "click", **event})
    nested = tmp_path / "ubi.jsonl"
    nested.write_text("".join(json.dumps(r) + "\n" for r in rows))
    flat = tmp_path / "ubi.csv"
    lines = ["action_name,query_id,user_query,team,event_attributes.object.object_id,"
             "event_attributes.position.ordinal"]
    lines += [f"{r['action_name']},{r['query_id']},{r['user_query']},{r['team']},"
              f"{r['event_attributes']['object']['object_id']},"
              f"{r['event_attributes']['position']['ordinal']}" for r in rows]
    flat.write_text("\n".join(lines) + "\n")
    a = rankeval.interleave.score(str(nested), seed=1)
    b = rankeval.interleave.score(str(flat), seed=1)
    assert [p.to_dict() for p in a.pairs] == [p.to_dict() for p in b.pairs]
    assert a.log["impressions"] == 40 and a.log["clicks"] > 5


# OpenSearch's names for an interleaved hit's team and item: search-relevance's A/B test search
# (ab_tests/{id}/_search) tags each hit with `_search_configuration_id`; the Search Relevance
# dashboards' click events nest the item and team under event_attributes.object
OPENSEARCH_NAMES = [({"team": "_search_configuration_id"}, "csv"),
                    ({"team": "search_configuration_id"}, "csv"),
                    ({"team": "search_configuration_uuid"}, "csv"),
                    ({"team": "event_attributes.object.search_configuration_uuid",
                      "item_id": "event_attributes.object.id"}, "csv"),
                    ({"team": "event_attributes.object.search_configuration_uuid",
                      "item_id": "event_attributes.object.id"}, "jsonl")]


@pytest.mark.parametrize(("names", "fmt"), OPENSEARCH_NAMES)
def test_opensearch_ab_test_names_read_as_the_team_and_the_item(tmp_path, names, fmt):
    import rankeval

    slots = _example_13()
    plain = tmp_path / "slots.csv"
    slots.to_csv(plain, index=False)
    named = slots.rename(columns=names)
    path = tmp_path / f"named.{fmt}"
    if fmt == "jsonl":  # nested as the dashboards write it: {"event_attributes": {"object": …}}
        rows = []
        for row in named.to_dict(orient="records"):
            nested: dict = {}
            for key, value in row.items():
                *parents, leaf = key.split(".")
                node = nested
                for part in parents:
                    node = node.setdefault(part, {})
                node[leaf] = value
            rows.append(nested)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        named.to_csv(path, index=False)
    a = rankeval.interleave.score(str(plain), seed=1)
    b = rankeval.interleave.score(str(path), seed=1)
    assert [p.to_dict() for p in b.pairs] == [p.to_dict() for p in a.pairs]
    assert b.log["columns"]["team"] == names["team"]


def test_the_command_page_lists_every_column_name():
    from rankeval.io.interleave_log import LOG_COLUMNS

    from .conftest import ROOT

    page = (ROOT / "docs" / "commands" / "interleave.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in page.splitlines()
            if line.startswith("| ") and line.count("|") == 3}
    for role, column in LOG_COLUMNS.items():
        assert role in rows, role
        for name in (column.default, *column.aliases):
            assert f"`{name}`" in rows[role], (role, name)


# --- the HTML page as drawn --------------------------------------------------------------------

def _text_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """Each <text>'s box (label, x0, y0, x1, y1), its width estimated generously (0.62 em a
    character), placed by its text-anchor; 0.2 em below the baseline."""
    import re

    boxes = []
    for attrs, label in re.findall(r"<text ([^>]*)>([^<]*)</text>", svg):
        a = dict(re.findall(r'([\w-]+)="([^"]*)"', attrs))
        size = float(a.get("font-size", 9))
        w = 0.62 * size * len(label)
        x0 = float(a["x"]) - {"start": 0, "middle": w / 2, "end": w}[a.get("text-anchor",
                                                                         "start")]
        y1 = float(a["y"])
        boxes.append((label, x0, y1 - size, x0 + w, y1 + 0.2 * size))
    return boxes


def _no_overlap(svg: str) -> None:
    import re

    view = [float(v) for v in re.search(r'viewBox="([^"]+)"', svg).group(1).split()]
    boxes = _text_boxes(svg)
    for label, x0, y0, x1, y1 in boxes:
        assert view[0] <= x0 and x1 <= view[0] + view[2], label
        assert view[1] <= y0 and y1 <= view[1] + view[3], label
    for i, (la, ax0, ay0, ax1, ay1) in enumerate(boxes):
        for lb, bx0, by0, bx1, by1 in boxes[i + 1:]:
            assert ax1 <= bx0 or bx1 <= ax0 or ay1 <= by0 or by1 <= ay0, (la, lb)


@pytest.mark.parametrize("spread", [0.04, 0.44, 3.0])
def test_the_pages_charts_keep_their_labels_apart(write, spread):
    """The trajectory's lowest y label ran into its first x label ("-0.44" over "0") at the
    plot's corner; every label of the bars and the trajectory has a box of its own."""
    from types import SimpleNamespace

    from rankeval.report.interleaving import bars, trajectory_svg

    result = interleave.score(write("log.csv", _example_13()))
    assert result.trajectory
    _no_overlap(trajectory_svg(result))
    for _, svg in bars(result):
        _no_overlap(svg)
    wide = SimpleNamespace(pairs=result.pairs, trajectory=[
        (n, spread / 2, -spread, spread) for n in (10, 1_000, 123_456)])
    _no_overlap(trajectory_svg(wide))


@pytest.mark.parametrize("command", ["score", "simulate"])
def test_the_pages_notes_stand_apart(run_cli, write, runs, command):
    """A section's notes were joined by spaces into one run-on paragraph ("... seed 1 click
    model cascade: ...")."""
    if command == "score":
        r = run_cli("interleave", "score", write("log.csv", _example_13()), "-f", "html")
        notes = ["team-draft interleaving; clicks counted: all clicks (--clicks all)",
                 "an impression is a win for A"]
    else:
        qrels = write("qrels.csv", pd.DataFrame({"user_id": ["q1", "q2"], "item_id": ["b", "z"],
                                                 "relevance": [3, 4]}))
        r = run_cli("interleave", "simulate", runs[0], runs[1], qrels, "--trials", "3",
                    "-f", "html")
        notes = ["seed 0", "click model cascade"]
    assert r.exit_code == 0, r.stderr
    first, second = notes
    at = r.stdout.index(first) + len(first)
    between = r.stdout[at:r.stdout.index(second, at)]
    assert between in ("<br>", '</p><p class="note">'), between


# Each method's name in the reports, for two rankers and for more: a row per method, so a new
# method needs its names (score's report once read "team-draft multileaving interleaving",
# simulate's "team-draft interleaving" over three runs)
NAMES = {"team-draft": ("team-draft interleaving", "team-draft multileaving"),
         "balanced": ("balanced interleaving", None),
         "probabilistic": ("probabilistic interleaving", "probabilistic multileaving")}


def test_every_method_has_its_names():
    assert tuple(NAMES) == INTERLEAVE_METHODS


def _method_log(method: str, teams: str) -> pd.DataFrame:
    """A log of 40 impressions, a slot per team, its per-method columns."""
    rng = np.random.default_rng(2)
    rows = []
    for n in range(40):
        clicks = rng.random(len(teams)) < 0.5
        for j, t in enumerate(teams):
            row = {"query": f"q{n % 8}", "impression_id": f"i{n}", "position": j + 1,
                   "item_id": f"d{n}-{j}", "clicked": int(clicks[j])}
            if method == "team-draft":
                row["team"] = t
            for i, u in enumerate(teams):
                if method == "balanced":
                    row[f"rank_{u}"] = (j + i) % len(teams) + 1
                if method == "probabilistic":
                    row[f"p_{u}"] = 0.8 if u == t else 0.2
            rows.append(row)
    return pd.DataFrame(rows)


# Every method with the rankers it takes: two, and three where it multileaves
METHOD_TEAMS = [(m, t) for m in INTERLEAVE_METHODS for t in ("AB", "ABC")
                if len(t) == 2 or NAMES[m][1] is not None]


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
@pytest.mark.parametrize(("method", "teams"), METHOD_TEAMS)
@pytest.mark.parametrize("command", ["score", "simulate"])
def test_every_report_names_the_method_once(run_cli, write, runs, command, method, teams,
                                            fmt):
    two, more = NAMES[method]
    if command == "score":
        r = run_cli("interleave", "score", write("log.csv", _method_log(method, teams)),
                    "--method", method, "--rounds", "100", "-f", fmt)
    else:
        qrels = write("qrels.csv", pd.DataFrame({"user_id": ["q1", "q2"], "item_id": ["b", "z"],
                                                 "relevance": [3, 4]}))
        r = run_cli("interleave", "simulate", *runs[:len(teams)], qrels, "--method", method,
                    "--trials", "2", "--impressions", "20", "-f", fmt)
    assert r.exit_code == 0, r.stderr
    assert (more if len(teams) > 2 else two) in r.stdout
    assert not re.search(r"(interleaving|multileaving) (interleaving|multileaving)", r.stdout)
