"""The pre-commit hooks (``.pre-commit-hooks.yaml``): ``rankeval-hook validate FILE...``
checks each committed run or truth file on its own, as ``score`` would read it: its format,
its columns, empty ids, numbers, and repeated (user, item) pairs. What a file is comes from
its name (``.run``, ``.qrels``) or its header (a rank or score column: a run; a relevance
column: truth). The gate hook is ``rankeval score`` itself, with the hook's arguments.

Exit 0 when every file is sound, 2 when one is not (one line per problem on stderr, naming
the file, the column and example rows), as every rankeval command does for bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rankeval.errors import InputError, flag
from rankeval.settings import make_settings

USAGE = "usage: rankeval-hook validate FILE..."


def check_file(path: str) -> list[str]:
    """The problems of one run or truth file, each a line naming the file: the checks
    ``rankeval validate`` and ``score`` make of it (``engines.validation.validate_file``)."""
    # --help's import cost: numpy, pyarrow (the usage line needs neither)
    from rankeval.engines.validation import validate_file
    from rankeval.io.roles import guess_role  # --help's import cost: pyarrow

    try:
        role = guess_role(path, flag="the hook's files: pattern to leave it out")
    except InputError as exc:
        return [exc.render(flag)]
    if role is None:
        return [InputError(path, "cannot tell a run from a truth file: name it .run or .qrels, "
                           "or give it a rank or score column (a run) or a relevance column "
                           "(truth)").render(flag)]
    return [e.render(flag) for e in validate_file(path, role, make_settings()).errors]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "validate":
        print(USAGE, file=sys.stderr)
        return 2
    bad = 0
    for path in args[1:]:
        for line in check_file(path):
            print(f"rankeval: error: {line}", file=sys.stderr)
            bad += 1
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
