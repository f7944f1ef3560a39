"""Options from a config file: ``[tool.rankeval]`` in pyproject.toml, or a rankeval.toml.

The file gives defaults for every command's options (so a repository keeps its quality bar in
version control); flags on the command line override it. Each command reads the keys of its
own options and leaves the others' (``fail_under`` is score's: validate ignores it, and says
so under ``--verbose``); a key no command has is an error.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from rankeval.cli.groups import BY_COMMAND, BY_OPTION, GATES
from rankeval.errors import EXIT_GATE_FAILED, OptionError

CANDIDATES = ("rankeval.toml", "pyproject.toml")
# Keys whose values are paths, resolved against the config file's folder (every one of them,
# as the README says: a config file means the same wherever the command runs from).
PATH_KEYS = ("baseline", "junit", "output", "per_user")


def find_config(explicit: str | None, cwd: Path | None = None) -> tuple[Path, dict] | None:
    """The config to use: ``explicit``, else rankeval.toml, else pyproject.toml's section."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise OptionError(f"--config {explicit}: no such file")
        table = _section(path, required=True)
        assert table is not None  # required: _section raises without one
        return path, table
    here = cwd or Path.cwd()
    for name in CANDIDATES:
        path = here / name
        if path.is_file():
            table = _section(path, required=False)
            if table is not None:
                return path, table
    return None


def _section(path: Path, required: bool) -> dict | None:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise OptionError(f"{path}: not valid TOML ({exc})") from None
    if path.name == "pyproject.toml" or "tool" in doc:
        table = doc.get("tool", {}).get("rankeval")
    else:
        table = doc.get("rankeval", doc)  # rankeval.toml: top-level keys or a [rankeval] table
    if table is None and required:
        raise OptionError(f"{path}: no [tool.rankeval] section")
    if table is not None and not isinstance(table, dict):
        raise OptionError(f"{path}: [tool.rankeval] must be a table")
    return table


