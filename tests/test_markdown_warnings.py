"""-f markdown carries the report's warnings (a Markdown report pasted into a pull request
travels without its stderr): score's every notice, compare's as its stderr says them (the
truth's once, a run's after its name); none, and no heading, without one."""

from __future__ import annotations

import pytest

from rankeval.report.markdown import cell

from .test_compare_notices import GRADED, RUN_A, RUN_B, compared

PREFIX = "rankeval: warning: "


def listed(markdown: str) -> list[str]:
    """The items of the report's Warnings list."""
    _, found, rest = markdown.partition("\nWarnings:\n\n")
    assert found, markdown
    return [line[2:] for line in rest.splitlines() if line.startswith("- ")]


def test_score_markdown_lists_every_notice(run_cli, write):
    truth, run = write("truth.csv", GRADED), write("a.csv", RUN_A)
    notices = run_cli("score", run, truth, "-m", "ndcg@3", "-f", "json", "-q").json()["notices"]
    assert len(notices) >= 3  # users without relevant items, graded gains, K past the lists
    r = run_cli("score", run, truth, "-m", "ndcg@3", "-f", "markdown", "-q")
    assert r.exit_code == 0, r.stderr
    assert listed(r.stdout) == [cell(n["message"]) for n in notices]


@pytest.mark.parametrize("runs", [2, 3])
def test_compare_markdown_lists_what_stderr_says(run_cli, write, runs):
    r = compared(run_cli, write, runs, "markdown")
    said = [line.removeprefix(PREFIX) for line in r.stderr.splitlines()
            if line.startswith(PREFIX)]
    assert len(said) == 2 + runs  # the truth's two once, K past the lists per run
    assert listed(r.stdout) == [cell(line) for line in said]


@pytest.mark.parametrize("command", ["score", "compare"])
def test_no_warning_no_list(run_cli, write, command):
    truth = write("truth.csv", "user_id,item_id\nu1,i1\nu2,i3\nu3,i2\nu4,i4\n")
    runs = [write("a.csv", RUN_A), write("b.csv", RUN_B)][:1 if command == "score" else 2]
    r = run_cli(command, *runs, truth, "-m", "recall@2", "-f", "markdown")
    assert r.exit_code == 0, r.stderr
    assert PREFIX not in r.stderr and "Warnings" not in r.stdout
