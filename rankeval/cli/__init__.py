"""The command line: a thin shell over the library. ``app`` holds the group and the one error
boundary, ``options`` the shared option vocabulary, and each command has its own module."""

from __future__ import annotations

from . import compare, convert, metrics, score, validate  # noqa: F401  (register the commands)
from .app import cli
from .metrics import metrics_markdown
from .score import score as score_command


def main() -> None:
    """The console entry point (``rankeval`` and ``python -m rankeval``)."""
    cli.main()


__all__ = ["cli", "main", "metrics_markdown", "score_command"]
