"""``--gold`` on the cluster engines (#48, SPEC §12): what PPI needs of the machine-judged
evaluation, added up over its partitions of users where the values stay.

The gold sample is small (queries judged by hand) and comes to the driver (the gold job's
values, collected); the machine values of every query stay on the cluster. Each partition
pairs its users with the gold values by id and gives, per metric and stratum, the mergeable
moments (``analysis.ppi.Moments``: count, means, squared deviations and the co-moment) of its
gold queries (gold value and machine value both defined) and of its other queries (outside
the gold sample, machine value defined); the driver adds them up. The estimates are then
``analysis.ppi.ppi_moments``'s, the local engine's to rounding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.analysis.ppi import Moments
from rankeval.io.arrow import to_numpy

GOLD = "gold"  # a part's moments: of the gold queries
OTHER = "other"  # of the queries outside the gold sample
ONE = ""  # the stratum of every query when there are no strata
# the rows a partition gives (Spark's schema; Ray's tasks give the same as a dict)
FIELDS = ("metric", "stratum", "part", "n", "mean_h", "mean_a", "m2_h", "m2_a", "c_ha")

Parts = dict[str, dict[str, tuple[Moments, Moments]]]  # metric -> stratum -> (gold, other)


def partition_moments(table: pa.Table, gold: pa.Table, strata: pa.Table | None,
                      metrics: Sequence[str]) -> list[tuple]:
    """One partition's rows (``FIELDS``): ``table`` its per-user values (``user_id`` and a
    column per metric), ``gold`` the gold sample's (``user_id`` as text, a row per gold
    query, a column per metric, null where undefined), ``strata`` each query's stratum
    (``user_id``, ``stratum``; None: one stratum)."""
    ids = table.column("user_id").cast(pa.string())
    at = pc.index_in(ids, value_set=gold.column("user_id"))
    in_sample = to_numpy(pc.is_valid(at))
    rows = to_numpy(at.fill_null(0)).astype(np.int64)
    if strata is None:
        stratum = np.full(len(ids), ONE, dtype=object)
    else:
        where = pc.index_in(ids, value_set=strata.column("user_id"))
        stratum = np.asarray(strata.column("stratum").take(where).to_pylist(), dtype=object)
    names = np.unique(stratum.astype(str)) if len(stratum) else np.array([], dtype=str)
    out = []
    for metric in metrics:
        a = _floats(table.column(metric))
        h = np.where(in_sample, _floats(gold.column(metric))[rows] if len(gold) else np.nan,
                     np.nan)
        both = in_sample & ~np.isnan(a) & ~np.isnan(h)
        other = ~in_sample & ~np.isnan(a)
        for name in names:
            mine = stratum.astype(str) == name
            for part, moments in ((GOLD, Moments.of(h[both & mine], a[both & mine])),
                                  (OTHER, Moments.of(None, a[other & mine]))):
                if moments.n:
                    out.append((metric, str(name), part, moments.n, moments.mean_h,
                                moments.mean_a, moments.m2_h, moments.m2_a, moments.c_ha))
    return out


def added(rows: Iterable[Sequence]) -> Parts:
    """Every partition's rows added up: metric -> stratum -> (gold, other)."""
    out: Parts = {}
    for metric, stratum, part, *numbers in rows:
        moments = Moments(int(numbers[0]), *(float(x) for x in numbers[1:]))
        gold, other = out.setdefault(metric, {}).get(stratum, (Moments(), Moments()))
        out[metric][stratum] = ((gold + moments, other) if part == GOLD
                                else (gold, other + moments))
    return out


def gold_table(ids: pa.Array, store_ids: pa.Array, values: Mapping[str, np.ndarray]
               ) -> pa.Table:
    """The gold sample's values by query: a row per gold query (``ids``), each metric's
    value where the gold evaluation (users ``store_ids``, ``values`` per metric) has one."""
    at = pc.index_in(ids, value_set=store_ids.cast(pa.string()))
    found = to_numpy(pc.is_valid(at))
    rows = to_numpy(at.fill_null(0)).astype(np.int64)
    columns = {"user_id": ids}
    for metric, v in values.items():
        v = np.asarray(v, dtype=np.float64)
        columns[metric] = pa.array(np.where(found, v[rows] if len(v) else np.nan, np.nan))
    return pa.table(columns)


def _floats(column) -> np.ndarray:
    return np.asarray(column.to_numpy(zero_copy_only=False) if hasattr(column, "to_numpy")
                      else column, dtype=np.float64)
