"""The exit status is decided, then said: writing to stderr can never change it. Every
command of the group, in a real process, with stderr into a pipe already closed (alone, and
with stdout, as ``2>&1 | head -1``) and into a full device (``2>/dev/full``): a success stays
0, a failed gate 1, an input error and a usage error 2 (#46.9)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rankeval.cli import cli

from .conftest import SAMPLE

S = {name: str(SAMPLE / name) for name in ("preds.csv", "popular.csv", "truth.csv",
                                            "log.csv", "log_candidate.csv", "sampled_a.csv",
                                            "interleave_clicks.csv")}
MISSING = str(SAMPLE / "no-such-file.csv")

# command -> outcome -> its arguments (None: the command has no such outcome, e.g. no gate).
CASES: dict[str, dict[str, list[str] | None]] = {
    "score": {
        "pass": ["score", S["preds.csv"], S["truth.csv"]],
        "gate": ["score", S["preds.csv"], S["truth.csv"], "--fail-under", "ndcg@10=0.99"],
        "input": ["score", S["preds.csv"], MISSING],
        "usage": ["score", S["preds.csv"], S["truth.csv"], "--no-such-option"],
    },
    "compare": {
        "pass": ["compare", S["popular.csv"], S["preds.csv"], S["truth.csv"]],
        "gate": ["compare", S["preds.csv"], S["popular.csv"], S["truth.csv"],
                 "--fail-if-worse"],
        "input": ["compare", S["preds.csv"], MISSING, S["truth.csv"]],
        "usage": ["compare", "--no-such-option"],
    },
    "ope": {
        "pass": ["ope", S["log.csv"], S["log_candidate.csv"]],
        "gate": ["ope", S["log.csv"], S["log_candidate.csv"], "--fail-under", "snrips=1000"],
        "input": ["ope", MISSING, S["log_candidate.csv"]],
        "usage": ["ope", "--no-such-option"],
    },
    "validate": {
        "pass": ["validate", S["preds.csv"], S["truth.csv"]],
        "gate": None,
        "input": ["validate", S["preds.csv"], MISSING],
        "usage": ["validate", "--no-such-option"],
    },
    "convert": {
        "pass": ["convert", S["preds.csv"], "-", "--output-format", "jsonl"],
        "gate": None,
        "input": ["convert", MISSING, "-", "--output-format", "jsonl"],
        "usage": ["convert", "--no-such-option"],
    },
    "metrics": {
        "pass": ["metrics"],
        "gate": None,
        "input": None,
        "usage": ["metrics", "--no-such-option"],
    },
    "power": {
        "pass": ["power", S["preds.csv"], S["popular.csv"], S["truth.csv"]],
        "gate": None,
        "input": ["power", S["preds.csv"], S["popular.csv"], MISSING],
        "usage": ["power", "--no-such-option"],
    },
    "sampled": {
        "pass": ["sampled", S["sampled_a.csv"], "--candidates", "1000", "--negatives", "100"],
        "gate": None,
        "input": ["sampled", MISSING, "--candidates", "1000", "--negatives", "100"],
        "usage": ["sampled", "--no-such-option"],
    },
    "agree": {
        "pass": ["agree", str(SAMPLE / "agree_human.csv"), str(SAMPLE / "agree_machine.csv")],
        "gate": None,
        "input": ["agree", str(SAMPLE / "agree_human.csv"), MISSING],
        "usage": ["agree", "--no-such-option"],
    },
    "config": {
        "pass": ["config", "score"],
        "gate": None,
        "input": ["config", "score", "--config", MISSING],
        "usage": ["config", "--no-such-option"],
    },
    "interleave": {
        "pass": ["interleave", "score", S["interleave_clicks.csv"]],
        "gate": ["interleave", "score", S["interleave_clicks.csv"], "--baseline", "candidate",
                 "--fail-if-worse"],
        "input": ["interleave", "score", MISSING],
        "usage": ["interleave", "score", "--no-such-option"],
    },
}
EXPECTED = {"pass": 0, "gate": 1, "input": 2, "usage": 2}
STDERR = ("closed", "closed with stdout", "full")


def test_every_command_of_the_group_has_its_cases():
    """A new command is a failure here until its cases are written: the boundary covers it
    by construction, this test by listing it."""
    assert set(CASES) == set(cli.commands)


def _run(args: list[str], where: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "RANKEVAL_PROGRESS": "0"}
    command = [sys.executable, "-m", "rankeval", *args]
    if where == "full":
        with open("/dev/full", "w") as full:
            return subprocess.run(command, stdout=subprocess.DEVNULL, stderr=full, env=env,
                                  timeout=120, check=False)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: EPIPE on every write
    try:
        stdout = write if where == "closed with stdout" else subprocess.DEVNULL
        return subprocess.run(command, stdout=stdout, stderr=write, env=env, timeout=120,
                              check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("where", STDERR)
@pytest.mark.parametrize(("command", "outcome"), [
    (c, o) for c, cases in CASES.items() for o, args in cases.items() if args is not None])
def test_stderr_that_cannot_be_written_never_changes_the_exit_status(command, outcome, where):
    args = CASES[command][outcome]
    assert args is not None
    r = _run(args, where)
    assert r.returncode == EXPECTED[outcome], (command, outcome, where, r.returncode)


def test_the_cases_have_the_outcomes_they_are_named_for():
    """With stderr readable: each case exits as expected and says so (the table is right)."""
    for cases in CASES.values():
        for outcome, args in cases.items():
            if args is None:
                continue
            r = subprocess.run([sys.executable, "-m", "rankeval", *args], capture_output=True,
                               timeout=120, check=False)
            assert r.returncode == EXPECTED[outcome], (args, r.stderr[-500:])
            if outcome in ("input", "usage"):
                assert r.stderr.startswith(b"rankeval: error: "), r.stderr
                assert r.stderr.count(b"\n") == 1
