"""Quality gates: every exit path, the baseline comparison, config files, CI artifacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from rankeval.analysis.gates import show_pair
from rankeval.report.markdown import cell

from .conftest import ROOT, SAMPLE

PREDS = str(SAMPLE / "preds.csv")
TRUTH = str(SAMPLE / "truth.csv")
NDCG10 = 0.33914020815731394  # the sample data's ndcg@10 (checked below, not assumed)


@pytest.fixture
def baseline(run_cli, tmp_path):
    """A baseline report of the sample data, with every metric raised by ``bump``."""

    def make(bump: float = 0.0, **settings) -> str:
        r = run_cli("score", PREDS, TRUTH, "-f", "json", "--quiet")
        report = r.json()
        assert report["metrics"]["ndcg@10"] == NDCG10
        report["metrics"] = {m: v + bump for m, v in report["metrics"].items()}
        report["settings"].update(settings)
        path = tmp_path / f"base{bump}.json"
        path.write_text(json.dumps(report))
        return str(path)

    return make


def test_passing_gates_exit_0_and_are_reported(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.30", "--fail-under",
                "map@10>=0.1", "-f", "json")
    assert r.exit_code == 0
    gates = r.json()["gates"]
    assert [(g["metric"], g["op"], g["threshold"], g["passed"]) for g in gates] == [
        ("ndcg@10", ">=", 0.30, True), ("map@10", ">=", 0.1, True)]
    assert gates[0]["value"] == NDCG10
    assert r.json()["passed"] is True
    assert "passed ndcg@10 = 0.3391 >= 0.3000" in r.stderr


def test_a_failing_gate_exits_1_after_the_full_report(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.35")
    assert r.exit_code == 1
    assert "ndcg" in r.stdout and "users:" in r.stdout  # the whole report is still printed
    assert "FAILED" in r.stdout
    assert "rankeval: FAILED ndcg@10 = 0.3391 < 0.3500" in r.stderr
    quiet = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.35", "--quiet",
                    "--fail-under", "mrr@10=0.1")
    assert quiet.exit_code == 1
    assert quiet.stderr.strip() == "rankeval: FAILED ndcg@10 = 0.3391 < 0.3500"


def test_fail_over(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--fail-over", "precision@10=0.1", "-f", "json")
    assert r.exit_code == 1
    assert r.json()["gates"][0]["op"] == "<="
    assert run_cli("score", PREDS, TRUTH, "--fail-over", "precision@10<=0.5").exit_code == 0


def test_the_verdict_and_the_printed_digits_agree():
    assert show_pair(0.34999996, 0.35) == ("0.34999996", "0.35000000")
    assert show_pair(0.35, 0.35) == ("0.3500", "0.3500")
    assert show_pair(0.3412, 0.35) == ("0.3412", "0.3500")
    a, b = show_pair(0.1 + 0.2, 0.3)
    assert a != b


def test_threshold_at_exactly_the_value_passes(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--fail-under", f"ndcg@10={NDCG10!r}")
    assert r.exit_code == 0
    nudged = run_cli("score", PREDS, TRUTH, "--fail-under", f"ndcg@10={NDCG10 + 1e-12!r}")
    assert nudged.exit_code == 1
    assert "0.339140208157" in nudged.stderr  # enough digits to see why


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-under", "ndcg@5=0.3"], "ndcg@5 is not computed by this run"),
        (["--fail-under", "ndgc@10=0.3"], "did you mean 'ndcg'"),
        (["--fail-under", "ndcg@10=1.5"], "lies in [0, 1]"),
        (["--fail-under", "ndcg@10=-0.1"], "lies in [0, 1]"),
        (["--fail-under", "ndcg@10=high"], "is not a number"),
        (["--fail-under", "ndcg@10"], "expected METRIC=VALUE"),
        (["--fail-under", "ndcg@10<=0.3"], "use >= (or =)"),
        (["--max-drop", "1%"], "--max-drop needs --baseline"),
        (["--baseline", "nope.json"], "no such file"),
    ],
)
def test_bad_gates_are_exit_2_before_reading_data(run_cli, args, message):
    r = run_cli("score", "missing-preds.csv", "missing-truth.csv", *args)
    assert r.exit_code == 2
    assert message in r.stderr, r.stderr
    assert "missing-preds.csv" not in r.stderr  # refused before any data is read


def test_baseline_absolute_and_relative_drops(run_cli, baseline):
    higher = baseline(bump=0.005)  # every metric was 0.005 higher on main
    ok = run_cli("score", PREDS, TRUTH, "--baseline", higher, "--max-drop", "ndcg@10=0.01",
                 "-f", "json")
    assert ok.exit_code == 0
    report = ok.json()
    assert report["baseline"]["delta"]["ndcg@10"] == pytest.approx(-0.005)
    gate = report["gates"][0]
    assert gate["kind"] == "max_drop"
    assert gate["threshold"] == pytest.approx(NDCG10 + 0.005 - 0.01)
    assert gate["baseline"] == pytest.approx(NDCG10 + 0.005)

    too_far = run_cli("score", PREDS, TRUTH, "--baseline", higher, "--max-drop", "ndcg@10=0.001")
    assert too_far.exit_code == 1
    assert "FAILED ndcg@10" in too_far.stderr
    assert "max drop 0.001" in too_far.stderr

    # 0.005 / 0.344 is 1.45%: a 1% limit fails, a 2% limit passes.
    assert run_cli("score", PREDS, TRUTH, "--baseline", higher, "--max-drop",
                   "ndcg@10=1%").exit_code == 1
    assert run_cli("score", PREDS, TRUTH, "--baseline", higher, "--max-drop",
                   "ndcg@10=2%").exit_code == 0


def test_global_max_drop_covers_every_shared_metric(run_cli, baseline):
    r = run_cli("score", PREDS, TRUTH, "--baseline", baseline(bump=0.0), "--max-drop", "1%",
                "-f", "json")
    assert r.exit_code == 0
    metrics = [g["metric"] for g in r.json()["gates"]]
    assert sorted(metrics) == sorted(r.json()["metrics"])
    table = run_cli("score", PREDS, TRUTH, "--baseline", baseline(bump=0.1), "--max-drop", "1%")
    assert table.exit_code == 1
    assert "baseline" in table.stdout and "delta" in table.stdout
    assert "-0.1000" in table.stdout


def test_a_baseline_with_other_settings_is_refused_unless_allowed(run_cli, baseline):
    other = baseline(gain="exponential")
    r = run_cli("score", PREDS, TRUTH, "--baseline", other, "--max-drop", "1%")
    assert r.exit_code == 2
    assert "gain 'exponential' -> 'linear'" in r.stderr
    assert "--allow-settings-change" in r.stderr
    allowed = run_cli("score", PREDS, TRUTH, "--baseline", other, "--max-drop", "1%",
                      "--allow-settings-change")
    assert allowed.exit_code == 0


def test_max_drop_on_a_metric_missing_from_the_baseline(run_cli, baseline):
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@5", "--baseline", baseline(),
                "--max-drop", "ndcg@5=0.01")
    assert r.exit_code == 2
    assert "ndcg@5 is not in the baseline" in r.stderr


def test_junit_xml_has_a_test_case_per_gate(run_cli, tmp_path, baseline):
    path = tmp_path / "gates.xml"
    r = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.35", "--fail-under",
                "mrr@10=0.5", "--junit", path, "--quiet")
    assert r.exit_code == 1
    suite = ET.parse(path).getroot()
    assert suite.tag == "testsuite"
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["ndcg@10 >= 0.3500", "mrr@10 >= 0.5000"]
    failure = cases[0].find("failure")
    assert failure is not None and "FAILED ndcg@10 = 0.3391 < 0.3500" in failure.get("message")
    assert cases[1].find("failure") is None


def test_markdown_summary_matches_the_golden_file(run_cli, baseline, tmp_path):
    base = baseline(bump=0.01)
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg,mrr", "--k", "5,10", "--fail-under",
                "ndcg@10=0.3", "--baseline", base, "--max-drop", "mrr@10=1%", "-f", "markdown",
                "--quiet")
    assert r.exit_code == 1
    # the warnings name the truth's path, as a Markdown cell shows it
    text = r.stdout.replace(base, "BASELINE.json").replace(cell(TRUTH), "TRUTH.csv")
    golden = ROOT / "tests" / "golden" / "gates.md"
    if os.environ.get("RANKEVAL_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_github_step_summary_is_appended(run_cli, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.3", "--quiet")
    assert r.exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert "rankeval: the gate passed" in text


def test_config_file_and_flag_override(run_cli, tmp_path, baseline, monkeypatch):
    base = baseline(bump=0.0)
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.rankeval]\n"
        "metrics = ['ndcg', 'map']\nk = [5, 10]\n"
        "fail_under = { 'ndcg@10' = 0.35 }\n"
        f"baseline = '{os.path.basename(base)}'\nmax_drop = '1%'\n"
    )
    monkeypatch.chdir(tmp_path)
    r = run_cli("score", PREDS, TRUTH, "-f", "json", "--quiet")
    assert r.exit_code == 1  # the file's ndcg@10 >= 0.35 fails
    report = r.json()
    assert sorted(report["metrics"]) == ["map@10", "map@5", "ndcg@10", "ndcg@5"]
    assert report["baseline"]["path"].endswith(os.path.basename(base))
    override = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.3", "-f", "json")
    assert override.exit_code == 0
    assert [g["threshold"] for g in override.json()["gates"] if g["kind"] == "fail_under"] == [0.3]

    (tmp_path / "other.toml").write_text("[rankeval]\nmetrics = ['mrr']\nfail_undr = 1\n")
    bad = run_cli("score", PREDS, TRUTH, "--config", tmp_path / "other.toml")
    assert bad.exit_code == 2
    assert "unknown key 'fail_undr'" in bad.stderr and "fail_under" in bad.stderr
    (tmp_path / "rankeval.toml").write_text("metrics = ['mrr@3']\n")
    chosen = run_cli("score", PREDS, TRUTH, "-f", "json")  # rankeval.toml wins over pyproject
    assert list(chosen.json()["metrics"]) == ["mrr@3"]


def test_a_shell_if_behaves_like_a_ci_job(tmp_path):
    script = (
        f"if {sys.executable} -m rankeval score {PREDS} {TRUTH} --fail-under ndcg@10=0.35 "
        "--quiet > report.txt; then echo shipped; else echo \"blocked: $?\"; fi; "
        f"{sys.executable} -m rankeval score {PREDS} {TRUTH} --fail-under ndcg@10=0.3 --quiet "
        "> /dev/null && echo shipped; "
        f"{sys.executable} -m rankeval score nope.csv {TRUTH} 2>/dev/null; echo \"error: $?\""
    )
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.splitlines() == ["blocked: 1", "shipped", "error: 2"]
    assert "ndcg" in (tmp_path / "report.txt").read_text()
