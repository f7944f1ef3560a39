"""Two per-user files (``score --per-user``) read and paired by user id, metric by metric:
what ``power --per-user-a/-b`` estimates from and what ``score --non-inferior/--equivalent``
judges against its baseline's file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.paired import align, floats, refuse_repeated_users
from rankeval.errors import OptionError
from rankeval.io.load import open_input
from rankeval.names import from_name


def from_files(path_a, path_b, metrics
               ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], tuple[str, str]]:
    """Each metric both files hold (or those of ``metrics``, which both must hold): the
    values of the users in both, paired; and the two files' names."""
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


def name_of(data: Any, default: str) -> str:
    """A file's name without its extensions (a run's label), ``default`` for a table."""
    return Path(data).name.split(".")[0] if isinstance(data, str) and data != "-" else default
