"""One rule for the resamples of the paired tests (analysis.choices.MIN_ROUNDS), checked by
check_tests for every command that runs them: compare and agree refuse fewer, in one line
naming --rounds, before reading anything, and take that many."""

from __future__ import annotations

import pytest

from rankeval.analysis import choices

from .conftest import SAMPLE

MIN_ROUNDS = 100  # the rule's value, as docs/comparing-runs.md states it

COMMANDS = {
    "compare": ["compare", SAMPLE / "preds.csv", SAMPLE / "preds.csv", SAMPLE / "truth.csv",
                "-m", "ndcg@10"],
    "agree": ["agree", SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv", "--runs",
              SAMPLE / "agree_bm25.csv", SAMPLE / "agree_dense.csv", "-m", "ndcg@10"],
}


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
@pytest.mark.parametrize("rounds", [1, MIN_ROUNDS - 1])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_too_few_rounds_are_refused(run_cli, command, rounds, test):
    r = run_cli(*COMMANDS[command], "--test", test, "--rounds", str(rounds), "-q")
    assert r.exit_code == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: --rounds must be at "
                                                   f"least {MIN_ROUNDS} (got {rounds})"), lines


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_fewest_rounds_are_taken(run_cli, command):
    r = run_cli(*COMMANDS[command], "--test", "randomization", "--rounds", str(MIN_ROUNDS),
                "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert (report["test"] if command == "agree" else report)["rounds"] == MIN_ROUNDS


def test_the_rule_is_the_one_the_docs_state():
    assert choices.MIN_ROUNDS == MIN_ROUNDS
