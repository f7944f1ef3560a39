"""``rankeval config [COMMAND [OPTIONS...]]``: every option in effect and where its value came
from (default, the configuration file, the environment, the command line), without running
anything; or, without COMMAND, the configuration file in use and which commands read each key.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from rankeval.cli.app import GroupedCommand, cli
from rankeval.cli.config import CANDIDATES, config_keys, find_config, shown_path
from rankeval.cli.groups import group_of
from rankeval.errors import OptionError
from rankeval.io.formats import STDOUT
from rankeval.io.output import write_text
from rankeval.registry import DEFAULT_K, DEFAULT_METRICS
from rankeval.settings import ROWS, UNSET

# click's sources, as ``rankeval config`` names them
SOURCES = {ParameterSource.DEFAULT: "default", ParameterSource.DEFAULT_MAP: "file",
           ParameterSource.ENVIRONMENT: "environment", ParameterSource.COMMANDLINE: "option",
           ParameterSource.PROMPT: "option"}
# What -k and -m left out mean (the registry's defaults)
UNSET_MEANS: dict[str, Any] = {"k": list(DEFAULT_K), "metrics": list(DEFAULT_METRICS)}
# Options read from the environment by rankeval itself, not by click
OWN_ENVIRONMENT = {"debug": "RANKEVAL_DEBUG"}


@cli.command("config", cls=GroupedCommand,
             context_settings={"ignore_unknown_options": True,
                               "allow_interspersed_args": False})
@click.argument("command", required=False, metavar="[COMMAND]")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[OPTIONS...]")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Report format (its own, before COMMAND).")
def config_command(command: str | None, args: tuple[str, ...], fmt: str) -> int:
    """Show the options in effect for COMMAND given OPTIONS, each with its value and source:
    default, file (rankeval.toml, pyproject.toml's [tool.rankeval], or --config FILE),
    environment, or option (the command line). Nothing is read but the configuration file.
    Without COMMAND: the configuration file in use, its keys and the commands that read each.

    \b
    Examples:
      rankeval config
      rankeval config score
      rankeval config score --k 5 --gain exponential
      rankeval config -f json compare --config ci/rankeval.toml
    """
    ctx = click.get_current_context()
    if command is None:
        doc = _file_keys(ctx)
    else:
        target = cli.commands.get(command)
        if target is None or command == "config":
            names = ", ".join(n for n in cli.commands if n != "config")
            raise OptionError(f"rankeval config: no command {command!r}; one of {names}")
        if isinstance(target, click.Group):  # interleave: its subcommand names the options
            doc = _subcommand(ctx, command, target, list(args))
        else:
            doc = _in_effect(ctx, command, target, list(args))
    write_text(STDOUT, json.dumps(doc, indent=2) + "\n" if fmt == "json" else _table(doc))
    return 0


def _subcommand(ctx: click.Context, name: str, group: click.Group,
                args: list[str]) -> dict[str, Any]:
    """``rankeval config interleave score ...``: the subcommand's options in effect; the
    group alone: its subcommands."""
    if args and args[0] in group.commands:
        return _in_effect(ctx, f"{name} {args[0]}", group.commands[args[0]], args[1:])
    if args:
        raise OptionError(f"rankeval config {name}: no subcommand {args[0]!r}; one of "
                          f"{', '.join(group.commands)}")
    return {"command": name, "config": _file_keys(ctx)["config"], "inputs": {},
            "options": [], "subcommands": sorted(group.commands)}


def _in_effect(ctx: click.Context, name: str, command: click.Command,
               args: list[str]) -> dict[str, Any]:
    """Parse ``args`` as ``name``'s options (its positional inputs optional, nothing run)."""
    shadow = copy.copy(command)
    shadow.params = [copy.copy(p) for p in command.params]
    for p in shadow.params:  # what the command requires is not asked for here
        p.required = False
    with shadow.make_context(name, args, parent=ctx) as sub:
        config = sub.meta.get("rankeval.config")
        rows = []
        for p in shadow.params:
            if not isinstance(p, click.Option) or p.hidden or not p.expose_value or not p.name:
                continue
            source = SOURCES.get(sub.get_parameter_source(p.name) or ParameterSource.DEFAULT,
                                 "default")
            env = OWN_ENVIRONMENT.get(p.name)
            if source == "default" and env and os.environ.get(env, "") not in ("", "0"):
                source, value = "environment", True
            else:
                compat = sub.params.get("compat")
                value = _effective(p.name, sub.params.get(p.name), compat)
                if (source == "default" and compat and p.name in ROWS
                        and ROWS[p.name].preset(compat.lower()) is not UNSET):
                    source = f"default of --compat {compat}"
            rows.append({"option": max(p.opts, key=len), "value": _plain(value),
                         "source": source, "group": group_of(name, p)})
        inputs = {p.human_readable_name: _plain(sub.params.get(p.name or ""))
                  for p in shadow.params if isinstance(p, click.Argument)}
    return {"command": name, "config": shown_path(config) if config else None,
            "inputs": inputs, "options": rows}


def _effective(name: str, value: Any, compat: str | None) -> Any:
    """What an option left unset means: a setting's default (its preset's, under --compat),
    the default metrics and cut-offs."""
    if value in (None, ()) and name in ROWS:
        preset = ROWS[name].preset(compat.lower()) if compat else UNSET
        return ROWS[name].default if preset is UNSET else preset
    if value == () and name in UNSET_MEANS:
        return UNSET_MEANS[name]
    return value


def _file_keys(ctx: click.Context) -> dict[str, Any]:
    """The configuration file found in the working directory and each key's commands."""
    found = find_config(None)
    if found is None:
        return {"command": None, "config": None, "keys": [],
                "looked_for": [str(Path.cwd() / n) for n in CANDIDATES]}
    path, table = found
    keys = {n: config_keys(c) for n, c in cli.commands.items() if n != "config"}
    rows = [{"key": key, "value": _plain(value),
             "commands": [n for n, own in keys.items() if key.replace("-", "_") in own]}
            for key, value in table.items()]
    return {"command": None, "config": shown_path(str(path)), "keys": rows}


def _plain(value: Any) -> Any:
    """A value as JSON holds it: tuples as lists."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _shown(value: Any) -> str:
    if value is None or value == []:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _table(doc: dict[str, Any]) -> str:
    """The document as aligned plain columns."""
    head = f"configuration file: {doc['config'] or 'none'}"
    if doc["command"] is None:
        if doc["config"] is None:
            return head + " (looked for " + ", ".join(doc["looked_for"]) + ")\n"
        rows = [("key", "value", "read by")] + [
            (r["key"], _shown(r["value"]), ", ".join(r["commands"]) or "no command")
            for r in doc["keys"]]
    elif "subcommands" in doc:
        return (f"rankeval {doc['command']}: {head}\nsubcommands: "
                f"{', '.join(doc['subcommands'])} (rankeval config {doc['command']} NAME)\n")
    else:
        rows = [("option", "value", "source", "group")] + [
            (r["option"], _shown(r["value"]), r["source"], r["group"]) for r in doc["options"]]
        head = f"rankeval {doc['command']}: " + head
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    return head + "\n" + "\n".join(lines) + "\n"
