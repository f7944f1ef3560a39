"""Writing results: whole files appear at once (temporary file + rename) or not at all."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import OptionError

STDOUT = "-"
PER_USER_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def check_writable(path: str, flag: str) -> None:
    """Fail before any work when an output could not be written."""
    if path == STDOUT:
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise OptionError(f"{flag} {path}: the directory {parent} does not exist")
    if Path(path).is_dir():
        raise OptionError(f"{flag} {path}: is a directory")
    if not os.access(parent, os.W_OK):
        raise OptionError(f"{flag} {path}: cannot write to {parent}")


def per_user_format(path: str) -> str:
    if path == STDOUT:
        return "csv"
    suffix = Path(path).suffix.lower()
    if suffix not in PER_USER_FORMATS:
        raise OptionError(f"--per-user {path}: use a .csv or .parquet file name, or - for stdout")
    return PER_USER_FORMATS[suffix]


def write_atomic(path: str, write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` and move the result to ``path`` only when it succeeded."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: str, text: str) -> None:
    """Text to a file (atomically) or to stdout for ``-``."""
    if path == STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    write_atomic(path, write)


def write_per_user(frame, path: str) -> None:
    """The per-user frame as CSV (``-`` or ``.csv``) or Parquet, full precision."""
    fmt = per_user_format(path)
    if path == STDOUT:
        frame.to_csv(sys.stdout, index=False)
        sys.stdout.flush()
    elif fmt == "csv":
        write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False))
    else:
        write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
