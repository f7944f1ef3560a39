"""The Spark engine's result (an ``Evaluation`` whose per-user values stay on the cluster) and
the merge of the input errors found by every task."""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, OptionError
from ..evaluation import Evaluation


@dataclass(frozen=True)
class SparkEvaluation(Evaluation):
    """An ``Evaluation`` (means, counts, notices, settings, reports and gates as locally)
    whose per-user values are a Spark DataFrame, ``per_user``, never collected: write it
    with ``write_per_user(path)`` or ``per_user.write``."""

    frame: Any = field(default=None, repr=False)  # user_id + one column per metric
    _cache: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, ev: Evaluation, frame, cache) -> SparkEvaluation:
        fields = {f.name: getattr(ev, f.name) for f in dataclasses.fields(Evaluation)}
        return cls(**fields, frame=frame, _cache=cache)

    @property
    def per_user(self):  # type: ignore[override]
        """One row per evaluated user, one column per metric: a (cached) Spark DataFrame."""
        return self.frame

    def write_per_user(self, path: str) -> None:
        """The per-user values as a Parquet dataset (a directory) at ``path``, on any
        filesystem Spark knows. A local directory is written beside and moved in place when
        complete, replacing an earlier dataset (never another kind of directory)."""
        if "://" in path:
            self.frame.write.mode("overwrite").parquet(path)
            return
        check_dataset_path(path)
        target = Path(path).absolute()
        tmp = target.with_name(f".{target.name}.rankeval-{os.getpid()}")
        try:
            self.frame.write.mode("errorifexists").parquet(str(tmp))
            if target.exists():
                old = target.with_name(f".{target.name}.rankeval-old-{os.getpid()}")
                target.rename(old)
                tmp.rename(target)
                shutil.rmtree(old)
            else:
                tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def unpersist(self) -> None:
        """Free the cluster's cached per-user rows (``per_user`` is recomputed if used)."""
        if self._cache is not None:
            self._cache.unpersist()

    def _distributed(self, what: str):
        return OptionError(f"{what} needs the per-user values on one machine; with the Spark "
                           "engine they stay on the cluster: use .per_user (a Spark DataFrame)"
                           " or .write_per_user(path)")

    def values(self, metric):
        raise self._distributed("values()")

    @property
    def user_ids(self):  # type: ignore[override]
        raise self._distributed("user_ids")

    @property
    def user_id_array(self):
        raise self._distributed("user_id_array")

    def per_user_table(self):
        raise self._distributed("per_user_table()")

    def with_stats(self, stats=None):
        raise self._distributed("with_stats (--stats)")

    def with_intervals(self, *args, **kwargs):
        raise self._distributed("with_intervals (--ci)")

    def by_segment(self, *args, **kwargs):
        raise self._distributed("by_segment (--segments)")

    def __repr__(self) -> str:
        return super().__repr__().replace("<Evaluation", "<SparkEvaluation", 1)


def check_dataset_path(path: str) -> None:
    """A local per-user dataset path: absent, or an earlier Parquet dataset (part files and
    Spark's markers only), so that replacing it destroys nothing else."""
    target = Path(path)
    if not target.exists():
        if not target.absolute().parent.is_dir():
            raise OptionError(f"--per-user {path}: the directory {target.absolute().parent} "
                              "does not exist")
        return
    if not target.is_dir():
        raise OptionError(f"--per-user {path}: is a file; with the Spark engine the per-user "
                          "values are a Parquet dataset: give a directory")
    others = [f.name for f in target.iterdir() if not _dataset_file(f.name)]
    if others:
        raise OptionError(f"--per-user {path}: holds other files ({', '.join(others[:3])}); "
                          "give a new directory or an earlier per-user dataset")


def _dataset_file(name: str) -> bool:
    name = name.removeprefix(".").removesuffix(".crc")
    return name == "_SUCCESS" or (name.startswith("part-") and name.endswith(".parquet"))


def merged_errors(results) -> list[InputError]:
    """Every task's input errors as one list: the same problem in several chunks is one
    error with the counts added and the examples of the smallest user ids (each chunk sends
    its first five, in user order). Problems keep the order in which checks meet them."""
    merged: dict[tuple, dict] = {}
    order: dict[tuple, int] = {}
    for result in results:
        for i, e in enumerate(result.errors):
            key = (e["path"], e["column"], e["problem"], e["hint"], e["unit"])
            order[key] = min(order.get(key, i), i)
            if key not in merged:
                merged[key] = dict(e, examples=list(e["examples"]))
                continue
            m = merged[key]
            m["count"] = None if m["count"] is None or e["count"] is None else (
                m["count"] + e["count"])
            m["examples"] += e["examples"]
    return [InputError(m["path"], m["problem"], column=m["column"], count=m["count"],
                       examples=_examples(m), hint=m["hint"], unit=m["unit"])
            for m in (merged[k] for k in sorted(merged, key=order.__getitem__))]


def _examples(error: dict) -> list[tuple]:
    if error["unit"] != "row of user":
        return error["examples"][:5]
    first = sorted(error["examples"], key=lambda x: x[0])[:5]
    return [(repr(user), value) for user, value in first]
