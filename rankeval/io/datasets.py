"""Per-user values written by a cluster (``--per-user DIR`` with ``--engine spark`` or
``ray``): a Parquet dataset, a directory of part files, never a single file. A local one is
written beside its place and moved in when complete, replacing only an earlier dataset; a
symlink keeps pointing at its dataset, which is replaced; a mount point is refused (it cannot
be moved); a failed write (a full disk) is one line naming the path."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rankeval.errors import OptionError
from rankeval.io.output import (
    OutputError,
    check_distinct,
    check_folder,
    make_folder,
    pending,
    temporary_name,
)


def check_per_user(engine: str, path: str, inputs: list[str]) -> None:
    """Before anything is read: ``--per-user PATH`` names a dataset this engine can write
    (a directory, never ``-``), and no input."""
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
    if target.is_dir() and os.path.ismount(os.path.realpath(target)):
        raise OptionError(f"--per-user {path}: is a mount point, which cannot be replaced; "
                          "give a directory inside it")
    if not target.exists():
        check_folder(target.absolute().parent, f"--per-user {path}")
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
    else in a new directory beside ``path`` (beside its file, for a symlink), then given the
    modes the process's umask asks for (Hadoop's local filesystem applies its own) and moved
    in place. The temporary directories are removed on any failure or signal (``pending``).
    An ``OSError`` is an ``OutputError`` naming ``path``."""
    if "://" in path:
        write(path)
        return
    check_dataset_path(path, engine)
    target = Path(os.path.realpath(path))
    try:
        make_folder(target)
        with pending(str(temporary_name(target, "rankeval"))) as tmp, \
                pending(str(temporary_name(target, "rankeval-old"))) as old:
            write(tmp)
            _umask_modes(Path(tmp))
            if not target.exists():
                os.rename(tmp, target)
                return
            os.rename(target, old)
            try:
                os.rename(tmp, target)
            except BaseException:
                os.rename(old, target)  # the earlier dataset stays
                raise
    except Exception as exc:  # a cluster's task wraps the OSError (Ray's RayTaskError)
        cause = _os_error(exc)
        if cause is None:
            raise
        reason = os.strerror(cause.errno or 0)  # one line (the task's text is its traceback)
        raise OutputError(f"cannot write {path}: {reason}") from None


def _os_error(exc: BaseException | None, depth: int = 0) -> OSError | None:
    """The OSError with an errno behind ``exc``: itself, or what it wraps (``cause``,
    ``__cause__``, ``__context__``; Ray's task error is an OSError without one, its
    ``cause`` the task's own)."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, OSError) and exc.errno:
        return exc
    for inner in (getattr(exc, "cause", None), exc.__cause__, exc.__context__):
        if isinstance(inner, BaseException) and inner is not exc:
            found = _os_error(inner, depth + 1)
            if found is not None:
                return found
    return None


def _umask_modes(folder: Path) -> None:
    mask = os.umask(0)
    os.umask(mask)
    folder.chmod(0o777 & ~mask)
    for f in folder.iterdir():
        f.chmod((0o777 if f.is_dir() else 0o666) & ~mask)
