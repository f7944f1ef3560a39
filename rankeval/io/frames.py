"""In-memory tables (Arrow, pandas, polars) behind the file readers' interface."""

from __future__ import annotations

import pyarrow as pa

from rankeval.errors import InputError, one_line
from rankeval.io.cast import cast_columns
from rankeval.io.readers import Source


class MemoryTable:
    """An in-memory table behind the same interface: an Arrow table, record batch or batch
    reader, a pandas DataFrame, or anything with ``to_arrow()`` (a polars DataFrame)."""

    def __init__(self, data, label: str):
        self.format = _kind(data)
        try:
            self._table = _as_arrow(data)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise InputError(label, f"cannot convert to a table: {one_line(exc)}") from None
        self.path = self.label = label
        self.columns = [str(c) for c in self._table.column_names]

    def described(self, rows: int):
        return Source(self.path, self.format, rows)

    def read(self, types: dict[str, pa.DataType]) -> pa.Table:
        return cast_columns(self._table.select(list(types)), types, self.label)

    def nested(self, name: str) -> pa.ChunkedArray | None:
        col = self._table.column(name)
        return col if pa.types.is_nested(col.type) else None


def _kind(data) -> str:
    module = type(data).__module__.split(".")[0]
    return {"pyarrow": "arrow", "pandas": "dataframe", "polars": "polars"}.get(module, module)


def _as_arrow(data) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if hasattr(data, "to_arrow"):  # polars
        return data.to_arrow()
    if type(data).__module__.startswith("pandas"):
        return pa.Table.from_pandas(data, preserve_index=False)
    raise TypeError(
        f"expected a file path, a pandas or polars DataFrame or an Arrow table, got "
        f"{type(data).__name__}"
    )
