"""Every rankeval command line the docs show parses with the real command (#52).

``test_docs.py`` runs the ``console`` examples; the other command lines (shell and YAML
blocks, code spans in the prose) were read by no test, and docs/troubleshooting.md gave
``compare``'s arguments in an order the command does not take. Here every one of them is
parsed by click as the command line would be (options, their values' checks, the number of
arguments); a line the prose says is refused must be refused; and every synopsis in the
prose (`` `compare` RUN... TRUTH ``) names the arguments in the command's order.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex

import click
import pytest

from rankeval.cli import cli
from rankeval.errors import OptionError

from .conftest import ROOT
from .test_docs import GENERATE, PAGES, _name

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# A command line in a block: a shell prompt's, a YAML step's (run: or a list item), a bare one
LINE = re.compile(r"^\s*(?:\$ |run: |- )?(rankeval [a-z].*)$")
SPAN = re.compile(r"`(rankeval [a-z][^`]*)`")
# Words of a shell line past which the command's own arguments end
SHELL = set("|&;<>")
# A code span the prose says the command refuses
REFUSED = re.compile(r"\s*\(?exits 2")
ELIDED = "..."  # arguments left out of a line (``rankeval score ... -f json``)


def command_lines(text: str) -> list[tuple[str, str]]:
    """(where, line) of every rankeval command line of a page outside its generated parts
    (``test_docs`` holds those to the code): ``block`` for a code block's, ``span`` for a
    code span's in the prose, ``refused`` for a span the prose says exits 2."""
    text = GENERATE.PART.sub("", text)
    found = []
    for m in FENCE.finditer(text):
        if m.group(1) == "python":
            continue
        body = re.sub(r"\\\n\s*", " ", m.group(2))  # a shell line continued
        found += [("block", line.group(1)) for raw in body.splitlines()
                  if (line := LINE.match(raw))]
    prose = FENCE.sub("", text)
    for m in SPAN.finditer(prose):
        refused = REFUSED.match(prose, m.end())
        found.append(("refused" if refused else "span", " ".join(m.group(1).split())))
    return found


def words(line: str) -> list[str]:
    """The line's words as a shell reads them, up to a pipe, a redirection or a ``;``."""
    lex = shlex.shlex(line, posix=True, punctuation_chars="".join(SHELL))
    lex.whitespace_split = True
    out = []
    for word in lex:
        if set(word) <= SHELL:
            break
        out.append(word)
    return out


def parse(argv: list[str]) -> None:
    """Parse ``rankeval ...`` with the command it names, as the CLI would before running it:
    a click error for an unknown option, a bad value or a wrong number of arguments."""
    command: click.Command = cli
    name, args, parent = "rankeval", argv[1:], None
    while isinstance(command, click.Group) and args and args[0] in command.commands:
        # each group's context, as click makes it: its settings (-h beside --help) are its
        # commands' too
        parent = command.context_class(command, info_name=name, parent=parent,
                                       **command.context_settings)
        name, command, args = args[0], command.commands[args[0]], args[1:]
    context = command.context_class(command, info_name=name, parent=parent,
                                    **command.context_settings)
    if set(args) & set(context.help_option_names):
        return  # the command's help: printing it would be all the parse does
    with contextlib.suppress(click.exceptions.Exit):  # --version: parsed, and done
        command.make_context(name, args, parent=parent)


def problem(where: str, line: str) -> str | None:
    """What is wrong with one command line (None: nothing). A code span in the prose may
    name a command or an option without the command's arguments; a line with ``...`` leaves
    some out; nothing else may."""
    argv = words(line)
    try:
        parse([w for w in argv if w != ELIDED])
    except (click.UsageError, OptionError) as exc:
        if where == "refused":
            return None
        partial = where == "span" or ELIDED in argv
        if partial and isinstance(exc, click.MissingParameter | click.exceptions.NoArgsIsHelpError
                                  ):
            return None
        if (partial and isinstance(exc, click.BadOptionUsage) and argv[-1].startswith("-")
                and "requires an argument" in str(exc)):
            return None  # the prose names an option: `rankeval score --per-user`
        return str(exc).splitlines()[0]
    return "the prose says it exits 2, and it parses" if where == "refused" else None


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_line_of_the_docs_parses(page):
    bad = [f"{where} {line!r}: {why}" for where, line in command_lines(page.read_text())
           if (why := problem(where, line))]
    assert bad == [], _name(page)


