"""JSON Lines: one object per line, read by Arrow; a line Arrow cannot read is read again line
by line, so that messages name lines from 1 as for every format."""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa
import pyarrow.json as pa_json

from rankeval.errors import InputError, one_line


def parse(data: bytes, role: str, label: str) -> pa.Table:
    try:
        # pyarrow-stubs: read_json takes paths and Python files; pyarrow also its own
        table = pa_json.read_json(pa.BufferReader(data))  # type: ignore[arg-type]
    except pa.ArrowException:
        # Arrow's own message counts rows from 0 and names no value: read it again line
        # by line, so that the checks name lines from 1, as they do for every format.
        return parse_leniently(data, label)
    _no_repeated_keys(data, table, label)
    return table


def _no_repeated_keys(data: bytes, table: pa.Table, label: str) -> None:
    """Arrow keeps one value of a key given twice in a line (``{"item_id": "A", "item_id":
    "B"}`` is one row): refused, naming the line. A key's text counted over the whole input
    (a byte search) finds no more of them than rows in the usual file; only then are the
    lines read one by one."""
    quoted = [json.dumps(name).encode() for name in table.column_names]
    if all(data.count(key) <= table.num_rows for key in quoted):
        return
    for n, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            try:
                json.loads(line, object_pairs_hook=_once)
            except _Twice as exc:
                raise InputError(label, f"line {n}: the key {exc.key!r} is given twice in one "
                                 "object") from None


class _Twice(Exception):
    def __init__(self, key: str):
        self.key = key


def _once(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) < len(keys):
        raise _Twice(next(k for i, k in enumerate(keys) if k in keys[:i]))
    return dict(pairs)


def number_text(data: bytes, name: str, rows: int) -> pa.ChunkedArray | None:
    """A number column as written (Arrow reads JSON numbers as doubles, whose text is lost):
    one match of the key per line, as ``_no_repeated_keys`` ensures; None when the lines do
    not give one number each."""
    key = re.escape(json.dumps(name).encode())
    found = re.findall(key + rb"\s*:\s*(-?[0-9][0-9.eE+-]*)", data)
    if len(found) != rows:
        return None
    return pa.chunked_array([pa.array(found, pa.binary()).cast(pa.string())])


def encode(table: pa.Table, fmt: str, kind: str, tag: str, label: str) -> bytes:
    """One object per row, with the table's column names."""
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    rows = zip(*cols.values(), strict=True)
    return "".join(json.dumps(dict(zip(cols, r, strict=True))) + "\n" for r in rows).encode()


def spark_read(spark, path: str, fmt: str, role: str, reading: dict[str, Any]):
    """Every value as text, so that numbers are parsed and checked by rankeval."""
    return spark.read.option("primitivesAsString", True).json(path)


def parse_leniently(data: bytes, label: str) -> pa.Table:
    """JSON Lines, one object per line, every value kept as text (the caller converts and
    checks it, naming lines from 1); a line that is not a JSON object is an error naming it."""
    rows: list[dict] = []
    lines = data.split(b"\n")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            if n == len(lines):
                break
            raise InputError(label, "blank lines", count=1, examples=[(n, "")], unit="line")
        try:
            row = json.loads(line, object_pairs_hook=_once)
        except _Twice as exc:
            raise InputError(label, f"line {n}: the key {exc.key!r} is given twice in one "
                             "object") from None
        except (ValueError, RecursionError) as exc:
            raise InputError(label, f"line {n} is not valid JSON: {one_line(exc)}") from None
        if not isinstance(row, dict):
            raise InputError(label, f"line {n} is not a JSON object", examples=[(n, row)],
                             unit="line")
        rows.append(row)
    names = list(dict.fromkeys(k for row in rows for k in row))
    return pa.table({k: pa.array([_text(row.get(k)) for row in rows], pa.string())
                     for k in names})


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)
