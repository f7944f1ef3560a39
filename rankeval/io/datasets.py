"""Per-user values written by a cluster (``--per-user DIR`` with ``--engine spark`` or
``ray``): a Parquet dataset, a directory of part files, never a single file. A local one is
written beside its place and moved in when complete, replacing only an earlier dataset."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from rankeval.errors import OptionError


def check_per_user(engine: str, path: str, inputs: list[str]) -> None:
    """Before anything is read: ``--per-user PATH`` names a dataset this engine can write
    (a directory, never ``-``), and no input."""
    from rankeval.io.output import check_distinct

    if path == "-":
        raise OptionError(f"--per-user - : with --engine {engine} the per-user values stay on "
                          "the cluster; give a directory for a Parquet dataset")
    if "://" not in path:
        check_dataset_path(path, engine)
    check_distinct({"--per-user": path}, inputs)


def check_dataset_path(path: str, engine: str) -> None:
    """A local per-user dataset path: absent, or an earlier Parquet dataset (part files and
    Spark's markers only), so that replacing it destroys nothing else."""
    target = Path(path)
    if not target.exists():
        if not target.absolute().parent.is_dir():
            raise OptionError(f"--per-user {path}: the directory {target.absolute().parent} "
                              "does not exist")
        return
    if not target.is_dir():
        raise OptionError(f"--per-user {path}: is a file; with --engine {engine} the per-user "
                          "values are a Parquet dataset: give a directory")
    others = [f.name for f in target.iterdir() if not _dataset_file(f.name)]
    if others:
        raise OptionError(f"--per-user {path}: holds other files ({', '.join(others[:3])}); "
                          "give a new directory or an earlier per-user dataset")


def _dataset_file(name: str) -> bool:
    name = name.removeprefix(".").removesuffix(".crc")
    return name == "_SUCCESS" or (name.startswith("part-") and name.endswith(".parquet"))


def write_dataset(path: str, engine: str, write: Callable[[str], None]) -> None:
    """``write(where)`` makes a Parquet dataset: at ``path`` itself for a URL (written over),
    else in a new directory beside ``path``, then given the modes the process's umask asks
    for (Hadoop's local filesystem applies its own) and moved in place."""
    if "://" in path:
        write(path)
        return
    check_dataset_path(path, engine)
    target = Path(path).absolute()
    tmp = target.with_name(f".{target.name}.rankeval-{os.getpid()}")
    try:
        write(str(tmp))
        _umask_modes(tmp)
        if target.exists():
            old = target.with_name(f".{target.name}.rankeval-old-{os.getpid()}")
            target.rename(old)
            tmp.rename(target)
            shutil.rmtree(old)
        else:
            tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _umask_modes(folder: Path) -> None:
    mask = os.umask(0)
    os.umask(mask)
    folder.chmod(0o777 & ~mask)
    for f in folder.iterdir():
        f.chmod((0o777 if f.is_dir() else 0o666) & ~mask)
