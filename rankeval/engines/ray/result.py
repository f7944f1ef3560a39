"""The Ray engine's per-user store: the values stay in the cluster's object store, one Arrow
table per partition of users, seen as a Ray Dataset."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rankeval.engines.distributed.store import ClusterValues, local_values
from rankeval.engines.ray.read import quiet
from rankeval.io.datasets import write_dataset
from rankeval.results.store import LocalValues


@dataclass(frozen=True, eq=False)
class RayValues(ClusterValues):
    """Per-user values that stay where they were computed (``results.store.Store``): the
    tables of the scoring tasks, user_id + one column per metric, as a Ray Dataset
    (``frame``). They come to the driver when asked (``collect``: users x metrics doubles),
    for what needs them all in one place: bootstrap intervals, the HTML page's charts,
    per-query lines. The distribution (``describe``) and the segment means are computed by
    collecting them once (kept for later calls), then as locally: the same numbers, bit for
    bit."""

    engine = "Ray"
    frame_kind = "a Ray Dataset"
    blocks: list  # ObjectRef[pa.Table], one per partition of users (some maybe empty)
    columns: tuple[str, ...]  # user_id, the metrics, the extra columns
    extra: tuple[str, ...] = ()  # after the metrics: a stochastic run's samples and sds
    local: LocalValues | None = None
    _cache: dict = field(default_factory=dict, repr=False)  # collected once, for describe

    def frame(self):
        """A Ray Dataset, one row per evaluated user (in no particular order)."""
        if "dataset" not in self._cache:
            import ray.data  # optional dependency: rankeval[ray]

            # the tasks' tables hold a stochastic run's extra columns even when the run
            # turned out deterministic (one sample value in all): a projection drops them
            ds = ray.data.from_arrow_refs(self.blocks).select_columns(list(self.columns))
            ds.context.enable_progress_bars = False  # stderr is for rankeval's lines
            self._cache["dataset"] = ds
        return self._cache["dataset"]

    def collect(self) -> RayValues:
        """The store with the values on the driver too, in the local engine's user order (so
        that intervals drawn from them are the local engine's, seed for seed)."""
        if self.local is not None:
            return self
        if "local" not in self._cache:
            table = self._table()
            table = table.take(pc.sort_indices(table.column("user_id")))  # byte order
            self._cache["local"] = local_values(table, self.extra)
        return dataclasses.replace(self, local=self._cache["local"], _cache=self._cache)

    def _table(self) -> pa.Table:
        import ray  # optional dependency: rankeval[ray]

        tables = ray.get(self.blocks)
        if not tables:
            return pa.schema([pa.field(c, pa.float64()) for c in self.columns]).empty_table()
        return pa.concat_tables(tables).select(list(self.columns))

    def describe(self, wanted: Sequence[str]) -> dict[str, dict[str, float]]:
        return self.collect()._here("describe").describe(wanted)

    def segment_means(self, table: Any, by: Any) -> dict[str, list]:
        return self.collect()._here("segment_means").segment_means(table, by)

    def write(self, path: str) -> None:
        """A Parquet dataset (a directory) at ``path``, written by Ray's tasks, on any
        filesystem pyarrow knows (``io.datasets.write_dataset``: a local one moved in place
        when complete)."""
        write_dataset(path, "ray", self._write)

    def _write(self, path: str) -> None:
        from ray.data.datasource import FilenameProvider  # optional dependency: rankeval[ray]

        class _Parts(FilenameProvider):  # part-*.parquet, as Spark names them
            def get_filename_for_task(self, write_uuid, task_index):
                return f"part-{task_index:05d}-{write_uuid}.parquet"

            def get_filename_for_block(self, block, write_uuid, task_index, block_index):
                return f"part-{task_index:05d}-{block_index:03d}-{write_uuid}.parquet"

        # a URL is written over (as Spark's mode overwrite; Ray's default appends); a local
        # directory is a new one, moved in place by ``write``
        mode = {"mode": "overwrite"} if "://" in path else {}
        with quiet():
            self.frame().write_parquet(path, filename_provider=_Parts(), **mode)
