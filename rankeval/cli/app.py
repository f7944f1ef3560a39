"""The ``rankeval`` group and the one error boundary of the command line.

Heavy imports (pandas, pyarrow, rich) happen inside the commands so that ``--help`` is fast.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import click

from rankeval.cli.groups import group_of
from rankeval.cli.process import Signals, Terminated, said_stderr
from rankeval.dependencies import DependencyWarning
from rankeval.errors import EXIT_USAGE, RankevalError, flag
from rankeval.integrations import COMMANDS
from rankeval.io.output import remove_pending
from rankeval.io.paths import SUMMARY, check_command
from rankeval.notices import spelling
from rankeval.report import visible
from rankeval.version import __version__

INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def _debug_requested(args: list[str]) -> bool:
    return "--debug" in args or os.environ.get("RANKEVAL_DEBUG", "") not in ("", "0")


def _printable(text: str) -> str:
    """Messages carry file names and values from data: bytes that are not UTF-8 (surrogates)
    are shown, not crashed on, and control characters (ANSI escapes) are shown as escapes,
    never sent to the terminal."""
    return visible(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def error(message: str) -> None:
    click.echo(f"rankeval: error: {_printable(message)}", err=True)


# -q/--quiet anywhere on the command line: set once, before click parses anything, so that
# every warning is silenced wherever it comes from (an option's callback, a guess about the
# order of the files, a notice), not only those a command remembers to pass ``quiet`` to.
_quiet: ContextVar[bool] = ContextVar("rankeval_quiet", default=False)


def _quiet_requested(args: list[str]) -> bool:
    words = args[:args.index("--")] if "--" in args else args
    return any(w in ("-q", "--quiet") for w in words)


def warn(message: str) -> None:
    """A warning on stderr, unless -q/--quiet was given (errors always print)."""
    if _quiet.get():
        return
    click.echo(f"rankeval: warning: {_printable(message)}", err=True)


@contextmanager
def _dependency_warnings_said() -> Iterator[None]:
    """A release outside its tested range (``rankeval.dependencies``), warned by whichever
    tracker or engine starts, is one warning line like every other; other Python warnings
    are shown as Python shows them."""
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, DependencyWarning):
                warn(str(message))
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


# SIGTERM and every other catchable signal, raised where the main thread is (``process``).
_Terminated = Terminated


class _PipeClosed(Exception):
    """stdout was closed by the reader (``| head``); not an OSError, so click leaves it to us."""


CONFIG_KEY = "rankeval.config"  # ctx.meta: the configuration file a command read


def _check_paths(ctx: click.Context) -> None:
    summary = os.environ.get(SUMMARY) if ctx.info_name in COMMANDS else None
    config = ctx.meta.get(CONFIG_KEY)
    # each parameter as the command's usage names it: an argument's metavar (PREDS), an
    # option's long flag (--train)
    labels = {p.name: p.human_readable_name if isinstance(p, click.Argument) else
              max(p.opts, key=len) for p in ctx.command.params if p.name}
    check_command(ctx.params, [config] if config else [], summary or None, labels)


class GroupedCommand(click.Command):
    """A command whose ``--help`` lists its options by group (``group_of``), the common ones
    first, and ``-h/--help`` last under its own heading (drawn by ``helptext``).

    Every option has its group when the command is made: an option missing from the tables
    fails the import, not a user's ``--help``."""

    group = ""  # a subcommand's group ("interleave "): its rows are keyed "interleave score"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.key = self.group + (self.name or "")
        for param in self.params:
            if isinstance(param, click.Option):
                group_of(self.key, param)

    def get_help(self, ctx: click.Context) -> str:
        from rankeval.cli.helptext import command_help  # --help's import cost: cloup

        return command_help(self, ctx)


