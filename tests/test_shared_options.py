"""An option of the shared table (cli.options.SPECS) means the same in every command that
takes it: each command builds it with ``option(name)`` (its help may say what it applies to
there), never by redefining it with click.option. Over every command and every such option;
the options below keep the flag with a meaning of their own, on purpose."""

from __future__ import annotations

import click
import pytest

from rankeval.cli import cli
from rankeval.cli.options import SPECS

# (command, option) -> why it is not the shared option
OWN = {
    ("interleave make", "k"): "the slots of the interleaved lists, one number",
    ("interleave simulate", "k"): "the slots of the interleaved lists, one number",
    ("interleave score", "non_inferior"): "one margin on the preference Delta, not METRIC=MARGIN",
    ("sampled", "metrics"): "the sampled metrics, one comma-separated list with a default",
    ("power", "rounds"): "each power is simulated: a default of 2,000 (option() overrides it)",
}


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


SHARED = [(name, p) for name, command in _commands(cli) for p in command.params
          if p.name in SPECS]


def test_the_exceptions_are_options_of_their_commands():
    assert set(OWN) <= {(name, p.name) for name, p in SHARED}


@pytest.mark.parametrize(("command", "param"), SHARED, ids=[f"{c}:{p.name}" for c, p in SHARED])
def test_a_shared_option_is_the_shared_definition(command, param):
    if (command, param.name) in OWN:
        return
    flags, spec = SPECS[param.name]
    assert tuple(param.opts) == flags
    assert param.type is spec.get("type", param.type), f"{command} redefines {flags[-1]}"
    for key in ("default", "show_default", "multiple", "metavar"):
        if key in spec:
            assert getattr(param, key) == spec[key], (command, key)
