"""The README stays true: its metric table, its options and its example output are checked."""

from __future__ import annotations

import re

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


def test_readme_example_output_is_real(run_cli):
    block = re.search(r"```console\n\$ (rankeval score [^\n]+)\n(.*?)```", README, re.S)
    assert block, "the README's first console example is missing"
    args = block.group(1).split()[1:]
    shown = block.group(2).splitlines()
    r = run_cli(*args)
    assert r.exit_code == 0
    out = [line.rstrip() for line in r.stdout.splitlines()]
    err = [line.rstrip() for line in r.stderr.splitlines()]
    assert [line.rstrip() for line in shown] == out + err
