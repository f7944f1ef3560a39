"""The GitHub Action and the pre-commit hooks (#32): their steps' commands run as a runner and
pre-commit would run them, with the files they read and write."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pandas as pd
import yaml

from rankeval.integrations import action

from .conftest import ROOT


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_every_input_reaches_the_step_and_the_step_reads_every_variable():
    """action.yml's inputs are each passed to the rankeval step as a RANKEVAL_* variable
    (python-version goes to setup-python), and the runner module reads exactly those."""
    spec = _action()
    step = next(s for s in spec["runs"]["steps"] if s.get("id") == "rankeval")
    env = step["env"]
    for name in spec["inputs"]:
        if name == "python-version":
            continue
        variable = "RANKEVAL_" + name.upper().replace("-", "_")
        assert env[variable] == f"${{{{ inputs.{name} }}}}", name
    source = (ROOT / "rankeval" / "integrations" / "action.py").read_text()
    read = set(re.findall(r'"(RANKEVAL_[A-Z_]+)"', source))
    read |= {f"RANKEVAL_{n.upper().replace('-', '_')}" for n in action.FLAGS}
    assert read == set(env)
    assert step["run"] == "python -m rankeval.integrations.action"
    assert set(spec["outputs"]) == {"exit-code", "passed", "report", "metrics"}
    for name, output in spec["outputs"].items():
        assert output["value"] == f"${{{{ steps.rankeval.outputs.{name} }}}}"


def _runner(tmp_path, **inputs: str) -> tuple[int, dict[str, str], str, str]:
    """The rankeval step as a runner runs it: the inputs as variables, GITHUB_OUTPUT and
    GITHUB_STEP_SUMMARY as files; (exit code, outputs, summary, stderr)."""
    out, summary = tmp_path / "output", tmp_path / "summary.md"
    out.write_text("")
    summary.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANKEVAL_", "GITHUB_"))}
    env.update({"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary),
                "RANKEVAL_REPORT": str(tmp_path / "report.json")})
    env.update({"RANKEVAL_" + k.upper(): v for k, v in inputs.items()})
    r = subprocess.run([sys.executable, "-m", "rankeval.integrations.action"], cwd=ROOT,
                       env=env, capture_output=True, text=True, check=False)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return r.returncode, outputs, summary.read_text(), r.stderr


def test_a_passing_and_a_failing_gate(tmp_path):
    files = "sample_data/preds.csv sample_data/truth.csv"
    code, outputs, summary, _ = _runner(tmp_path, files=files, metrics="ndcg,recall", k="10",
                                        fail_under="ndcg@10=0.3 recall@10=0.2")
    assert code == 0 and outputs["passed"] == "true" and outputs["exit-code"] == "0"
    report = json.loads((tmp_path / "report.json").read_text())
    assert json.loads(outputs["metrics"]) == report["metrics"]
    assert "✅" in summary and "ndcg@10" in summary
    code, outputs, summary, stderr = _runner(tmp_path, files=files, metrics="ndcg", k="10",
                                             fail_under="ndcg@10=0.9")
    assert code == 1 and outputs["passed"] == "false" and outputs["exit-code"] == "1"
    assert "❌" in summary and "FAILED" in stderr


def test_bad_input_is_exit_2_and_args_pass_through(tmp_path):
    code, outputs, _, stderr = _runner(tmp_path, files="sample_data/preds.csv missing.csv")
    assert code == 2 and outputs["exit-code"] == "2" and "missing.csv" in stderr
    code, outputs, _, _ = _runner(tmp_path, files="sample_data/preds.csv sample_data/truth.csv",
                                  metrics="map", args="--k 5 --gain exponential")
    report = json.loads((tmp_path / "report.json").read_text())
    assert code == 0 and set(report["metrics"]) == {"map@5"}
    assert report["settings"]["gain"] == "exponential"
    code, _, _, stderr = _runner(tmp_path, command="evaluate", files="a b")
    assert code == 2 and "command must be one of score, compare, ope" in stderr


def test_compare_and_ope_write_their_summaries(tmp_path):
    code, outputs, summary, _ = _runner(
        tmp_path, command="compare",
        files="sample_data/preds.csv sample_data/popular.csv sample_data/truth.csv",
        metrics="ndcg", k="10")
    assert code == 0 and "popular" in summary and json.loads(outputs["metrics"])
    code, outputs, summary, _ = _runner(
        tmp_path, command="ope", files="sample_data/log.csv sample_data/log_candidate.csv",
        args="-e iips --rounds 100")
    estimates = json.loads(outputs["metrics"])
    assert code == 0 and set(estimates["sample_data/log_candidate.csv"]) == {"iips"}
    assert "Off-policy estimates of" in summary


def _hooks() -> dict[str, dict]:
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def _entry(hook: dict, args: list[str], files: list[str]) -> subprocess.CompletedProcess:
    """The hook's entry as pre-commit runs it: entry, args, then the staged files."""
    bin_dir = os.path.dirname(sys.executable)
    entry = hook["entry"].split()
    entry[0] = os.path.join(bin_dir, entry[0])
    passed = files if hook.get("pass_filenames", True) else []
    return subprocess.run([*entry, *args, *passed], cwd=ROOT, capture_output=True, text=True,
                          check=False)


