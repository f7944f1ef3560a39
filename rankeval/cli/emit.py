"""How a command's report reaches stdout or a file: the rich table for a terminal, plain text
for a file, and every other format from its report module."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable

from rankeval.cli.app import console


def emit(output: str, fmt: str, draw: Callable, text: Callable[[], str],
         to_stderr: bool = False) -> None:
    """``draw(console)`` prints the table; ``text()`` is any other format's text.

    The table goes to stdout (stderr when the data owns stdout), or as plain text to a file.
    """
    from rankeval.io.formats import STDOUT
    from rankeval.io.output import write_text

    if fmt != "table":
        write_text(output, text())
    elif output == STDOUT and to_stderr:
        draw(console(sys.stderr))
    else:  # drawn first, then written, so a closed stdout is handled in one place
        buffer = io.StringIO()
        if output == STDOUT:
            draw(console(buffer, like=sys.stdout))
        else:
            draw(console(buffer, plain=True))
        write_text(output, buffer.getvalue())


def check_html(fmt: str, html: str | None) -> None:
    """Before reading anything: an HTML report can be drawn and written."""
    from rankeval.io.output import check_writable

    if fmt == "html" or html is not None:
        from rankeval.report.html import check_available

        check_available()
    if html is not None:
        check_writable(html, "--html")


def write_html(path: str | None, render: Callable[[], str]) -> None:
    """``--html FILE``: the HTML report (``render()``, the command's) beside the chosen
    format."""
    if path is None:
        return
    from rankeval.io.output import write_text

    write_text(path, render())
