"""The dict-of-dicts JSON of ranx and pytrec_eval (``{"user": {"item": value}}``), both ways."""

from __future__ import annotations

import json
import math

import pyarrow as pa

from rankeval.errors import InputError, one_line
from rankeval.io.formats.trec import number
from rankeval.io.readers import encoding_option

VALUE = {"predictions": "score", "truth": "relevance"}


class _Object(list):
    """A JSON object as its (key, value) pairs in file order (``object_pairs_hook``), so that
    a repeated key is seen, not merged or overwritten."""


def _pairs(pairs: list) -> _Object:
    """The hook: a key given twice in one object is refused (ranx and pytrec_eval would keep
    the last; merging two objects of one user would score a list nobody wrote)."""
    obj = _Object(pairs)
    if len(pairs) > 1 and len({k for k, _ in pairs}) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return obj


class _Repeated(Exception):
    def __init__(self, key: str):
        self.key = key


def _number(v: object) -> bool:
    """A finite number a 64-bit float holds exactly enough to order (integers past 2^53 that
    would round are not)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    try:
        f = float(v)
    except OverflowError:  # an integer past 2^1024
        return False
    return math.isfinite(f) and (not isinstance(v, int) or int(f) == v)


def parse(data: bytes, role: str, label: str) -> pa.Table:
    """The dict-of-dicts of ranx and pytrec_eval: ``{"user": {"item": value}}``.

    A user or item key given twice is an error naming it, never "last one wins" nor a merge.
    """
    try:
        doc = json.loads(data, object_pairs_hook=_pairs)
    except _Repeated as exc:
        raise InputError(label, f"the key {exc.key!r} is repeated in one object (a user's "
                         "items, or an item's value, given twice)") from None
    except RecursionError:
        raise InputError(label, "not valid JSON: nested too deeply") from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(label, f"holds bytes that are not UTF-8 text at line {line}; name its "
                         f"encoding with {encoding_option(role)} (for example latin-1)"
                         ) from None
    except ValueError as exc:
        raise InputError(label, f"not valid JSON: {one_line(exc)}") from None
    if not isinstance(doc, _Object):
        raise InputError(
            label, f'expected an object {{"user": {{"item": {VALUE[role]}}}}}, '
            f"got a JSON {_kind(doc)} (JSON Lines files end in .jsonl)"
        )
    bad = [(u, _kind(v)) for u, v in doc if not isinstance(v, _Object)]
    if bad:
        raise InputError(
            label, "users whose value is not an object of items", count=len(bad),
            examples=bad[:5], unit="user",
        )
    users = [u for u, items in doc for _ in items]
    items = [i for _, per_user in doc for i, _ in per_user]
    values = [v for _, per_user in doc for _, v in per_user]
    odd = [(f"{u}/{i}", v if not isinstance(v, list) else _kind(v))
           for u, i, v in zip(users, items, values, strict=True) if not _number(v)]
    if odd:
        raise InputError(
            label, "values that are not finite numbers", column=VALUE[role], count=len(odd),
            examples=odd[:5], unit="entry",
        )
    return pa.table(
        {
            "user_id": pa.array(users, pa.string()),
            "item_id": pa.array(items, pa.string()),
            VALUE[role]: pa.array([float(v) for v in values], pa.float64()),
        }
    )


def _kind(value: object) -> str:
    if isinstance(value, _Object):
        return "object"
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def encode(table: pa.Table, fmt: str, role: str, tag: str, label: str) -> bytes:
    """The dict of dicts, users and items in the table's order."""
    cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", VALUE[role])]
    doc: dict[str, dict[str, float]] = {}
    for u, i, v in zip(*cols, strict=True):
        doc.setdefault(u, {})[i] = number(v)
    return json.dumps(doc).encode()