class RankevalGroup(click.Group):
    """The error boundary: every failure becomes one line on stderr and an exit code.

    Exit 1 is reserved for quality gates, so click's own exceptions (whose default is 1) are
    mapped to 2 here, and so is any unexpected crash.
    """

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Every command's files pass one rule (``io.paths``) once its options are parsed
        (config file and old spellings included), before its own code runs."""
        callback = cmd.callback
        if callback is not None:
            @functools.wraps(callback)
            def guarded(*args, **kwargs):
                _check_paths(click.get_current_context())
                return callback(*args, **kwargs)

            cmd.callback = guarded
        super().add_command(cmd, name)

    def get_help(self, ctx: click.Context) -> str:
        """``--help`` of ``rankeval`` or of a group of commands: its commands by job
        (``groups.SECTIONS``)."""
        from rankeval.cli.helptext import group_help  # --help's import cost: cloup

        return group_help(self, ctx)

    def invoke(self, ctx):
        # click turns EPIPE into exit 1, which is reserved for gates: intercept it first.
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _PipeClosed from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Run a command and decide its exit status, then say it: nothing written to stderr
        (a pipe closed early, a full disk) can change it, and a signal ends the run with
        128 + its number, its temporary outputs removed (``process``)."""
        argv = list(sys.argv[1:] if args is None else args)
        quiet = _quiet.set(_quiet_requested(argv))
        signals = Signals(cleanup=remove_pending, say=error)
        with said_stderr():
            try:
                try:
                    signals.install()
                    code = self._decide(argv, prog_name, complete_var, extra)
                except Terminated as exc:
                    signals.abandon()
                    signals.say_once(exc.signum)
                    code = exc.code
            except Terminated as exc:  # a signal while the first one was being said
                code = exc.code
            finally:
                signals.restore()
                _quiet.reset(quiet)
        if standalone_mode:
            sys.exit(code)
        return code

    def _decide(self, argv, prog_name, complete_var, extra) -> int:
        """The command's exit status: 0, 1 (a gate failed) or 2, with one line for errors."""
        try:
            with spelling(flag), _dependency_warnings_said():  # warnings name the flags
                code = super().main(
                    argv, prog_name or "rankeval", complete_var, standalone_mode=False, **extra
                )
            return code if isinstance(code, int) else 0
        except click.exceptions.Abort:
            error("interrupted")
            return INTERRUPTED
        except click.UsageError as exc:  # one line, like every other error
            where = exc.ctx.command_path if exc.ctx is not None else "rankeval"
            error(f"{' '.join(exc.format_message().split())} (see '{where} --help')")
            return EXIT_USAGE
        except click.ClickException as exc:
            error(" ".join(exc.format_message().split()))
            return EXIT_USAGE
        except RankevalError as exc:
            error(exc.render(flag))
            return exc.exit_code
        except KeyboardInterrupt:  # SIGINT where no handler of ours was set (not main thread)
            error("interrupted")
            return INTERRUPTED
        except MemoryError:  # pyarrow's ArrowMemoryError is one too
            error(
                "out of memory: the inputs need more memory than this machine has (about 200 "
                "bytes per prediction row); score the users in parts, e.g. split both files by "
                "user id, or use a machine with more memory"
            )
            return EXIT_USAGE
        except (BrokenPipeError, _PipeClosed):
            # `rankeval ... | head` closed our stdout: stop quietly. Point stdout at devnull so
            # the interpreter's final flush does not raise again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0
        except Exception as exc:
            if _debug_requested(argv):
                traceback.print_exc()
            error(
                f"internal error: {type(exc).__name__}: {exc} "
                "(run again with --debug for the traceback, and please report it)"
            )
            return EXIT_USAGE


def console(file, width: int | None = None, plain: bool = False, like=None):
    """A rich console on ``file``. ``NO_COLOR`` (any value) means no escape codes at all.

    ``like``: the stream the text is for (a terminal gets colour and its own width). Anything
    else gets a width no table reaches, so that no number is ever cut to fit 80 columns.
    """
    from rich.console import Console  # --help's import cost: rich, for the reports alone

    plain = plain or bool(os.environ.get("NO_COLOR"))
    stream = like if like is not None else file
    terminal = bool(getattr(stream, "isatty", lambda: False)())
    if width is None and not terminal:
        width = 100_000
    return Console(file=file, width=width, color_system=None if plain else "auto",
                   force_terminal=True if terminal and not plain else None)


def show_notices(notices, quiet: bool, prefix: str = "") -> None:
    """Warnings on stderr, each once, with the command line's option names."""
    if quiet:
        return
    seen = set()
    for notice in notices:
        text = notice.render(flag)
        if text not in seen:
            seen.add(text)
            warn(prefix + text)


def show_said(said, quiet: bool) -> None:
    """Warnings on stderr, each after what it is about (``CompareResult.said``: the truth's
    once, a run's after its name), with the command line's option names."""
    if not quiet:
        for prefix, notice in said:
            warn(prefix + notice.render(flag))


@click.group(cls=RankevalGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="rankeval")
def cli() -> None:
    """Evaluate rankings and recommendations against ground truth.

    \b
    rankeval score preds.csv truth.csv --k 10        # metrics per user and overall
    rankeval validate preds.csv truth.csv            # every problem, without scoring
    rankeval compare a.csv b.csv truth.csv           # which differences are real
    rankeval power a.csv b.csv truth.csv --effect 1% # how many users a difference needs
    rankeval convert preds.csv preds.run             # between CSV/TSV/Parquet/TREC/JSON
    rankeval metrics                                # what every metric means

    Exit codes: 0 success, 1 a quality gate failed, 2 usage or input error.
    """
