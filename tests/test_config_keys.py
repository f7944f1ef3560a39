"""Configuration by command: a key belongs to the commands whose options it names.

A ``[tool.rankeval]`` section serves every command: each reads its own keys, leaves the others'
(``-v`` lists them), and refuses a key no command has.
"""

from __future__ import annotations

import re

import click
import pytest

from rankeval.cli import cli
from rankeval.cli.config import config_keys

from .conftest import ROOT, SAMPLE

CONFIGURED = sorted(name for name, command in cli.commands.items()
                    if any(p.name == "config" for p in command.params))
KEYS = {name: set(config_keys(cli.commands[name])) for name in CONFIGURED}
EVERY_KEY = set().union(*KEYS.values())


def _toml(keys) -> str:
    # a value no option would take: a key left to another command is never read
    return "[tool.rankeval]\n" + "".join(f'{key} = "not a value for {key}"\n'
                                         for key in sorted(keys))


def test_every_command_with_options_reads_a_config():
    assert set(CONFIGURED) >= {"score", "compare", "validate", "power", "ope", "sampled",
                               "agree"}
    assert {"fail_under", "baseline", "max_drop", "junit"} <= KEYS["score"]
    assert "fail_under" not in KEYS["validate"]


@pytest.mark.parametrize("name", CONFIGURED)
def test_keys_of_other_commands_are_left_to_them(run_cli, tmp_path, name):
    """Every key of every other command at once: read by none of this command's options."""
    theirs = EVERY_KEY - KEYS[name]
    assert theirs
    config = tmp_path / "rankeval.toml"
    config.write_text(_toml(theirs))
    r = run_cli(name, "--config", config, "-v", "--help")
    assert r.exit_code == 0, r.stderr
    assert "Usage:" in r.stdout


@pytest.mark.parametrize("name", CONFIGURED)
def test_a_key_of_no_command_is_an_error(run_cli, tmp_path, name):
    config = tmp_path / "rankeval.toml"
    config.write_text('[tool.rankeval]\nfail_undr = 1\n')
    r = run_cli(name, "--config", config, "--help")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "unknown key 'fail_undr'" in r.stderr
    assert "did you mean 'fail_under'?" in r.stderr


@pytest.mark.parametrize("name", CONFIGURED)
def test_own_keys_are_still_checked(run_cli, tmp_path, name):
    """A key of this command with a bad value is still refused (about the file and key)."""
    valued = [k for k, p in config_keys(cli.commands[name]).items()
              if isinstance(p.type, click.Choice) and not p.hidden]
    assert valued, name
    config = tmp_path / "rankeval.toml"
    config.write_text(f'[tool.rankeval]\n{valued[0]} = "no-such-choice"\n')
    r = run_cli(name, "--config", config, "--help")
    assert r.exit_code == 2 and f"key {valued[0]!r}" in r.stderr, r.stderr


def _ci_section() -> str:
    """The [tool.rankeval] example of docs/ci.md, with its paths made to exist."""
    text = (ROOT / "docs" / "ci.md").read_text()
    return re.search(r"```toml\n(\[tool\.rankeval\].*?)```", text, re.S).group(1)


@pytest.mark.parametrize("args", [
    ("validate", SAMPLE / "preds.csv", SAMPLE / "truth.csv"),
    ("compare", SAMPLE / "preds.csv", SAMPLE / "preds.parquet", SAMPLE / "truth.csv"),
], ids=["validate", "compare"])
def test_the_ci_page_section_serves_validate_and_compare(run_cli, tmp_path, monkeypatch, args):
    (tmp_path / "pyproject.toml").write_text(_ci_section())
    monkeypatch.chdir(tmp_path)
    r = run_cli(*args, "-v", "-f", "json")
    assert r.exit_code == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "keys of other commands" in line]
    assert len(said) == 1
    for key in ("fail_under", "baseline", "max_drop", "junit"):
        assert key in said[0]
    # the keys it shares with score are read: k = [10, 20]
    if args[0] == "compare":
        assert set(r.json()["settings"]["k"]) == {10, 20}
    quiet = run_cli(*args, "-f", "json")
    assert "keys of other commands" not in quiet.stderr
