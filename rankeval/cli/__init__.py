"""The command line: a thin shell over the library. ``app`` holds the group and the one error
boundary, ``options`` the shared option vocabulary, and each command has its own module."""

from __future__ import annotations

import gc

from . import compare, convert, metrics, power, score, validate  # noqa: F401  (register the commands)
from .app import cli
from .metrics import metrics_markdown
from .score import score as score_command


def main() -> None:
    """The console entry point (``rankeval`` and ``python -m rankeval``)."""
    try:
        cli.main()  # exits
    finally:
        # The process ends here: with every object frozen out of the collector's reach, the
        # interpreter's exit skips its full collections over all the modules' objects (20 ms
        # of a 0.4 s run). Files are closed by then; memory goes back with the process.
        gc.freeze()


__all__ = ["cli", "main", "metrics_markdown", "score_command"]
