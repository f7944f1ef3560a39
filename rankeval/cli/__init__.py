"""The command line: a thin shell over the library. ``app`` holds the group and the one error
boundary, ``options`` the shared option vocabulary, and each command has its own module."""

from __future__ import annotations

import gc

import rankeval.cli.interleave  # noqa: F401  (registers the interleave commands)
from rankeval.cli import (  # noqa: F401  (register the commands)
    agree,
    compare,
    convert,
    metrics,
    ope,
    power,
    sampled,
    score,
    settings_cmd,
    validate,
)
from rankeval.cli.app import cli
from rankeval.cli.metrics import metrics_markdown
from rankeval.cli.score import score as score_command


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
