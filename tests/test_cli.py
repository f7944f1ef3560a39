"""The command line: exit codes, what goes to stdout and stderr, every output format."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest

from rankeval import evaluate

from .conftest import SAMPLE

PREDS = str(SAMPLE / "preds.csv")
TRUTH = str(SAMPLE / "truth.csv")


def test_default_table_shows_metrics_k_columns_and_user_counts(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--k", "5,10")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["metric", "@5", "@10"]
    names = [line.split()[0] for line in lines[1:7]]
    assert names == ["precision", "recall", "hit_rate", "mrr", "map", "ndcg"]
    assert "298 evaluated" in r.stdout
    assert "warning" not in r.stdout
    assert "2 truth users have no relevant item" in r.stderr
    assert "3 users have relevant items but no predictions" in r.stderr


def test_table_values_match_the_library(run_cli):
    expected = evaluate(PREDS, TRUTH, ["ndcg"], [10]).metrics["ndcg@10"]
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10")
    row = next(line for line in r.stdout.splitlines() if line.startswith("ndcg"))
    assert float(row.split()[1]) == pytest.approx(expected, abs=5e-5)


def test_json_report_keys_and_full_precision(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--k", "5", "--k", "10", "-f", "json")
    assert r.exit_code == 0
    report = r.json()
    for key in ("rankeval", "schema", "k", "settings", "inputs", "users", "metrics", "warnings"):
        assert key in report
    assert report["k"] == [5, 10]
    names = ("precision", "recall", "hit_rate", "mrr", "map", "ndcg")
    assert set(report["metrics"]) == {f"{m}@{k}" for m in names for k in (5, 10)}
    lib = evaluate(PREDS, TRUTH, None, [5, 10])
    assert report["metrics"] == lib.metrics  # exact: full-precision floats
    assert report["users"] == {
        "evaluated": 298,
        "in_truth": 300,
        "in_predictions": 297,
        "without_relevant": 2,
        "without_predictions": 3,
        "only_in_predictions": 0,
    }
    assert report["inputs"]["predictions"]["path"] == PREDS
    assert report["inputs"]["truth"]["format"] == "csv"
    assert report["settings"]["gain"] == "linear"
    # users without relevant items, users without predictions, and graded gains by default
    assert len(report["warnings"]) == 3
    # Warnings are in the JSON and on stderr, never mixed into stdout's JSON text.
    assert r.stderr.count("warning") == 3


def test_csv_and_markdown_reports(run_cli):
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg,mrr", "--k", "3,5", "-f", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["metric"] for row in rows] == ["ndcg@3", "ndcg@5", "mrr@3", "mrr@5"]
    assert {row["name"] for row in rows} == {"ndcg", "mrr"}
    md = run_cli("score", PREDS, TRUTH, "-m", "ndcg", "--k", "3,5", "-f", "markdown")
    assert md.exit_code == 0
    assert "| ndcg |" in md.stdout.replace("`", "")


def test_output_file_and_quiet(run_cli, tmp_path):
    out = tmp_path / "report.json"
    r = run_cli("score", PREDS, TRUTH, "-f", "json", "-o", out, "--quiet")
    assert r.exit_code == 0
    assert r.stdout == ""
    assert r.stderr == ""
    assert json.loads(out.read_text())["users"]["evaluated"] == 298


def test_per_user_csv_parquet_and_stdout(run_cli, tmp_path):
    r = run_cli("score", PREDS, TRUTH, "--per-user", tmp_path / "u.csv", "--quiet")
    assert r.exit_code == 0
    frame = pd.read_csv(tmp_path / "u.csv", dtype={"user_id": str})
    assert len(frame) == 298
    assert frame.columns[0] == "user_id"
    run_cli("score", PREDS, TRUTH, "--per-user", tmp_path / "u.parquet", "--quiet")
    pd.testing.assert_frame_equal(frame, pd.read_parquet(tmp_path / "u.parquet"), check_dtype=False)

    piped = run_cli("score", PREDS, TRUTH, "--per-user", "-", "--quiet")
    assert piped.exit_code == 0
    assert pd.read_csv(io.StringIO(piped.stdout), dtype={"user_id": str}).equals(frame)
    assert "metric" in piped.stderr  # the human table moved to stderr
    clash = run_cli("score", PREDS, TRUTH, "--per-user", "-", "-f", "json")
    assert clash.exit_code == 2
    assert "-o FILE" in clash.stderr


def test_stdin_is_read_by_its_content_or_its_format(run_cli):
    text = (SAMPLE / "preds.csv").read_text()
    sniffed = run_cli("score", "-", TRUTH, "-f", "json", "--quiet", input=text)
    assert sniffed.exit_code == 0, sniffed.stderr
    ok = run_cli("score", "-", TRUTH, "--preds-format", "csv", "-f", "json", "--quiet", input=text)
    assert ok.exit_code == 0
    assert ok.json()["inputs"]["predictions"]["path"] == "-"
    assert sniffed.json()["metrics"] == ok.json()["metrics"]
    truth_text = (SAMPLE / "truth.csv").read_text()
    ok2 = run_cli("score", PREDS, "-", "--truth-format", "csv", "--quiet", input=truth_text)
    assert ok2.exit_code == 0
    both = run_cli("score", "-", "-", "--preds-format", "csv", "--truth-format", "csv", input="")
    assert both.exit_code == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "ndgc"], "did you mean 'ndcg'"),
        (["--k", "0"], "positive integer"),
        (["--k", "ten"], "positive integer"),
        (["-m", "ndcg@-1"], "positive integer"),
        (["--gain", "cubic"], "Invalid value for '--gain'"),
        (["--relevance-threshold", "-1"], "relevance-threshold"),
        (["--nope"], "No such option"),
        (["-f", "xml"], "Invalid value"),
    ],
)
def test_usage_errors_exit_2_with_one_line(run_cli, args, message):
    r = run_cli("score", PREDS, TRUTH, *args)
    assert r.exit_code == 2
    assert message in r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("preds", "truth", "message"),
    [
        ("user_id,item_id,rank\nu1,A,1\nu1,A,2\n", None, "listed more than once"),
        ("user_id,item_id,rank\nu1,A,1\nu1,B,1\n", None, "column 'rank': 1 rank repeated"),
        ("user_id,item_id,rank\nu1,A,0\n", None, "1 rank below 1"),
        ("user_id,item_id,rank\nu1,A,1.5\n", None, "1 rank that is not a whole number"),
        ("user_id,item_id,score\nu1,A,nan\n", None, "1 NaN value,"),
        ("user_id,item_id,score\nu1,A,inf\n", None, "1 infinite value,"),
        ("uid,iid\nu1,A\n", None, "no user column"),
        (None, "user_id,item_id,relevance\nu1,A,high\n", "1 non-numeric value, e.g. row 1"),
        (None, "user_id,item_id,relevance\nu1,A,1\nu1,A,1\n", "listed more than once"),
        (None, "user_id,item_id,relevance\nu1,A,0\n", "no user"),
    ],
)
def test_input_errors_exit_2_naming_the_file(run_cli, write, preds, truth, message):
    p = write("p.csv", preds or "user_id,item_id,rank\nu1,A,1\n")
    t = write("t.csv", truth or "user_id,item_id,relevance\nu1,A,1\n")
    r = run_cli("score", p, t)
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"rankeval: error: {p if preds else t}")
    assert message in lines[0]


@pytest.mark.parametrize("run_error", [
    "user_id,item_id,rank\nu1,A,1\nu1,A,2\n",  # a repeated pair
    "user_id,item_id,rank\nu1,A,1\nu1,B,1\n",  # a repeated rank
])
def test_the_truths_repeats_are_told_before_the_runs_errors(run_cli, write, run_error):
    """The run's lists are built while the truth's pairs are sorted on the other core: an
    error in the lists still waits for the truth's, which was read first."""
    p = write("p.csv", run_error)
    t = write("t.csv", "user_id,item_id,relevance\nu1,A,1\nu1,A,1\n")
    r = run_cli("score", p, t)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"rankeval: error: {t}")
    assert "listed more than once" in r.stderr
    clean = run_cli("score", p, write("t2.csv", "user_id,item_id,relevance\nu1,A,1\n"))
    assert clean.exit_code == 2 and clean.stderr.startswith(f"rankeval: error: {p}")


