"""``convert`` honest about ties (#52 item 3): its --help offers only the tie rules a written
file can hold, and every one it offers is accepted; ``--ties input`` keeps the file's order
of tied scores in every ranked output format, and the other rules say when they reorder."""

from __future__ import annotations

import json

import click
import pytest

from rankeval.cli import cli
from rankeval.io.formats import FORMATS
from rankeval.settings import ROWS

TIED = "user_id,item_id,score\nu1,c,0.5\nu1,a,0.5\nu1,b,0.5\nu1,d,0.9\nu2,x,0.1\n"
FILE_ORDER = ["d", "c", "a", "b"]  # by score, ties as in the file
RANKED = [f.name for f in FORMATS.values() if f.ranked]


def _choices() -> list[str]:
    param = next(p for p in cli.commands["convert"].params if p.name == "ties")
    assert isinstance(param.type, click.Choice)
    return list(param.type.choices)


def test_help_offers_only_rules_that_give_one_order():
    assert set(_choices()) < set(ROWS["ties"].choices)
    assert {"expected", "optimistic", "pessimistic"}.isdisjoint(_choices())


@pytest.mark.parametrize("ties", ROWS["ties"].choices)
def test_every_rule_offered_is_accepted_and_no_other(run_cli, tmp_path, ties):
    src = tmp_path / "p.csv"
    src.write_text(TIED)
    r = run_cli("convert", src, tmp_path / "p.run", "--ties", ties, "-q")
    assert (r.exit_code == 0) == (ties in _choices()), r.stderr


def _order(fmt: str, text: str) -> list[str]:
    if fmt == "trec":
        return [line.split()[2] for line in text.splitlines() if line.startswith("u1 ")]
    return list(json.loads(text)["u1"])


@pytest.mark.parametrize("fmt", RANKED)
def test_ties_input_keeps_the_file_order_in_every_ranked_format(run_cli, tmp_path, fmt):
    src = tmp_path / "p.csv"
    src.write_text(TIED)
    r = run_cli("convert", src, "-", "--output-format", fmt, "--ties", "input")
    assert r.exit_code == 0, r.stderr
    assert _order(fmt, r.stdout) == FILE_ORDER
    assert "tied scores" not in r.stderr


@pytest.mark.parametrize("fmt", RANKED)
@pytest.mark.parametrize("ties", ["trec", "item-asc"])
def test_a_rule_that_reorders_ties_says_so(run_cli, tmp_path, fmt, ties):
    src = tmp_path / "p.csv"
    src.write_text(TIED)
    r = run_cli("convert", src, "-", "--output-format", fmt, "--ties", ties)
    assert r.exit_code == 0, r.stderr
    assert _order(fmt, r.stdout) != FILE_ORDER
    assert ("1 user has tied scores, written in the order of --ties " + ties) in r.stderr
    assert "--ties input keeps the file's order" in r.stderr
