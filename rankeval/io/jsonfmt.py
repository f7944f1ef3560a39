"""The dict-of-dicts JSON of ranx and pytrec_eval (``{"user": {"item": value}}``), both ways."""

from __future__ import annotations

import json

import pyarrow as pa

from ..errors import InputError
from .readers import one_line

VALUE = {"predictions": "score", "truth": "relevance"}


def parse_json(data: bytes, role: str, label: str) -> pa.Table:
    """The dict-of-dicts of ranx and pytrec_eval: ``{"user": {"item": value}}``."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(label, f"not valid JSON: {one_line(exc)}") from None
    if not isinstance(doc, dict):
        raise InputError(
            label, f'expected an object {{"user": {{"item": {VALUE[role]}}}}}, '
            f"got a JSON {type(doc).__name__} (JSON Lines files end in .jsonl)"
        )
    bad = [(u, v) for u, v in doc.items() if not isinstance(v, dict)]
    if bad:
        raise InputError(
            label, "users whose value is not an object of items", count=len(bad),
            examples=[(u, v) for u, v in bad[:5]], unit="user",
        )
    users = [u for u, items in doc.items() for _ in range(len(items))]
    items = [i for per_user in doc.values() for i in per_user]
    values = [v for per_user in doc.values() for v in per_user.values()]
    odd = [(f"{u}/{i}", v) for u, i, v in zip(users, items, values, strict=True)
           if isinstance(v, bool) or not isinstance(v, int | float)]
    if odd:
        raise InputError(
            label, "values that are not numbers", column=VALUE[role], count=len(odd),
            examples=odd[:5], unit="entry",
        )
    return pa.table(
        {
            "user_id": pa.array(users, pa.string()),
            "item_id": pa.array(items, pa.string()),
            VALUE[role]: pa.array(values, pa.float64()),
        }
    )


def write_json(table: pa.Table, role: str) -> bytes:
    """The dict of dicts, users and items in the table's order."""
    from .trec import number

    cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", VALUE[role])]
    doc: dict[str, dict[str, float]] = {}
    for u, i, v in zip(*cols, strict=True):
        doc.setdefault(u, {})[i] = number(v)
    return json.dumps(doc).encode()


def write_jsonl(table: pa.Table) -> bytes:
    """One object per row, with the table's column names."""
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    rows = zip(*cols.values(), strict=True)
    return "".join(json.dumps(dict(zip(cols, r, strict=True))) + "\n" for r in rows).encode()