def test_the_docs_hold_command_lines_of_every_kind():
    """The collection finds what it checks: lines in blocks, spans, refusals."""
    kinds = {where for page in PAGES for where, _ in command_lines(page.read_text())}
    assert kinds == {"block", "span", "refused"}
    blocks = [line for page in PAGES for where, line in command_lines(page.read_text())
              if where == "block"]
    assert len(blocks) > 50 and any(line.startswith("rankeval compare ") for line in blocks)


@pytest.mark.parametrize(("where", "line"), [
    ("block", "rankeval score preds.csv truth.csv --k 0"),  # a value the option refuses
    ("block", "rankeval score preds.csv truth.csv --no-such-option"),
    ("block", "rankeval score preds.csv"),  # an argument missing
    ("block", "rankeval score a.csv b.csv c.csv"),  # one too many
    ("span", "rankeval compare --frobnicate"),
    ("span", "rankeval score a.csv b.csv c.csv"),
    ("refused", "rankeval score a.csv b.csv -k 5"),  # said to exit 2, but parses
])
def test_a_wrong_command_line_is_found(where, line):
    assert problem(where, line)


# A synopsis in the prose: commands in code spans, then their arguments in capitals
# (`score` and `validate` PREDS TRUTH)
SYNOPSIS = re.compile(r"((?:`[a-z-]+`(?:,| and| or)? ?)+)"
                      r"((?:\[?[A-Z][A-Z_]*(?:\.\.\.)?\]?(?: |(?=[,.;:)|])))+)")


def _roles(metavars: str) -> list[str]:
    """The order of a command's arguments, as roles: ``RUN_A RUN_B [RUN...] TRUTH`` and
    ``RUN... TRUTH`` are both RUN, TRUTH."""
    roles: list[str] = []
    for word in metavars.split():
        role = re.sub(r"_[A-Z]$", "", word.strip("[].").rstrip("."))
        if not roles or roles[-1] != role:
            roles.append(role)
    return roles


def _arguments(name: str) -> list[str]:
    """A command's arguments as its usage line names them (``[OPTIONS]`` left out)."""
    command = cli.commands[name]
    pieces = command.collect_usage_pieces(click.Context(command, info_name=name))
    return _roles(" ".join(p for p in pieces if p != "[OPTIONS]"))


def synopses(text: str) -> list[tuple[str, list[str]]]:
    """(command, argument roles) of every synopsis in the prose naming a command."""
    out = []
    for m in SYNOPSIS.finditer(FENCE.sub("", text)):
        names = re.findall(r"`([a-z-]+)`", m.group(1))
        out += [(n, _roles(m.group(2))) for n in names if n in cli.commands]
    return out


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_synopsis_names_the_arguments_in_the_commands_order(page):
    wrong = [(name, given, _arguments(name)) for name, given in synopses(page.read_text())
             if given != _arguments(name)]
    assert wrong == [], _name(page)


def test_troubleshooting_gives_the_order_of_every_command_taking_a_truth():
    """The row on swapped inputs names score, validate, compare and power, in their order;
    the text it had (``compare`` TRUTH RUN...) is found wrong."""
    text = (ROOT / "docs" / "troubleshooting.md").read_text()
    named = {name for name, _ in synopses(text)}
    assert {"score", "validate", "compare", "power"} <= named
    assert synopses("`compare` TRUTH RUN...") == [("compare", ["TRUTH", "RUN"])]
    assert _arguments("compare") == ["RUN", "TRUTH"]


def test_the_metrics_json_sample_is_generated_and_checked():
    """docs/commands/metrics.md's JSON sample is ``rankeval metrics -f json``'s output, written
    by `make docs` (an ``output-first`` part): a value edited by hand, or a metric's entry
    changed in the code, makes the page differ from what docs/generate.py writes, which
    ``test_docs.test_generated_parts_are_what_make_docs_writes`` fails on."""
    page = (ROOT / "docs" / "commands" / "metrics.md").read_text()
    parts = [m for m in GENERATE.PART.finditer(page)
             if m.group(2) == "output-first" and "rankeval metrics -f json" in m.group(4)]
    assert len(parts) == 1 and parts[0].group(3).split()[:3] == ["metrics", "-f", "json"]
    body = parts[0].group(4)
    sample = json.loads(body[body.index("["):body.rindex("}") + 1] + "]")
    assert sample[0]["name"]  # the command's first object
    drifted = page.replace(f'"name": "{sample[0]["name"]}"', '"name": "drifted"', 1)
    assert drifted != page and GENERATE.render(drifted) == page
