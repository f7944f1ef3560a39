"""Bytes to tables: an input from a path or standard input (a file, a FIFO, gzipped or not, in
UTF-8 or another encoding), read by its format's module (``formats``).

Readers know formats, not meaning: the caller names the columns it wants and their types.
A value that does not convert is reported with the file, the column and example rows.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

from rankeval.errors import InputError, OptionError, one_line
from rankeval.io.cast import cast_columns
from rankeval.io.formats import FORMATS, STDIN, UNITS, named_format
from rankeval.io.formats.delimited import DELIMITERS
from rankeval.io.formats.sniff import LOOK_BYTES, PARQUET_MAGIC, Sniffed, sniff
from rankeval.io.options import OWN, own_option

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Source:
    """Where a table came from, for messages and reports."""

    path: str  # as given; "-" for standard input
    format: str
    rows: int
    tag: str | None = None  # a TREC run's tag (of its last line: trec_eval's runid)
    extra_fields: int = 0  # TREC lines whose fields past the layout's were not read
    comment: int | None = None  # the line number of a TREC file's first '#' comment line

    @property
    def label(self) -> str:
        return "<stdin>" if self.path == STDIN else self.path

    @property
    def unit(self) -> str:
        """What error messages count: ``row``, ``line`` or ``entry``."""
        return UNITS.get(self.format, "row")


class Table:
    """An opened input: its column names, and a way to read chosen columns with chosen types."""

    def __init__(
        self, path: str, fmt: str | None, stdin: BinaryIO | None = None,
        role: str = "predictions", delimiter: str | None = None, encoding: str | None = None,
        decimal: str | None = None, flag: str = "--format",
    ):
        """``fmt`` None: told from the content (``formats.sniff``; ``flag``: the option a
        content that reads two ways asks for)."""
        self.path = path
        self.role = role
        self.label = "<stdin>" if path == STDIN else path
        self._set_format(fmt or "csv", delimiter)
        self.decimal = decimal or "."
        self.header: list[str] | None = None  # names read in place of the header line
        self.sequences: dict[str, str] = {}  # column -> separator of a sequence in one field
        self.vectors: set[str] = set()  # ... of those, the sequences of numbers (vectors)
        self.sniffed: Sniffed | None = None  # the format told from the content
        self._buffer: bytes | None = None
        self._gzip = False
        self._parsed: pa.Table | None = None  # formats parsed whole on opening
        if path == STDIN:
            if stdin is None and sys.stdin is None:
                raise InputError(self.label, "standard input is closed")
            self._read_stream(stdin or sys.stdin.buffer, "standard input is empty")
        elif self._check_path() or not _encodable(path):
            # a FIFO, /dev/stdin, a process substitution (a stream), or a name Arrow cannot
            # take (not UTF-8): read through Python
            try:
                with open(path, "rb") as fh:
                    self._read_stream(fh, "is empty (nothing came through it)")
            except OSError as exc:
                raise InputError(self.label, f"cannot read: {one_line(exc)}") from None
        if fmt is None:
            self._sniff(encoding, delimiter, flag)
        else:
            self._decode(encoding)
        if self.kind.whole:
            parsed = self._parse()
            self._parsed = _flat(parsed) if role in NESTED else parsed
            self.columns = list(self._parsed.column_names)
        else:
            self.columns = self.kind.codec().columns(self)

    def _set_format(self, fmt: str, delimiter: str | None) -> None:
        self.format = fmt
        self.kind = FORMATS[fmt]
        self.unit = self.kind.unit  # how errors count rows
        self.delimiter = delimiter or DELIMITERS.get(fmt, ",")
        self.delimiter_given = delimiter is not None

    def _sniff(self, encoding: str | None, delimiter: str | None, flag: str) -> None:
        """The format told from the first bytes: Parquet by its magic, else the text's
        (decoded first)."""
        if self.head(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
            self._set_format("parquet", delimiter)
            return
        self._decode(encoding)  # as text
        found = sniff(self.head(LOOK_BYTES + 1), self.label, flag, delimiter)
        self._set_format(found.format, delimiter or found.delimiter)
        self.delimiter_given = True  # the sniffed delimiter is the file's, never re-guessed
        self.sniffed = found

    def described(self, rows: int) -> Source:
        """Where ``rows`` rows came from, with what the format's parser noted."""
        meta = (self._parsed.schema.metadata or {}) if self._parsed is not None else {}
        tag = meta.get(b"rankeval.tag")
        return Source(self.path, self.format, rows,
                      tag=tag.decode("utf-8", "replace") if tag is not None else None,
                      extra_fields=int(meta.get(b"rankeval.extra_fields", b"0")),
                      comment=int(meta[b"rankeval.comment"]) if b"rankeval.comment" in meta
                      else None)

    def longer_lines(self) -> bool:
        """Whether every line of a TREC file had fields past its layout's (a fifth in qrels:
        trec_eval's prefs layout, ``qid group subgroup docno level``)."""
        if self._parsed is None or not self._parsed.num_rows:
            return False
        meta = self._parsed.schema.metadata or {}
        return int(meta.get(b"rankeval.extra_fields", b"0")) == self._parsed.num_rows

    def raw(self) -> bytes:
        """The input's text as bytes (decompressed, decoded to UTF-8), read again."""
        return self._bytes()

    def _bytes(self) -> bytes:
        try:
            with self.open() as fh:
                return fh.read()
        except (OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot read: {one_line(exc)}") from None

    def _parse(self) -> pa.Table:
        try:
            return self.kind.codec().parse(self._bytes(), self.role, self.label)
        except pa.ArrowInvalid as exc:  # TREC text Arrow could not hold
            if "utf8" in str(exc).lower():
                raise self.not_utf8() from None
            raise

    def _gunzip(self, data: bytes) -> bytes:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot decompress gzip data: {exc}") from None

    def _read_stream(self, fh: BinaryIO, empty: str) -> None:
        data = fh.read()
        if data[:2] == _GZIP_MAGIC:
            data = self._gunzip(data)
        if not data:
            raise InputError(self.label, empty)
        self._buffer = data

    def _check_path(self) -> bool:
        """Check a named input; True when it is a stream rather than a regular file."""
        p = Path(self.path)
        if not p.exists():
            raise InputError(self.label, "no such file")
        if p.is_dir():
            raise InputError(self.label, "is a directory, not a file")
        if not os.access(p, os.R_OK):
            raise InputError(self.label, "permission denied")
        if not stat.S_ISREG(p.stat().st_mode):
            return True
        if p.stat().st_size == 0:
            raise InputError(self.label, "file is empty")
        # Trust the bytes, not the name: `run.txt` may be gzip and `run.csv.gz` may be plain.
        with open(p, "rb") as fh:
            self._gzip = fh.read(2) == _GZIP_MAGIC
        return False

    def _decode(self, encoding: str | None) -> None:
        """Text in another encoding (``encoding``, or UTF-16 known by its byte-order mark) is
        transcoded to UTF-8 in memory; UTF-8 itself is read as it is."""
        if self.kind.binary:
            return
        head = self._buffer[:2] if self._buffer is not None else self.head(2)
        if not encoding and head in (b"\xff\xfe", b"\xfe\xff"):
            encoding = "utf-16"
        if not encoding or codecs.lookup(encoding).name == "utf-8":
            return
        data = self._buffer if self._buffer is not None else self._bytes()
        try:
            self._buffer = data.decode(encoding).encode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InputError(self.label, f"line {line} is not valid {encoding} text") from None
        except (UnicodeError, ValueError) as exc:  # codecs that fail without a position (idna)
            raise InputError(self.label, f"is not valid {encoding} text: {one_line(exc)}"
                             ) from None
        self._gzip = False

    def not_utf8(self) -> InputError:
        """The error for text that is not UTF-8, naming the first bad line (error path)."""
        data = self._bytes()
        try:
            data.decode("utf-8")
            where = ""
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            where = f" at {self.unit if self.unit != 'entry' else 'line'} {line}"
            if self.unit == "row":  # rows are counted after the header
                where = f" at row {line - 1}" if line > 1 else " in the header"
            where += f" ({data[exc.start:exc.start + 4]!r})"
        return InputError(self.label, f"holds bytes that are not UTF-8 text{where}; name "
                          f"its encoding with {encoding_option(self.role)} (for example "
                          "latin-1)")

    def head(self, n: int) -> bytes:
        """The first ``n`` bytes of the (decompressed, decoded) input."""
        with self.open() as fh:
            return fh.read(n)

    def open(self) -> io.BufferedIOBase:
        """The input's bytes as a stream (decompressed, decoded)."""
        if self._buffer is not None:
            return io.BytesIO(self._buffer)
        if self._gzip:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")

    def source(self):
        """The input as Arrow reads it: a buffer, a (decompressing) stream, or a path."""
        if self._buffer is not None:
            return pa.BufferReader(self._buffer)
        if not self.kind.binary:
            # Explicit compression: Arrow would otherwise guess it from the extension.
            return pa.input_stream(self.path, compression="gzip" if self._gzip else None)
        return self.path

    def nested(self, name: str) -> pa.ChunkedArray | None:
        """A list-typed column as stored (Parquet item vectors), or None when the column is
        flat or the format has no nested types."""
        if self._parsed is not None:
            col = self._parsed.column(name)
            return col if pa.types.is_nested(col.type) else None
        return self.kind.codec().nested(self, name)

    def read(self, types: dict[str, pa.DataType]) -> pa.Table:
        """Read just the columns in ``types`` (which must exist), converted to those types."""
        if self._parsed is not None:
            return cast_columns(self._parsed.select(list(types)), types, self.label, self.unit)
        table = self.kind.codec().read(self, types)
        # The parser's buffers go back to the system now where the pool can say so at once
        # (mimalloc, glibc); jemalloc, the command line's, returns them by its timed decay.
        pa.default_memory_pool().release_unused()
        return table

    def size(self) -> float:
        """Bytes of the text to parse (infinite when unknown: gzip)."""
        if self._buffer is not None:
            return len(self._buffer)
        return float("inf") if self._gzip else os.path.getsize(self.path)


# The inputs whose nested objects are read as dotted columns: event logs (an id given as an
# object elsewhere stays the error it is).
NESTED = ("log",)


def _flat(table: pa.Table) -> pa.Table:
    """Nested objects (JSON's ``{"event_attributes": {"position": {"ordinal": 3}}}``, as
    OpenSearch UBI writes its events) as columns of dotted names
    (``event_attributes.position.ordinal``); lists stay as they are."""
    while any(pa.types.is_struct(field.type) for field in table.schema):
        table = table.flatten()
    return table


def check_encoding(encoding: str, option: str = "encoding") -> None:
    """A text encoding Python knows (not a bytes-to-bytes codec: rot13, base64, zlib)."""
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        raise OptionError(f"{{option}}: unknown encoding {encoding!r}", option) from None
    if not getattr(info, "_is_text_encoding", True):  # CPython's mark of a non-text codec
        raise OptionError(f"{{option}}: {encoding!r} is not a text encoding (it turns bytes "
                          "into bytes); name the encoding of the text, e.g. latin-1", option)


def _encodable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # bytes of another encoding in the name
        return False
    return True


def encoding_option(role: str) -> str:
    """The option that names the encoding of the input ``role``, as ``{opt:...}``."""
    return own_option("encoding", role)


def for_role(reading: Mapping[str, Any] | None, role: str) -> dict[str, Any]:
    """How to read the text of the input ``role`` (``open_table``'s keywords): each of
    ``OWN``'s values, the input's own (``preds_delimiter``) over the one of every input
    (``delimiter``)."""
    given = dict(reading or {})
    out = {name: given.get(own.get(role, "")) or given.get(name) for name, own in OWN.items()}
    if out["delimiter"] is not None:
        out["delimiter"] = delimiter_char(out["delimiter"])
    return out


# A delimiter named as the messages and shells write it
NAMED_DELIMITERS = {"\\t": "\t", "tab": "\t", "\\s": " ", "space": " ", "comma": ",",
                    "semicolon": ";", "pipe": "|"}
DECIMALS = (".", ",")


def delimiter_char(value: str, option: str = "delimiter") -> str:
    """The one character a ``--delimiter`` names: itself, or ``\\t`` (as written in a
    shell's single quotes), ``tab``, ``comma``, ``semicolon``, ``pipe``, ``space``."""
    char = NAMED_DELIMITERS.get(value.lower(), value)
    if len(char) != 1:
        raise OptionError(f"{{option}} must be one character (or \\t, tab, comma, semicolon, "
                          f"pipe), got {value!r}", option)
    return char


def open_table(
    path: str | os.PathLike,
    fmt: str | None = None,
    flag: str = "--format",
    stdin: BinaryIO | None = None,
    role: str = "predictions",
    delimiter: str | None = None,
    encoding: str | None = None,
    decimal: str | None = None,
) -> Table:
    """Open ``path`` ("-" for standard input) as a table in ``fmt`` (default: by extension).

    ``role`` picks the layout of formats that differ for a run and the truth (TREC, JSON);
    ``delimiter`` overrides CSV's comma (a header with ``;`` and no comma is read with ``;``);
    ``encoding`` names a text encoding other than UTF-8 (``latin-1``); ``decimal`` the
    decimal mark of delimited numbers (``,``: ``0,5``).
    """
    path = os.fspath(path)
    if encoding:
        check_encoding(encoding)
    if delimiter is not None:
        delimiter = delimiter_char(delimiter)
    if decimal is not None and decimal not in DECIMALS:
        raise OptionError(f"{{option}} is '.' or ',', got {decimal!r}", "decimal")
    if decimal is not None and decimal == delimiter:
        raise OptionError(f"{{option}} {decimal!r} is also the delimiter: name another "
                          "delimiter with {opt:delimiter} (';' is usual beside decimal "
                          "commas)", "decimal")
    return Table(path, named_format(path, fmt, flag), stdin=stdin, role=role,
                 delimiter=delimiter, encoding=encoding, decimal=decimal, flag=flag)


