"""RecBole's atomic files (``.inter``, ``.item``, ``.user``): tab-separated text whose header
types each column, ``name:type`` with the type ``token``, ``token_seq``, ``float`` or
``float_seq``. Columns are found by their names without the type (``score:float`` is the score
column, as ``score`` would be); a ``token_seq`` or ``float_seq`` column holds a space-separated
sequence (an item's genres ``Action Comedy``: two tags for ``--item-features``). Read by the
delimited reader under the names without types."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from rankeval.io.formats import delimited

if TYPE_CHECKING:
    from rankeval.io.readers import Table

TYPES = ("token", "token_seq", "float", "float_seq")
SEQUENCES = ("token_seq", "float_seq")  # space-separated values in one field
SEPARATOR = " "  # of a sequence's values


def columns(t: Table) -> list[str]:
    """The header's names without their types (a name without a known type kept as it is);
    the sequence columns noted on the table (``Table.sequences``; ``Table.vectors``: the
    ones of numbers, ``float_seq``)."""
    names = []
    for typed in delimited.columns(t):
        name, colon, kind = typed.rpartition(":")
        names.append(name if colon and kind in TYPES else typed)
        if colon and kind in SEQUENCES:
            t.sequences[name] = SEPARATOR
        if colon and kind == "float_seq":
            t.vectors.add(name)
    t.header = names
    return names


nested = delimited.nested
read = delimited.read


def encode(table: pa.Table, fmt: str, kind: str, tag: str, label: str) -> bytes:
    """Tab-separated text with RecBole's typed header: numbers ``float``, the rest ``token``."""
    number = (pa.types.is_integer, pa.types.is_floating)
    typed = [f"{name}:{'float' if any(is_(col.type) for is_ in number) else 'token'}"
             for name, col in zip(table.column_names, table.columns, strict=True)]
    return delimited.csv_bytes(table.rename_columns(typed), "\t")
