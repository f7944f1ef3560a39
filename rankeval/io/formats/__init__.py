"""The input formats: one module per format (``delimited`` for CSV and TSV, ``recbole`` for
RecBole's atomic files, ``parquet``,
``trec``, ``json``, ``jsonl``) and this registry of them, pure data (no pyarrow), so that the
command line's choices and ``--help`` derive from it cheaply.

A format's module gives what its row says it can do. Every module: ``encode(table, kind,
tag)`` (bytes to write, for ``rankeval convert``), and ``spark_read(spark, path, role,
reading)`` when the Spark engine reads it. A format parsed whole when opened (``whole``:
its own layout) gives ``parse(data, role, label)``; the others are read column by column:
``columns(table)``, ``read(table, types)`` and ``nested(table, name)`` over an opened
``readers.Table``. A new format is a module plus a row.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from rankeval.errors import InputError, OptionError

STDIN = "-"
STDOUT = "-"


@dataclass(frozen=True)
class InputFormat:
    name: str
    extensions: tuple[str, ...]
    help: str
    module: str  # under rankeval.io.formats, imported when a file is read or written
    unit: str = "row"  # what messages count: data rows after a header, lines, or entries
    whole: bool = False  # parsed whole when opened (a layout of its own), else by column
    binary: bool = False  # not text: nothing to decode, no header line, never gzipped whole
    spark: bool = True  # the Spark engine reads it
    # the format's name for one role ("run" for predictions, "qrels" for the truth)
    names: dict[str, str] = field(default_factory=dict)
    layouts: bool = False  # a run and the truth have different layouts (say which is which)
    tells_kind: bool = False  # ... and the file itself tells which (its number of fields)
    ranked: bool = False  # written as ranked lists with a score (no row order of its own)
    tagged: bool = False  # a run carries a tag (--tag)
    aliases: tuple[str, ...] = ()  # other names accepted, not offered

    def codec(self) -> ModuleType:
        """The module that reads and writes this format."""
        return importlib.import_module(f"{__name__}.{self.module}")

    def shown(self, role: str) -> str:
        """The name a user knows for this role: ``run``, ``qrels``, or the format's."""
        return self.names.get(role, self.name)


FORMATS: dict[str, InputFormat] = {f.name: f for f in (
    InputFormat("csv", (".csv",), "comma-separated, header row", "delimited"),
    InputFormat("tsv", (".tsv", ".tab"), "tab-separated, header row", "delimited"),
    InputFormat("recbole", (".inter", ".item", ".user"), "RecBole atomic file: tab-separated, "
                "typed header (user_id:token, score:float)", "recbole", spark=False),
    InputFormat("parquet", (".parquet", ".pq"), "Apache Parquet", "parquet", binary=True),
    InputFormat("trec", (".run", ".trec", ".qrels"),
                "TREC run (qid Q0 docno rank score tag) or qrels", "trec", unit="line",
                whole=True, names={"predictions": "run", "truth": "qrels"}, layouts=True,
                tells_kind=True, ranked=True, tagged=True),
    InputFormat("json", (".json",), 'dict of dicts {"user": {"item": value}}', "json",
                unit="entry", whole=True, spark=False, layouts=True, ranked=True),
    InputFormat("jsonl", (".jsonl", ".ndjson"), "JSON Lines, one object per row", "jsonl",
                unit="line", whole=True, aliases=("ndjson",)),
)}
ALIASES = {alias: f.name for f in FORMATS.values()
           for alias in (*f.names.values(), *f.aliases)}


def choices(role: str | None = None) -> tuple[str, ...]:
    """What the command line accepts after a format option: every format and its name for
    ``role`` (``run`` for predictions), or for every role."""
    out: list[str] = []
    for f in FORMATS.values():
        out.append(f.name)
        out += [name for r, name in f.names.items() if role in (None, r)]
    return tuple(out)


PREDS_CHOICES = choices("predictions")
TRUTH_CHOICES = choices("truth")
ALL_CHOICES = choices()
UNITS = {f.name: f.unit for f in FORMATS.values()}
EXTENSIONS = {ext: f.name for f in FORMATS.values() for ext in f.extensions}


def named_format(path: str, explicit: str | None, flag: str) -> str | None:
    """An input's format from ``explicit`` or its name (``detect_format``), or None for
    standard input and a name without a known extension: the reader tells it from the
    content (``formats.sniff``)."""
    return _detect(path, explicit, flag, True, sniff=True)


def detect_format(path: str, explicit: str | None, flag: str, reading: bool = True) -> str:
    """The format from ``explicit`` or the file extension (``.csv.gz`` counts as csv); for
    an input (``reading``), a missing file or a directory is said first."""
    fmt = _detect(path, explicit, flag, reading, sniff=False)
    assert fmt is not None  # without sniff, an unknown name is an error
    return fmt


def _detect(path: str, explicit: str | None, flag: str, reading: bool,
            sniff: bool) -> str | None:
    fmt: str | None
    if explicit:
        fmt = ALIASES.get(explicit.lower(), explicit.lower())
        if fmt not in FORMATS:
            raise OptionError(
                f"{flag}: unknown format {explicit!r} (choose from {', '.join(FORMATS)})"
            )
        return fmt
    if path == STDIN:
        if sniff:
            return None
        raise OptionError(f"{flag} is required when reading from '-' (standard input)")
    # What is wrong with the path itself comes before what its name does not say.
    if reading and os.path.isdir(path):
        raise InputError(path, "is a directory, not a file")
    if reading and not os.path.exists(path) and not os.path.islink(path):
        raise InputError(path, "no such file")
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = EXTENSIONS.get(suffixes[-1]) if suffixes else None
    if fmt is None and sniff:
        return None
    if fmt is None:
        known = ", ".join(sorted(EXTENSIONS))
        raise OptionError(
            f"{path}: cannot tell the format from the name (known: {known}, optionally .gz); "
            f"use {flag}"
        )
    return fmt