def test_dedupe_turns_the_duplicate_error_into_a_counted_warning(run_cli, write):
    p = write("p.csv", "user_id,item_id,rank\nu1,B,1\nu1,A,2\nu1,B,3\n")
    t = write("t.csv", "user_id,item_id,relevance\nu1,A,1\n")
    r = run_cli("score", p, t, "--dedupe", "-m", "mrr@2", "-f", "json")
    assert r.exit_code == 0
    assert r.json()["metrics"]["mrr@2"] == 0.5
    assert "1 repeated (user, item) row in" in r.stderr


def test_options_change_the_numbers_and_are_recorded(run_cli):
    args = ["score", PREDS, TRUTH, "-m", "ndcg,map,mrr", "-f", "json", "--quiet"]
    base = run_cli(*args).json()
    other = run_cli(
        *args, "--gain", "exponential", "--ap-denominator", "relevant",
        "--rr-target", "most-relevant", "--relevance-threshold", "2",
        "--skip-missing-users", "--zero-relevant-users", "zero",
    ).json()
    for name in ("ndcg@10", "map@10", "mrr@10"):
        assert base["metrics"][name] != other["metrics"][name]
    assert other["settings"]["gain"] == "exponential"
    assert other["settings"]["ap_denominator"] == "relevant"
    assert other["settings"]["rr_target"] == "most-relevant"
    assert other["settings"]["relevance_threshold"] == 2
    assert other["settings"]["skip_missing_users"] is True
    assert other["settings"]["zero_relevant_users"] == "zero"


