"""The input format registry: names, aliases and file extensions. Pure data (no pyarrow), so
that the command line's choices and ``--help`` derive from it cheaply."""

from __future__ import annotations

import os
from pathlib import Path

from rankeval.errors import InputError, OptionError

STDIN = "-"
STDOUT = "-"
# name -> (extensions, what it holds); "trec" is a run for predictions and qrels for the truth.
FORMATS: dict[str, tuple[tuple[str, ...], str]] = {
    "csv": ((".csv",), "comma-separated, header row"),
    "tsv": ((".tsv", ".tab"), "tab-separated, header row"),
    "parquet": ((".parquet", ".pq"), "Apache Parquet"),
    "trec": ((".run", ".trec", ".qrels"), "TREC run (qid Q0 docno rank score tag) or qrels"),
    "json": ((".json",), 'dict of dicts {"user": {"item": value}}'),
    "jsonl": ((".jsonl", ".ndjson"), "JSON Lines, one object per row"),
}
ALIASES = {"qrels": "trec", "run": "trec", "ndjson": "jsonl"}
# What the command line accepts after --preds-format / --truth-format.
PREDS_CHOICES = ("csv", "tsv", "parquet", "trec", "run", "json", "jsonl")
TRUTH_CHOICES = ("csv", "tsv", "parquet", "trec", "qrels", "json", "jsonl")
ALL_CHOICES = ("csv", "tsv", "parquet", "trec", "run", "qrels", "json", "jsonl")
# How messages count the records of a format: data rows after a header, lines, or entries.
UNITS = {"trec": "line", "jsonl": "line", "json": "entry"}
EXTENSIONS = {ext: name for name, (exts, _) in FORMATS.items() for ext in exts}


def detect_format(path: str, explicit: str | None, flag: str, reading: bool = True) -> str:
    """The format from ``explicit`` or the file extension (``.csv.gz`` counts as csv); for
    an input (``reading``), a missing file or a directory is said first."""
    fmt: str | None
    if explicit:
        fmt = ALIASES.get(explicit.lower(), explicit.lower())
        if fmt not in FORMATS:
            raise OptionError(
                f"{flag}: unknown format {explicit!r} (choose from {', '.join(FORMATS)})"
            )
        return fmt
    if path == STDIN:
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
    if fmt is None:
        known = ", ".join(sorted(EXTENSIONS))
        raise OptionError(
            f"{path}: cannot tell the format from the name (known: {known}, optionally .gz); "
            f"use {flag}"
        )
    return fmt
