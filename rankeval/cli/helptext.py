"""``--help`` as people read it: cloup (option groups, command sections) draws each command's
options by group and each group's commands by job, from the tables of ``groups``.

Commands are click's own; this module is loaded when help is asked for, so that a run never
imports cloup (and the package metadata cloup reads at import). A command's help is drawn by
a cloup twin: the same parameters, texts and usage, in a cloup context under the same parent.
"""

from __future__ import annotations

from collections.abc import Mapping

import click
import cloup

from rankeval.cli.groups import COMMON, COMMON_TITLE, OLD, ORDER, SECTIONS, group_of


def assign(command: str, params: list[click.Parameter]) -> None:
    """Mark each option of ``command`` with its group (one ``cloup.OptionGroup`` per title).

    The groups come out in cloup's order of first appearance: the parameters are not
    reordered (their order is their processing order), so ``order`` below sorts the groups."""
    groups: dict[str, cloup.OptionGroup] = {}
    for param in params:
        if isinstance(param, click.Option):
            title = group_of(command, param)
            if title not in groups:
                groups[title] = cloup.OptionGroup(title, hidden=title == OLD)
            param.group = groups[title]  # type: ignore[attr-defined]  # cloup's marker


def order(command: str, groups: list[cloup.OptionGroup]) -> list[cloup.OptionGroup]:
    """The groups of ``command`` in ``--help``'s order, the common options in ``COMMON``'s."""
    rank = {title: i for i, title in enumerate((COMMON_TITLE, *ORDER, OLD))}
    first = COMMON.get(command, ())
    for group in groups:
        if group.title == COMMON_TITLE:
            group.options = sorted(group.options, key=lambda p: first.index(p.name or ""))
    return sorted(groups, key=lambda g: rank[g.title])


def sections(commands: Mapping[str, click.Command], group: str = "") -> list[cloup.Section]:
    """``SECTIONS[group]`` over the registered ``commands``; any other command under its own
    heading, so none is left out."""
    table = SECTIONS.get(group, ())
    out = [cloup.Section(title, [commands[n] for n in names if n in commands])
           for title, names in table]
    listed = {n for _, names in table for n in names}
    rest = [c for n, c in sorted(commands.items()) if n not in listed]
    return out + ([cloup.Section("Other commands", rest)] if rest else [])


class _Command(cloup.Command):
    """A command's twin: ``-h/--help`` under its own heading, last."""

    def get_default_option_group(self, ctx: click.Context,
                                 is_the_only_visible_option_group: bool = False):
        group = super().get_default_option_group(ctx, is_the_only_visible_option_group)
        group.title = "Help"
        return group


class _Group(cloup.Group):
    """A group's twin: its commands by job (``groups.SECTIONS``, keyed by its path below
    ``rankeval``)."""

    def __init__(self, *args, path: str, listed: Mapping[str, click.Command], **kwargs):
        super().__init__(*args, **kwargs)
        self.path = path
        self.listed = listed

    def list_sections(self, ctx, include_default_section: bool = True):
        return sections(self.listed, self.path)


def _texts(command: click.Command) -> dict:
    return {"name": command.name, "params": command.params, "help": command.help,
            "epilog": command.epilog, "short_help": command.short_help,
            "options_metavar": command.options_metavar,
            "add_help_option": command.add_help_option, "hidden": command.hidden,
            "deprecated": command.deprecated}


def _drawn(twin: click.Command, ctx: click.Context) -> str:
    """``twin``'s help in a cloup context standing where ``ctx`` stands."""
    context = cloup.Context(twin, info_name=ctx.info_name, parent=ctx.parent,
                            terminal_width=ctx.terminal_width,
                            max_content_width=ctx.max_content_width,
                            help_option_names=ctx.help_option_names, color=ctx.color)
    return twin.get_help(context)


def twin(command: click.Command) -> cloup.Command:
    """The cloup command that draws ``command``'s help: its options by group
    (``groups.group_of``), in ``--help``'s order."""
    key = getattr(command, "key", command.name or "")
    assign(key, command.params)
    drawn = _Command(**_texts(command))
    drawn.option_groups = order(key, drawn.option_groups)
    return drawn


def command_help(command: click.Command, ctx: click.Context) -> str:
    """A command's ``--help``."""
    return _drawn(twin(command), ctx)


def group_help(group: click.Group, ctx: click.Context) -> str:
    """A group's ``--help`` (``rankeval``, ``rankeval interleave``): its commands by job."""
    path = []
    at: click.Context | None = ctx
    while at is not None and at.parent is not None:
        path.append(at.info_name or "")
        at = at.parent
    twin = _Group(**_texts(group), path=" ".join(reversed(path)), listed=group.commands,
                  subcommand_metavar=group.subcommand_metavar, chain=group.chain,
                  invoke_without_command=group.invoke_without_command,
                  no_args_is_help=group.no_args_is_help)
    return _drawn(twin, ctx)
