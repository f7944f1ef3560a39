"""Every option example the documentation shows is accepted by the option it names.

An example is a flag followed by a value (``--k 5,10,20``, ``--gains 1=1,2=3``) in a command's
``--help`` or in an inline code span of its page under docs/commands/: each is converted by
the option itself, as the command line would (its type and its callback), so a help text whose
example the option refuses cannot ship.
"""

from __future__ import annotations

import re
import shlex

import click
import pytest
from click.testing import CliRunner

from rankeval.cli import cli

from .conftest import ROOT

# An example inside an option's text: after "(", "e.g. " or ", " (``(--k 5 --k 10, --k
# 5,10,20)``, ``e.g. --gains 1=1,2=3``), a flag and its value; prose that merely names an
# option (``--train before``) is not an example.
_EXAMPLE = re.compile(r"(?:\(|e\.g\.,? |, )(--[a-z][a-z0-9-]*)[ =]('[^']*'|\"[^\"]*\"|[^\s;),`]+"
                      r"(?:,[^\s;),`]+)*)")
# A command line shown whole: an "Examples:" line of --help, a line of a docs code block
_LINE = re.compile(r"^\s*(?:\$ |.*\| )?(rankeval [a-z]+ .*?)\s*$", re.M)


def _options(command: click.Command) -> dict[str, click.Option]:
    """The command's options that take a value, by each of their flags."""
    return {flag: p for p in command.params if isinstance(p, click.Option) and not p.is_flag
            for flag in p.opts}


def _help(name: str) -> str:
    r = CliRunner().invoke(cli, [name, "--help"], terminal_width=400)
    assert r.exit_code == 0, r.output
    return r.output


def _page(name: str) -> str:
    return (ROOT / "docs" / "commands" / f"{name}.md").read_text()


def _lines(text: str) -> list[str]:
    """Whole command lines: continuation backslashes joined."""
    return _LINE.findall(text.replace("\\\n", " "))


def _examples() -> list[tuple[str, str, str, str]]:
    """(command, where, flag, value) of every example in an option's text."""
    found = []
    for name, command in sorted(cli.commands.items()):
        options = _options(command)
        for where, text in (("--help", _help(name)), ("docs", _page(name))):
            for flag, value in _EXAMPLE.findall(" ".join(text.split())):
                example = (name, where, flag, value.strip("'\""))
                listing = value.startswith("[") or "|" in value  # -f [table|json]
                param = options.get(flag)
                metavar = (param.metavar or "") if param is not None else ""
                usage = bool(metavar) and value.startswith(metavar.split("[")[0])  # -k K[,K]
                if param is not None and not listing and not usage and example not in found:
                    found.append(example)
    return found


def _command_lines() -> list[tuple[str, str, str]]:
    """(command, where, line) of every whole command line shown."""
    found = []
    for name in sorted(cli.commands):
        for where, text in (("--help", _help(name)), ("docs", _page(name))):
            found += [(name, where, line) for line in _lines(text)
                      if line.split()[1] == name and not _synopsis(line)
                      and (name, where, line) not in found]
    return found


def _synopsis(line: str) -> bool:
    """A usage line (``rankeval score [OPTIONS] PREDS TRUTH``), not an example: placeholders
    in capitals or brackets."""
    return any(w.isupper() or w.startswith("[") for w in line.split()[2:])


EXAMPLES = _examples()
LINES = _command_lines()


def test_examples_are_found_in_every_command():
    """The extraction sees the examples it must (those of the gains and the cut-offs)."""
    seen = {(name, flag, value) for name, _, flag, value in EXAMPLES}
    assert ("score", "--gains", "1=1,2=3") in seen
    assert ("score", "--k", "5,10,20") in seen and ("score", "--k", "10..100:10") in seen
    assert len(EXAMPLES) >= 20
    assert {name for name, *_ in LINES} >= {"score", "compare", "validate", "convert", "power",
                                            "ope", "sampled"}
    assert len(LINES) >= 40


@pytest.mark.parametrize("name, where, line", LINES,
                         ids=[f"{n}-{w}-{i}" for i, (n, w, _) in enumerate(LINES)])
def test_each_command_line_shown_parses(name, where, line):
    """Every option of a command line shown in --help or on the command's page is converted
    and checked by the command's own options (the files it names need not exist)."""
    words = shlex.split(line, comments=True)
    ends = [i for i, w in enumerate(words) if w in ("|", ">", "2>", "&&", ";")]
    words = words[:ends[0]] if ends else words
    command = cli.commands[name]
    try:
        command.make_context(name, words[2:], resilient_parsing=False)
    except click.UsageError as exc:
        pytest.fail(f"{line} (shown in its {where}): {exc.format_message()}")


@pytest.mark.parametrize("name, where, flag, value", EXAMPLES,
                         ids=[f"{n}-{w}-{f}={v}" for n, w, f, v in EXAMPLES])
def test_each_documented_example_is_accepted(name, where, flag, value):
    command = cli.commands[name]
    param = _options(command)[flag]
    ctx = click.Context(command, info_name=name)
    given = [value] if param.multiple or param.nargs != 1 else value
    if param.nargs > 1:
        given = tuple(value.split()) if param.multiple is False else [tuple(value.split())]
    try:
        param.process_value(ctx, given)
    except click.BadParameter as exc:
        pytest.fail(f"rankeval {name} {flag} {value} (shown in its {where}): {exc.message}")
