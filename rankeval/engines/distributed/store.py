"""What the cluster engines' per-user stores share (``results.store.Store``): the values stay
where they were computed (``SparkValues`` a DataFrame, ``RayValues`` tables in the object
store) and come to the driver only when asked (``collect``), as the local engine keeps them
(``local_values``)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow as pa

from rankeval.errors import OptionError
from rankeval.io.arrow import to_numpy
from rankeval.io.cast import numeric_order
from rankeval.names import from_name
from rankeval.results.store import LocalValues


class ClusterValues:
    """The part of a cluster store that needs the values on the driver: ``local`` once
    collected, else one line saying how to get them."""

    engine: ClassVar[str] = ""  # "Spark"
    frame_kind: ClassVar[str] = ""  # what ``.per_user`` gives: "a Spark DataFrame"
    local: LocalValues | None  # the values on the driver too, once collected

    @property
    def here(self) -> bool:
        return self.local is not None

    def _here(self, what: str) -> LocalValues:
        if self.local is None:
            raise OptionError(f"{what} needs the per-user values on one machine; with the "
                              f"{self.engine} engine they stay on the cluster: use .per_user "
                              f"({self.frame_kind}), .write_per_user(path), or .collect() "
                              "first")
        return self.local

    def values(self, spec) -> np.ndarray:
        return self._here("values()").values(spec)

    def users(self) -> pa.Array:
        return self._here("user_ids").users()

    def table(self) -> pa.Table:
        return self._here("per_user_table()").table()


def local_values(table: pa.Table, extra: tuple[str, ...]) -> LocalValues:
    """The values as the local engine keeps them, from a table of user_id, the metrics and
    the ``extra`` columns with its users in byte order: numbered ids then in their numbers'
    order, as the local engine's codes give them."""
    users = table.column("user_id").combine_chunks()
    metrics = [c for c in table.column_names[1:] if c not in extra]
    values = {from_name(name): to_numpy(table.column(name)).astype(np.float64)
              for name in metrics}
    more = {name: to_numpy(table.column(name)) for name in extra}
    more = {name: v if name == "samples" else v.astype(np.float64) for name, v in more.items()}
    order = numeric_order(users)
    if order is not None:
        users = users.take(pa.array(order))
        values = {s: v[order] for s, v in values.items()}
        more = {name: v[order] for name, v in more.items()}
    return LocalValues(values, users, more)
