"""``python -m rankeval``: the command line, as the ``rankeval`` script runs it."""

from rankeval.cli import main

main()
