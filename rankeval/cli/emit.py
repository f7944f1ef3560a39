"""How a command's report reaches stdout or a file: the rich table for a terminal, plain text
for a file, and every other format from its report module."""

from __future__ import annotations

import io
import os
import sys
from typing import Any

from rankeval.cli.app import console, warn
from rankeval.io.formats import STDOUT
from rankeval.io.output import check_writable, write_text
from rankeval.report import FORMATS, check_available, renderer


def emit(output: str, fmt: str, command: str, subject: Any, to_stderr: bool = False,
         **options: Any) -> None:
    """Write ``command``'s result ``subject`` in format ``fmt`` to ``output``.

    A console format (the table) goes to stdout (stderr when the data owns stdout), or as plain
    text to a file; every other format is its module's text.
    """
    render = renderer(fmt, command)
    if not FORMATS[fmt].console:
        write_text(output, render(subject, **options))
    elif output == STDOUT and to_stderr:
        render(subject, console(sys.stderr), **options)
    else:  # drawn first, then written, so a closed stdout is handled in one place
        buffer = io.StringIO()
        if output == STDOUT:
            render(subject, console(buffer, like=sys.stdout), **options)
        else:
            render(subject, console(buffer, plain=True), **options)
        write_text(output, buffer.getvalue())


def check_html(fmt: str, html: str | None) -> None:
    """Before reading anything: an HTML report can be drawn and written."""
    check_available(fmt)
    if html is not None:
        check_available("html")
    if html is not None:
        check_writable(html, "--html")


def write_html(path: str | None, command: str, subject: Any) -> None:
    """``--html FILE``: the HTML report of ``command``'s result beside the chosen format."""
    if path is None:
        return
    write_text(path, renderer("html", command)(subject))


def step_summary(result: Any, command: str) -> None:
    """On GitHub Actions (GITHUB_STEP_SUMMARY names a file): the Markdown summary of the
    result appended to it; a summary that cannot be written is a warning."""
    if not os.environ.get("GITHUB_STEP_SUMMARY"):  # the Markdown module (and rich) only then
        return
    # --help's import cost: numpy, pyarrow (the Markdown module, on GitHub Actions alone)
    from rankeval.report.markdown import append_step_summary

    problem = append_step_summary(result, command=command)
    if problem:
        warn(problem)
