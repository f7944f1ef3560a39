"""--help that guides (#52 item 1): every option of every command is listed in exactly one
named group (``rankeval.cli.groups``, a table), the common options first, and the commands of
``rankeval --help`` by job."""

from __future__ import annotations

import click
import cloup
import pytest

from rankeval.cli import cli
from rankeval.cli.groups import COMMON, COMMON_TITLE, OLD, ORDER, SECTIONS, group_of

TITLES = {COMMON_TITLE, *ORDER, OLD}


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option)]


def _leaves(group: click.Group = cli, prefix: str = ""):
    """Every command that runs, a group's subcommands by their full name ("interleave score")."""
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _leaves(command, f"{prefix}{name} ")
        else:
            yield prefix + name, command


LEAVES = dict(_leaves())


def test_the_subcommands_are_reached():
    assert {"interleave make", "interleave score", "interleave simulate"} <= set(LEAVES)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_option_is_in_exactly_one_named_group(name):
    command = LEAVES[name]
    assert isinstance(command, cloup.Command)
    listed = [p for g in command.option_groups for p in g.options]
    assert sorted(map(id, listed)) == sorted(id(p) for p in _options(command))
    assert all(g.title in TITLES for g in command.option_groups)
    assert len({g.title for g in command.option_groups}) == len(command.option_groups)
    assert command.ungrouped_options == []  # cloup's default group holds --help alone
    assert all(g.hidden == (g.title == OLD) for g in command.option_groups)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_common_options_come_first_in_the_tables_order(name):
    command = LEAVES[name]
    first = command.option_groups[0]
    assert first.title == COMMON_TITLE
    assert [p.name for p in first.options] == list(COMMON[name])
    titles = [g.title for g in command.option_groups]
    rank = [(COMMON_TITLE, *ORDER, OLD).index(t) for t in titles]
    assert rank == sorted(rank)


def test_an_option_no_table_places_is_refused_not_listed_apart():
    with pytest.raises(LookupError, match="no group"):
        group_of("score", click.Option(["--brand-new"]))


def test_score_help_shows_the_named_groups_in_order(run_cli):
    out = run_cli("score", "--help").stdout
    headings = [line[:-1] for line in out.splitlines() if line and line[0] != " "
                and line.endswith(":")]
    assert headings == ["Common options", "Inputs and columns", "Conventions",
                        "Users and segments", "Statistics", "Gates", "Machine judgments",
                        "Reports", "Engines", "Help"]
    common = out[out.index("Common options:"):out.index("Inputs and columns:")]
    for flag in ("--k", "--metrics", "--format", "--output", "--per-user", "--fail-under"):
        assert flag in common
    gates = out[out.index("\nGates:"):out.index("Machine judgments:")]
    assert "--max-drop" in gates and "--junit" in gates and "--gain" not in gates
    assert out.index("Examples:") < out.index("Common options:")


def test_the_top_help_lists_every_command_under_a_job(run_cli):
    out = run_cli("--help").stdout
    for title, _ in SECTIONS:
        assert f"{title}:" in out
    listed = {n for _, names in SECTIONS for n in names}
    assert set(cli.commands) <= listed
    assert "Other commands" not in out