def test_metrics_command_lists_the_registry(run_cli):
    from rankeval.registry import REGISTRY

    table = run_cli("metrics")
    assert table.exit_code == 0
    for name in REGISTRY:
        assert name in table.stdout
    listed = run_cli("metrics", "-f", "json").json()
    assert [m["name"] for m in listed] == list(REGISTRY)
    assert all(m["summary"] and m["formula"] for m in listed)


def test_help_teaches_with_examples_and_version(run_cli):
    assert "Examples:" in run_cli("score", "--help").stdout
    top = run_cli("--help")
    assert top.exit_code == 0
    assert "Exit codes" in top.stdout
    from rankeval import __version__

    assert __version__ in run_cli("--version").stdout


def test_unexpected_errors_are_one_line_exit_2(run_cli, monkeypatch):
    import rankeval.engines.finish

    def boom(*a, **k):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(rankeval.engines.finish, "evaluate_inputs", boom)
    r = run_cli("score", PREDS, TRUTH)
    assert r.exit_code == 2
    assert "internal error: ZeroDivisionError: boom" in r.stderr
    assert "Traceback" not in r.stderr
    debug = run_cli("score", PREDS, TRUTH, "--debug")
    assert "Traceback" in debug.stderr
    assert debug.exit_code == 2


def test_exit_code_1_is_never_used_for_errors(run_cli, write):
    """Exit 1 means 'a quality gate failed'; errors of every kind must be 2."""
    bad = write("bad.csv", "nonsense")
    for args in (["score"], ["score", bad, bad], ["nope"], ["score", PREDS, TRUTH, "--k"]):
        assert run_cli(*args).exit_code == 2, args


def test_out_of_memory_is_a_one_line_error(run_cli, monkeypatch):
    import rankeval.engines.finish

    def exhausted(*a, **k):
        raise MemoryError

    monkeypatch.setattr(rankeval.engines.finish, "evaluate_inputs", exhausted)
    r = run_cli("score", PREDS, TRUTH)
    assert r.exit_code == 2
    assert r.stderr.startswith("rankeval: error: out of memory")
    assert "Traceback" not in r.stderr
