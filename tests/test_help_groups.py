"""--help that guides (#52 item 1): every option of every command is listed in exactly one
named group (``rankeval.cli.groups``, a table), the common options first, and the commands of
``rankeval --help`` by job."""

from __future__ import annotations

import click
import cloup
import pytest

from rankeval.cli import cli
from rankeval.cli.groups import COMMON, COMMON_TITLE, OLD, ORDER, SECTIONS, group_of
from rankeval.cli.helptext import twin

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
    command = twin(LEAVES[name])
    assert isinstance(command, cloup.Command)
    listed = [p for g in command.option_groups for p in g.options]
    assert sorted(map(id, listed)) == sorted(id(p) for p in _options(command))
    assert all(g.title in TITLES for g in command.option_groups)
    assert len({g.title for g in command.option_groups}) == len(command.option_groups)
    assert command.ungrouped_options == []  # cloup's default group holds --help alone
    assert all(g.hidden == (g.title == OLD) for g in command.option_groups)


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_common_options_come_first_in_the_tables_order(name):
    command = twin(LEAVES[name])
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


def _groups(group: click.Group = cli, path: tuple[str, ...] = ()):
    """Every group of commands (``rankeval`` itself first) by its path of names."""
    yield path, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _groups(command, (*path, name))


GROUPS = dict(_groups())


def _headings(out: str) -> list[str]:
    return [line[:-1] for line in out.splitlines() if line and line[0] != " "
            and line.endswith(":")]


@pytest.mark.parametrize("path", sorted(GROUPS), ids=lambda p: " ".join(p) or "rankeval")
def test_each_group_lists_its_commands_under_its_own_jobs(run_cli, path):
    """Each group's commands by the group's own sections (``SECTIONS[path]``): 'interleave'
    took the top's table, so its 'score' sat under 'Evaluate' and the rest under 'Other
    commands'."""
    table = SECTIONS[" ".join(path)]
    out = run_cli(*path, "--help").stdout
    assert _headings(out) == ["Options", *(title for title, _ in table)]
    listed = [n for _, names in table for n in names]
    assert sorted(listed) == sorted(GROUPS[path].commands)  # each once, none left out
    for title, names in table:
        block = out[out.index(f"\n{title}:\n"):]
        block = block[:block.find("\n\n") if "\n\n" in block[1:] else len(block)]
        assert [line.split()[0] for line in block.strip().splitlines()[1:]] == list(names)
    assert "Other commands" not in out


def _every_help():
    yield from GROUPS
    for name in LEAVES:
        yield tuple(name.split())


@pytest.mark.parametrize("path", sorted(set(_every_help())),
                         ids=lambda p: " ".join(p) or "rankeval")
def test_help_prose_fits_80_columns(path):
    """At 80 columns every line of --help but an example's command line (shown whole, to be
    copied) fits: metrics' note on its definitions was kept unwrapped at 91 characters."""
    from click.testing import CliRunner

    out = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80).output
    long, examples = [], False
    for line in out.splitlines():
        examples = (examples or line.strip() == "Examples:") and bool(line.strip())
        if len(line) > 80 and not examples and not line.strip().startswith("rankeval "):
            long.append(line)
    assert not long, long
