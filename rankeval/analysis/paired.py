"""Two runs' per-user values of the same metrics, paired by user id (what ``power`` and the
non-inferiority gates compare): ``align`` pairs them, ``floats`` reads a column of values,
``refuse_repeated_users`` checks a per-user file. Scoring the runs or reading the files is
``api/power.py``'s."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError


def refuse_repeated_users(ids, table) -> None:
    """A per-user file holds each user once, as a run holds each (user, item) pair once: a
    user given twice would count twice in every test (an error naming the rows)."""
    if len(pc.unique(ids)) == len(ids):  # one hash pass: the common case
        return
    rows = pa.table({"user_id": ids, "row": pa.array(np.arange(1, len(ids) + 1))})
    groups = rows.group_by("user_id", use_threads=False).aggregate([("row", "list")])
    lists: list[Any] = groups.column("row_list").to_pylist()  # the error path only
    repeated = [(user, r) for user, r in zip(groups.column("user_id").to_pylist(), lists,
                                             strict=True) if len(r) > 1]
    raise InputError(table.label, "repeated users (a per-user file holds each user once)",
                     column="user_id", count=len(repeated),
                     examples=[(r[1], f"{user!r} also on row {r[0]}") for user, r in repeated[:5]],
                     unit=getattr(table, "unit", "row"))


def floats(column) -> np.ndarray:
    """Numbers, a null (an undefined value in a per-user file) as NaN."""
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)


def align(ids_a, a, ids_b, b) -> tuple[np.ndarray, np.ndarray]:
    """The values of the users both have, in A's order (Arrow's hash join, no loop)."""
    ids_a, ids_b = (pa.array(x, pa.string()) if not isinstance(x, pa.Array | pa.ChunkedArray)
                    else x.cast(pa.string()) for x in (ids_a, ids_b))
    at = pc.index_in(ids_a, value_set=ids_b).to_numpy(zero_copy_only=False)
    keep = ~np.isnan(at.astype(np.float64))
    return (np.asarray(a, dtype=np.float64)[keep],
            np.asarray(b, dtype=np.float64)[at[keep].astype(np.int64)])
