"""Writing results: whole files appear at once (temporary file + rename) or not at all."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..errors import OptionError
from .formats import STDOUT

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


def csv_bytes(table, delimiter: str = ",") -> bytes:
    """A table as CSV text with shortest round-trip floats, quoting only where a value needs it.

    (Arrow would quote every string; plain ids read and diff better.)
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    special = f'[{delimiter}"\\r\\n]'
    quote = any(
        pc.any(pc.match_substring_regex(table.column(name), special)).as_py()
        for name in table.column_names
        if pa.types.is_string(table.column(name).type)
    )
    sink = pa.BufferOutputStream()
    options = pa_csv.WriteOptions(
        include_header=False, delimiter=delimiter, quoting_style="needed" if quote else "none"
    )
    pa_csv.write_csv(table, sink, options)
    header = delimiter.join(table.column_names) + "\n"  # our own names: never need quotes
    return header.encode() + sink.getvalue().to_pybytes()


def write_bytes(path: str, data: bytes) -> None:
    """Bytes to a file (atomically) or to stdout for ``-``."""
    if path == STDOUT:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    write_atomic(path, write)


def write_per_user(table, path: str) -> None:
    """The per-user Arrow table as CSV (``-`` or ``.csv``) or Parquet, full precision."""
    if per_user_format(path) == "csv":
        write_bytes(path, csv_bytes(table))
    else:
        import pyarrow.parquet as pq

        write_atomic(path, lambda tmp: pq.write_table(table, tmp))
