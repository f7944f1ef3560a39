"""Item statistics for the beyond-accuracy metrics on Ray: computed once on the driver with the
local functions (``build.items.item_stats``), from the distinct predicted items (found
by the tasks, one list per block) and ``--train``/``--catalog`` (read by Ray Data, brought to
the driver once), then sent to every scoring task, so that every partition scores against the
same popularity, catalog and long tail."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.items import ItemStats
from rankeval.build.items import item_stats as local_item_stats
from rankeval.engines.ray.exchange import items, remote
from rankeval.engines.ray.read import Input, read_input
from rankeval.io.columns import EXTRA, resolve_role
from rankeval.io.extras import Extras, load_on_driver
from rankeval.io.frames import MemoryTable
from rankeval.io.load import load_catalog, load_train
from rankeval.io.readers import Source
from rankeval.settings import Settings


@dataclass(frozen=True)
class RayExtras:
    """``--train`` and ``--catalog`` read by Ray (``Input``); ``--item-features``,
    ``--item-groups`` and ``--propensity`` loaded on this machine."""

    train: Input | None = None
    catalog: Input | None = None
    item_features: Any = None
    item_groups: Any = None
    propensity: Any = None
    exclude: Any = None  # --exclude: refused by the engine before it starts (never set)

    def given(self) -> set[str]:
        return {n for n in EXTRA if getattr(self, n) is not None}


def extra_inputs(given: Mapping[str, Any], columns, reading: dict[str, Any] | None = None
                 ) -> RayExtras:
    """``given``'s ``train`` and ``catalog`` read by Ray (paths or Datasets), the others
    loaded here (any form ``rankeval.evaluate`` takes). Each with its ``NAME_format``."""
    found: dict[str, Any] = {}
    for role in ("train", "catalog"):
        if given.get(role) is not None:
            found[role] = read_input(given[role], role, given.get(f"{role}_format"),
                                     f"{role}_format", reading)
    return RayExtras(**found, **load_on_driver(given, columns, reading))


def item_stats(preds: Input, extras: RayExtras, settings: Settings, columns
               ) -> tuple[ItemStats | None, Extras]:
    """(the statistics, the extra inputs loaded here for the report and its notices); the
    statistics are None when no extra input is given."""
    if not extras.given():
        return None, Extras()
    cols = {c: v for c, v in columns.items() if v}
    train = catalog = None
    if extras.train is not None:
        train = dataclasses.replace(
            load_train(_table(extras.train), cols), source=_source(extras.train))
    if extras.catalog is not None:
        catalog = dataclasses.replace(load_catalog(_table(extras.catalog), cols.get("item_col")),
                                      source=_source(extras.catalog))
    loaded = Extras(train=train, catalog=catalog, item_features=extras.item_features,
                    item_groups=extras.item_groups, propensity=extras.propensity)
    # item_tally reads the predictions' item ids alone: the distinct ones stand in for them
    predicted = SimpleNamespace(item=predicted_items(preds, cols))
    return local_item_stats(loaded, cast(Any, predicted), settings), loaded


def predicted_items(preds: Input, columns: dict[str, str]) -> pa.ChunkedArray:
    """The distinct predicted item ids, as text, found where the blocks are."""
    import ray  # optional dependency: rankeval[ray]

    item = resolve_role(preds.columns, "predictions", columns, preds.label)["item"]
    assert item is not None  # required: resolve_role raises without it
    found = ray.get([remote(items).remote(block, item) for block in preds.blocks])
    if not found:
        return pa.chunked_array([], pa.string())
    return pa.chunked_array([pc.unique(pa.concat_arrays(found))])


def _table(data: Input) -> MemoryTable:
    """An input's blocks brought here, as a table the local loaders read."""
    import ray  # optional dependency: rankeval[ray]

    tables = ray.get(data.blocks)
    table = (pa.concat_tables(tables, promote_options="permissive") if tables else
             pa.table({c: pa.array([], pa.string()) for c in data.columns}))
    return MemoryTable(table, data.label)


def _source(data: Input) -> Source:
    return Source(data.label, data.format, data.rows)
