"""Where an evaluation's per-user values live: one interface, whatever the engine.

An ``Evaluation`` holds a store. ``LocalValues`` keeps them in numpy arrays on this machine;
an engine whose values stay where they were computed (Spark's ``SparkValues``) gives the same
operations over its own frame: the distribution over users (``describe``), means per user
segment (``segment_means``), writing them (``write``), and bringing them here (``collect``)
for what needs every value in one place (bootstrap intervals, the HTML charts). ``values``,
``users`` and ``table`` read the values here; a store whose values are elsewhere raises until
collected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from rankeval.analysis.distribution import describe
from rankeval.analysis.segments import Segment, segment
from rankeval.io.arrow import from_numpy, nan_as_null, to_numpy
from rankeval.io.output import write_per_user
from rankeval.names import MetricSpec

if TYPE_CHECKING:
    import pandas as pd


class Store(Protocol):
    """The per-user values of an evaluation (see the module's docstring)."""

    @property
    def here(self) -> bool:
        """Whether the values are on this machine (``values``, ``users``, ``table`` work)."""
        ...

    def frame(self) -> Any:
        """The values as the store's own frame: user_id + one column per metric."""
        ...

    def values(self, spec: MetricSpec) -> np.ndarray: ...

    def users(self) -> pa.Array: ...

    def table(self) -> pa.Table: ...

    def describe(self, wanted: Sequence[str]) -> dict[str, dict[str, float]]:
        """Metric -> statistic -> its value over the users the metric scores."""
        ...

    def segment_means(self, table: Any, by: Any) -> dict[str, list[Segment]]:
        """Per segment column of ``by`` (of the user table ``table``): each segment's means."""
        ...

    def collect(self) -> Store:
        """The store with its values on this machine too (itself when they are)."""
        ...

    def write(self, path: str) -> None:
        """The values to ``path`` as the store writes them (a file here, a dataset there)."""
        ...


@dataclass(frozen=True, eq=False)
class LocalValues:
    """Per-user values in numpy arrays, in the order of ``ids`` (one array per metric)."""

    arrays: dict[MetricSpec, np.ndarray]
    ids: pa.Array
    # more per-user columns after the metrics (a stochastic run's samples and spreads)
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def here(self) -> bool:
        return True

    @cached_property
    def _frame(self) -> pd.DataFrame:
        import pandas as pd  # import cost: the command line never needs pandas

        columns: dict[str, Any] = {"user_id": pd.Series(to_numpy(self.ids), dtype=object)}
        columns.update({str(spec): v for spec, v in self.arrays.items()})
        columns.update(self.extra)
        return pd.DataFrame(columns)  # at once: a column at a time fragments wide frames

    def frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per user."""
        return self._frame

    def values(self, spec: MetricSpec) -> np.ndarray:
        return self.arrays[spec]

    def users(self) -> pa.Array:
        return self.ids

    def table(self) -> pa.Table:
        """An Arrow table; a value a metric leaves undefined (NaN) is null."""
        columns = {"user_id": self.ids}
        columns.update({str(spec): nan_as_null(v) for spec, v in self.arrays.items()})
        columns.update({name: nan_as_null(v) if v.dtype.kind == "f" else from_numpy(v)
                        for name, v in self.extra.items()})
        return pa.table(columns)

    def describe(self, wanted: Sequence[str]) -> dict[str, dict[str, float]]:
        out = {}
        for spec, v in self.arrays.items():
            v = v[~np.isnan(v)]  # users a metric could not score are left out
            out[str(spec)] = {name: describe(v, name) for name in wanted}
        return out

    def segment_means(self, table: Any, by: Any) -> dict[str, list[Segment]]:
        return segment({str(s): v for s, v in self.arrays.items()}, self.ids, table, by)

    def collect(self) -> LocalValues:
        return self

    def write(self, path: str) -> None:
        """A CSV (``-`` or ``.csv``) or Parquet file, full precision."""
        write_per_user(self.table(), path)