def test_the_validate_hook_on_good_and_bad_files(tmp_path):
    hook = _hooks()["rankeval-validate"]
    pattern = re.compile(hook["files"])
    good = ["sample_data/preds.csv", "sample_data/truth.parquet", "sample_data/stochastic.run",
            "sample_data/log_candidate.csv"]
    assert all(pattern.search(f) for f in good) and not pattern.search("README.md")
    r = _entry(hook, [], good)
    assert r.returncode == 0, r.stderr
    preds = pd.read_csv(ROOT / "sample_data" / "preds.csv")
    bad = {
        "repeated.csv": pd.concat([preds, preds.iloc[[4]]]),
        "ranks.csv": preds.assign(rank=preds["rank"].astype(str).where(preds.index != 7, "x")),
        "empty.csv": preds.assign(user_id=preds.user_id.where(preds.index != 3, "")),
    }
    for name, frame in bad.items():
        frame.to_csv(tmp_path / name, index=False)
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    r = _entry(hook, [], [str(tmp_path / n) for n in (*bad, "notes.csv")])
    lines = r.stderr.splitlines()
    # every problem validate finds in each file (tests/test_one_validation.py: the same ones)
    assert r.returncode == 2 and len(lines) == 6, r.stderr
    for text in ("repeated.csv: 1 (user, item) pair listed more than once",
                 "repeated.csv: column 'rank': 1 rank repeated within a user",
                 "ranks.csv: column 'rank': 1 non-numeric value", "empty.csv: column 'user_id'",
                 "notes.csv: cannot tell a run from a truth file"):
        assert any(text in line for line in lines), text
    assert "Traceback" not in r.stderr


def test_the_gate_hook_is_a_score_gate():
    hook = _hooks()["rankeval-gate"]
    assert hook["pass_filenames"] is False
    args = ["sample_data/preds.csv", "sample_data/truth.csv", "-m", "ndcg", "-k", "10", "-q"]
    assert _entry(hook, [*args, "--fail-under", "ndcg@10=0.3"], ["x.csv"]).returncode == 0
    r = _entry(hook, [*args, "--fail-under", "ndcg@10=0.9"], ["x.csv"])
    assert r.returncode == 1 and "FAILED" in r.stderr


def test_the_documented_workflow_and_hooks_use_what_exists():
    """docs/ci.md's workflow passes only inputs action.yml has and reads only its outputs;
    its pre-commit configuration names the hooks that exist."""
    page = (ROOT / "docs" / "ci.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]
    steps = [s for b in blocks if "evaluate" in b for s in b["evaluate"].get("steps", [])]
    used = [s for s in steps if str(s.get("uses", "")).endswith("rankeval@main")]
    assert used, "a workflow using the action"
    inputs, outputs = set(_action()["inputs"]), set(_action()["outputs"])
    for step in used:
        assert set(step["with"]) <= inputs
    for name in re.findall(r"steps\.rankeval\.outputs\.([a-z-]+)", page):
        assert name in outputs
    hooks = [h for b in blocks if "repos" in b for r in b["repos"] for h in r["hooks"]]
    assert {h["id"] for h in hooks} == set(_hooks())