def default_map(path: Path, table: dict[str, Any], params: dict[str, Any],
                ctx=None, elsewhere: Collection[str] = (),
                ignored: list[str] | None = None) -> dict[str, Any]:
    """Config keys -> click defaults; ``params`` maps each key (a long flag without its dashes,
    ``fail_under``) to its click Option.

    A key belongs to the commands whose options it names: a key of another command only
    (``elsewhere``: every command's keys) is left to that command and appended to
    ``ignored``; a key of no command is an error. ``fail_under = {"ndcg@10" = 0.35}`` becomes
    ``["ndcg@10=0.35"]``; lists stay lists; paths are taken relative to the config file.
    """
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in params and name in elsewhere:
            if ignored is not None:
                ignored.append(key)
            continue
        if name not in params:
            close = difflib.get_close_matches(name, sorted({*params, *elsewhere}), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise OptionError(f"{path}: unknown key {key!r} in the rankeval settings{hint}")
        param = params[name]
        if isinstance(value, dict):
            value = [f"{m}={v}" for m, v in value.items()]
        if name in PATH_KEYS and isinstance(value, str) and value != "-":
            value = str(path.parent / value) if not Path(value).is_absolute() else value
        if getattr(param, "multiple", False):
            value = [str(v) for v in (value if isinstance(value, list) else [value])]
        elif isinstance(value, list):
            raise OptionError(f"{path}: {key} takes one value, not a list")
        if ctx is not None:
            _check(path, key, param, value, ctx)
        out[param.name] = value
    return out


def _check(path: Path, key: str, param, value: Any, ctx) -> None:
    """A bad value is said about the file and key, not about a flag nobody typed."""
    if getattr(param, "is_flag", False) and not isinstance(value, bool):
        raise OptionError(f"{path}: key {key!r}: expected true or false, got {value!r}")
    try:
        param.type_cast_value(ctx, value)
    except click.BadParameter as exc:
        raise OptionError(f"{path}: key {key!r}: {exc.message}") from None


# -- the options: --config and -v/--verbose ------------------------------------------

def config_option(f):
    """--config: a file whose settings become the defaults of the command's options."""
    return click.option(
        "--config", metavar="FILE", is_eager=True, expose_value=False, callback=_load_config,
        help="Read options from FILE ([tool.rankeval] in pyproject.toml, or rankeval.toml); by "
        "default ./rankeval.toml or ./pyproject.toml when they have the section. Flags "
        "override it.",
    )(f)


def config_keys(command: click.Command) -> dict[str, click.Option]:
    """The config keys of ``command``: its long flags without dashes (k, metrics, fail_under,
    format, ...), each to its option."""
    return {
        opt.lstrip("-").replace("-", "_"): p
        for p in command.params
        # Hidden old spellings are keys too: they fill in their new option, with a warning.
        if isinstance(p, click.Option) and p.name not in _NOT_KEYS
        for opt in p.opts
        if opt.startswith("--")
    }


_NOT_KEYS = ("config", "debug", "help", "verbose")
_IGNORED_KEY = "rankeval_config_ignored"


def _load_config(ctx: click.Context, param, value: str | None) -> None:
    found = find_config(value)
    if found is None:
        return
    path, table = found
    ctx.meta["rankeval.config"] = str(path)  # no output may replace it (cli.app.CONFIG_KEY)
    root = ctx.find_root().command
    siblings = getattr(root, "commands", {ctx.info_name: ctx.command})
    elsewhere = {key for command in siblings.values() for key in config_keys(command)}
    # an old spelling here that is another command's own option (compare's hidden
    # --baseline, score's --baseline report) is that command's key
    theirs = {key for command in siblings.values() if command is not ctx.command
              for key, p in config_keys(command).items() if not p.hidden}
    own = {key: p for key, p in config_keys(ctx.command).items()
           if not (p.hidden and key in theirs)}
    ignored: list[str] = []
    ctx.default_map = {**(ctx.default_map or {}),
                       **default_map(path, table, own, ctx, elsewhere, ignored)}
    ctx.meta[_IGNORED_KEY] = (path, ignored)


def verbose_option(f):
    """-v/--verbose: what the command read besides its inputs, on stderr."""
    return click.option("-v", "--verbose", is_flag=True, expose_value=False,
                        callback=_say_config,
                        help="Say which configuration file was read, and which of its keys "
                        "belong to other commands and were left to them.")(f)


def _say_config(ctx: click.Context, param, value: bool) -> None:
    if not value:
        return
    path, ignored = ctx.meta.get(_IGNORED_KEY, (None, []))
    if path is None:
        click.echo("rankeval: no configuration file read", err=True)
        return
    click.echo(f"rankeval: configuration read from {path}", err=True)
    if ignored:
        click.echo(f"rankeval: {path}: keys of other commands, ignored by "
                   f"{ctx.info_name}: {', '.join(ignored)}", err=True)



def shown_path(path: str) -> str:
    """The configuration file as the reports name it: relative to the working directory when
    it lies within it (``rankeval.toml``), else as read."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def config_in_use(ctx: click.Context) -> str | None:
    """The configuration file the command read (as ``shown_path`` names it), or None."""
    path = ctx.meta.get("rankeval.config")
    return shown_path(path) if path else None


def say_gates_from_file(ctx: click.Context) -> None:
    """After the gates' verdicts: the gate options the configuration file set, so that an
    exit 1 nobody typed a gate for names its source (one line on stderr)."""
    path = config_in_use(ctx)
    if path is None:
        return
    given = [max(p.opts, key=len) for p in ctx.command.params
             if isinstance(p, click.Option) and p.name and not p.hidden
             and _is_gate(ctx.info_name or "", p)
             and ctx.get_parameter_source(p.name) == ParameterSource.DEFAULT_MAP]
    if given:
        click.echo(f"rankeval: gates set in {path}: {', '.join(given)}", err=True)


def say_verdicts(verdicts, passed: bool, quiet: bool) -> int:
    """The gates' verdicts on stderr (a failed one always, a passed one unless --quiet), then,
    when one failed, the gates the configuration file set; the exit status: 1 when a gate
    failed, else 0."""
    for verdict in verdicts:
        if not verdict.passed or not quiet:
            click.echo(f"rankeval: {verdict.message()}", err=True)
    if not passed:
        say_gates_from_file(click.get_current_context())
    return 0 if passed else EXIT_GATE_FAILED


def _is_gate(command: str, param: click.Option) -> bool:
    """Whether ``param`` is a gate of ``command`` (the groups table's Gates)."""
    return (BY_COMMAND.get(command, {}).get(param.name or "")
            or BY_OPTION.get(param.name or "")) == GATES
