"""Two runs' per-user values of the same metrics, paired by user id: scored here from the
runs and the truth, or read from per-user files as ``rankeval score --per-user`` writes them
(what ``power`` and the non-inferiority gates compare)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, OptionError
from rankeval.io.columns import COLUMN_OPTIONS
from rankeval.io.extras import check_needs
from rankeval.io.load import open_input
from rankeval.names import from_name
from rankeval.settings import make_settings


def from_runs(run_a, run_b, truth, metrics, k, compat, preds_format, truth_format,
               reading, options) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """metric -> (A's values, B's values) over the users both runs evaluate, from the runs
    scored on this machine with every option ``evaluate`` takes."""
    from rankeval.engines import EXTRA, Job, get, run

    if run_a is None or run_b is None or truth is None:
        raise OptionError("power needs two runs and the truth (RUN_A RUN_B TRUTH), or "
                          "{opt:per_user_a} and {opt:per_user_b}")
    rest = dict(options)
    columns = {name: rest.pop(name, None) for name in COLUMN_OPTIONS}
    extras = {n: rest.pop(n, None) for n in (*EXTRA, *(f"{n}_format" for n in EXTRA))}
    settings = make_settings(metrics, k, compat=compat, **rest)
    check_needs(settings, {n for n in EXTRA if extras[n] is not None})
    a, b = (run(get("local"), Job(r, truth, settings, columns, reading, preds_format,
                                  truth_format, extras)) for r in (run_a, run_b))
    specs = [s for s in a.specs if str(s) not in a.corpus]
    if not specs:
        raise OptionError("power needs a per-user metric (corpus metrics have one value per "
                          "run)")
    return {str(s): align(a.user_id_array, a.values(s), b.user_id_array, b.values(s))
            for s in specs}


def from_files(path_a, path_b, metrics
                    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], tuple[str, str]]:
    opened: list[Any] = []
    for data, role in ((path_a, "per_user_a"), (path_b, "per_user_b")):
        table = open_input(data, "per-user values", None, None)
        if "user_id" not in table.columns:
            raise OptionError(f"{{opt:{role}}} {name_of(data, role)}: no user_id column (a "
                              "per-user file as rankeval score --per-user writes it)")
        opened.append(table)
    shared = [c for c in opened[0].columns if c != "user_id" and c in opened[1].columns]
    if metrics:
        asked = [str(from_name(m)) for m in ([metrics] if isinstance(metrics, str)
                                            else metrics)]
        missing = [m for m in asked if m not in shared]
        if missing:
            raise OptionError(f"{', '.join(missing)} not in both per-user files (they share: "
                              f"{', '.join(shared) or 'no metric'})")
        shared = asked
    if not shared:
        raise OptionError("the per-user files share no metric column")
    types = {"user_id": pa.string(), **{m: pa.float64() for m in shared}}
    a, b = (t.read(types) for t in opened)
    for table, data in zip((a, b), opened, strict=True):
        refuse_repeated_users(table.column("user_id"), data)
    out = {m: align(a.column("user_id"), floats(a.column(m)), b.column("user_id"),
                     floats(b.column(m))) for m in shared}
    return out, (name_of(path_a, "A"), name_of(path_b, "B"))


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


def name_of(data: Any, default: str) -> str:
    return Path(data).name.split(".")[0] if isinstance(data, str) and data != "-" else default
