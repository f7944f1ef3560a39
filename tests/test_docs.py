"""The README stays true: its metric table, its options and its example output are checked."""

from __future__ import annotations

import re

import pytest

from rankeval.cli import metrics_markdown
from rankeval.cli.score import score

from .conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_metric_table_is_the_registry():
    assert metrics_markdown() in README


def test_readme_documents_every_score_option():
    for param in score.params:
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert f"`{opt}" in README or f", {opt}" in README or f"`-{opt[1:]}" in README, opt


def test_first_screen_has_the_two_commands_and_an_example():
    first = README[: README.index("## ")]
    assert "make run" in first
    assert "make test" in first
    assert "rankeval score sample_data/preds.csv" in first


def _console_examples() -> list[tuple[str, list[str]]]:
    """Every ``console`` block of the README: the command and the lines it prints."""
    blocks = re.findall(r"```console\n\$ (rankeval [^\n]+)\n(.*?)```", README, re.S)
    return [(command, shown.splitlines()) for command, shown in blocks]


def test_readme_has_console_examples_of_every_command():
    commands = {command.split()[1] for command, _ in _console_examples()}
    assert {"score", "compare", "validate"} <= commands


@pytest.mark.parametrize("command, shown", _console_examples(),
                         ids=lambda x: x.split()[1] if isinstance(x, str) else "")
def test_readme_example_output_is_real(run_cli, tmp_path, monkeypatch, command, shown):
    """Run each example from a folder holding sample_data/, as a reader would."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    r = run_cli(*command.split()[1:])
    assert r.exit_code in (0, 1), r.stderr  # 1: an example of a failing gate
    printed = [line.rstrip() for line in (r.stdout + r.stderr).splitlines()]
    assert [line.rstrip() for line in shown] == printed


def test_make_run_is_the_first_example():
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*\n\t\$\(BIN\)/(rankeval [^\n]+)", makefile, re.M)
    assert run and run.group(1) == _console_examples()[0][0]
