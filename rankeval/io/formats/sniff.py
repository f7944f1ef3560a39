"""The format of an input whose name does not say it (standard input, ``qrels.txt``, a file
without an extension), told from its first lines: Parquet by its magic bytes; JSON (a dict of
dicts) and JSON Lines (one flat object a line); a TREC run (six whitespace-separated fields,
rank and score numbers) and TREC qrels (four, the grade a number); delimited text with a header
row (comma, tab, semicolon or pipe: the one that splits the header and every line alike, each
tried with Python's csv reader, quotes and all; ``csv.Sniffer`` would pick one of two that fit
without a word). A content that reads two ways, or none, is an error asking for the
format option: never a guess between two readings. Pure Python."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

from rankeval.errors import OptionError

LOOK_BYTES = 64 << 10  # the first lines looked at
_LINES = 50  # at most this many of them
PARQUET_MAGIC = b"PAR1"
DELIMITED = {",": "csv", "\t": "tsv", ";": "csv", "|": "csv"}  # delimiter -> format
# the TREC layouts: fields, the ones that are numbers, the role they are
TREC = {6: ((3, 4), "predictions"), 4: ((3,), "truth"),
        5: ((4,), "truth")}  # trec_eval's prefs file (qid group subgroup docno level)
NAMES = {"predictions": "a TREC run", "truth": "TREC qrels"}


@dataclass(frozen=True)
class Sniffed:
    """A format told from content, the delimiter of delimited text, and for TREC which
    layout (a run's or qrels')."""

    format: str
    delimiter: str | None = None
    role: str | None = None

    def describe(self) -> str:
        if self.format == "trec":
            return NAMES[self.role or "predictions"]
        if self.delimiter is not None:
            return {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}.get(
                self.delimiter, repr(self.delimiter)) + "-separated text with a header"
        return {"json": "JSON", "jsonl": "JSON Lines", "parquet": "Parquet"}[self.format]


# the format option of an input -> its delimiter's (a content two delimiters split alike)
DELIMITER_FLAGS = {"{opt:preds_format}": "{opt:preds_delimiter}",
                   "{opt:truth_format}": "{opt:truth_delimiter}"}


def sniff(head: bytes, label: str, flag: str, delimiter: str | None = None) -> Sniffed:
    """The one reading of ``head`` (the input's first bytes, decompressed and decoded to
    UTF-8); ``flag``: the option a message tells the reader to use instead; ``delimiter``:
    the one given (the only one tried)."""
    if head.startswith(PARQUET_MAGIC):
        return Sniffed("parquet")
    text = head[:LOOK_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [line for line in text.splitlines() if line.strip()]
    if len(head) > LOOK_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last may be cut short
    lines = lines[:_LINES]
    if not lines:
        raise OptionError(f"{label}: cannot tell its format (no lines to read); name it with "
                          f"{flag}")
    if lines[0].lstrip().startswith(("{", "[")):
        return Sniffed(_json(lines))
    found = [*_trec(lines), *_delimited(lines, delimiter)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise OptionError(
            f"{label}: cannot tell its format from its first lines (neither a TREC run nor "
            f"qrels, JSON, nor delimited text with a header, e.g. {lines[0][:60]!r}); name it "
            f"with {flag}")
    ways = " and as ".join(s.describe() for s in found)
    if all(s.delimiter is not None for s in found):
        choices = " or ".join(repr(s.delimiter) for s in found)
        raise OptionError(f"{label}: its first lines read as {ways}; name its delimiter with "
                          f"{DELIMITER_FLAGS.get(flag, '{opt:delimiter}')} ({choices})")
    raise OptionError(f"{label}: its first lines read as {ways}; name its format with {flag}")


def _json(lines: list[str]) -> str:
    """JSON Lines when the first line is a whole flat object, else JSON (a dict of dicts,
    over one line or many)."""
    try:
        first = json.loads(lines[0])
    except ValueError:
        return "json"  # an object over several lines
    if isinstance(first, dict) and first and all(isinstance(v, dict) for v in first.values()):
        return "json"  # {"q1": {"d1": 1}} on one line
    return "jsonl"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _trec(lines: list[str]) -> list[Sniffed]:
    fields = [line.split() for line in lines]
    width = len(fields[0])
    if width not in TREC or any(len(f) != width for f in fields):
        return []
    numbers, role = TREC[width]
    if all(_number(f[i]) for f in fields for i in numbers):
        return [Sniffed("trec", role=role)]
    return []


def _delimited(lines: list[str], given: str | None) -> list[Sniffed]:
    """Each delimiter that splits the header and every line into the same two or more
    fields, the header's none a number (a header row, not data)."""
    out = []
    for delimiter in [given] if given else DELIMITED:
        try:
            rows = list(csv.reader(lines, delimiter=delimiter))
        except csv.Error:
            continue
        width = len(rows[0])
        if width >= 2 and all(len(r) == width for r in rows) and not any(
                _number(name) for name in rows[0]):
            out.append(Sniffed(DELIMITED.get(delimiter, "csv"), delimiter=delimiter))
    return out
