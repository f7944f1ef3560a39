"""Inputs read by Ray Data: paths (files, directories, globs, on any filesystem pyarrow knows:
local, ``s3://``, ``gs://``, ``abfs://``, ``hdfs://``) or Ray Datasets, materialized once as
Arrow blocks in the object store; the tasks of ``exchange`` then move them by user."""

from __future__ import annotations

import csv
import fnmatch
import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
from pyarrow import fs as pafs

from rankeval.errors import InputError, OptionError, RankevalError
from rankeval.io.formats import ALIASES, EXTENSIONS
from rankeval.io.readers import for_role

# What the Ray engine reads (Ray Data's Parquet and CSV readers); others: rankeval convert
RAY_FORMATS = ("parquet", "csv", "tsv")
_GLOB = set("*?[")


@dataclass(frozen=True)
class Input:
    """One input in the object store: its Arrow blocks (in input order), its columns and
    their types (as text), rows, and how messages name it."""

    blocks: list  # ObjectRef[pa.Table]
    columns: list[str]
    types: list[str]
    rows: int
    label: str
    format: str  # the format read, "ray" for a Dataset


def is_dataset(data: Any) -> bool:
    """A Ray Dataset (lazy or materialized)."""
    return type(data).__module__.startswith("ray.data") and hasattr(data, "materialize")


def read_input(data: Any, role: str, fmt: str | None, flag: str,
               reading: dict[str, Any] | None = None) -> Input:
    """``data`` (a path or a Ray Dataset) read and materialized."""
    if is_dataset(data):
        return _materialized(data, role, "ray")
    if not isinstance(data, str | os.PathLike):
        raise RankevalError(f"{role}: expected a Ray Dataset or a path, got "
                            f"{type(data).__name__} (ray.data.from_pandas or from_arrow makes "
                            "one of a table in memory)")
    path = os.fspath(data)
    filesystem, files = resolve(path)
    kind = ray_format(path, files, fmt, f"{{opt:{flag}}}")
    with quiet():  # the Parquet reader samples a file when the dataset is made
        ds, options = _dataset(path, filesystem, files, kind, for_role(reading, role))
    try:
        return _materialized(ds, path, kind)
    except InputError as exc:
        if options is None:
            raise
        raise _csv_problem(path, filesystem, files, options) or exc from None


def resolve(path: str) -> tuple[Any, list[str]]:
    """(filesystem, files): a file, the data files under a directory (hidden ones, ``_*``
    and ``.*``, left out as Spark and Ray do), or the files a glob matches, in path order."""
    try:
        if "://" in path:
            filesystem, root = pafs.FileSystem.from_uri(path)
        else:
            filesystem, root = pafs.LocalFileSystem(), os.path.abspath(path)
        if _GLOB & set(root):
            found = _glob(filesystem, root)
        else:
            info = filesystem.get_file_info(root)
            if info.type == pafs.FileType.File:
                return filesystem, [root]
            if info.type != pafs.FileType.Directory:
                raise InputError(path, "no such file or directory")
            found = [f.path for f in filesystem.get_file_info(
                pafs.FileSelector(root, recursive=True)) if f.type == pafs.FileType.File
                and not _hidden(f.path[len(root):])]
    except (OSError, ValueError) as exc:  # an unknown scheme, no credentials, no network
        raise InputError(path, f"cannot list it: {_first_line(exc)}") from None
    if not found:
        raise InputError(path, "no data files" if not _GLOB & set(path)
                         else "no file matches the pattern")
    return filesystem, sorted(found)


def _glob(filesystem, pattern: str) -> list[str]:
    """Files matching ``pattern`` (``*`` within one path component, as a shell's)."""
    parts = pattern.split("/")
    first = next(i for i, p in enumerate(parts) if _GLOB & set(p))
    base = "/".join(parts[:first]) or "/"
    listed = filesystem.get_file_info(pafs.FileSelector(base, recursive=True,
                                                        allow_not_found=True))
    return [f.path for f in listed if f.type == pafs.FileType.File
            and len(f.path.split("/")) == len(parts)
            and all(fnmatch.fnmatchcase(a, b) for a, b in zip(f.path.split("/"), parts,
                                                               strict=True))]


def _hidden(relative: str) -> bool:
    return any(p.startswith(("_", ".")) for p in relative.split("/") if p)


def ray_format(path: str, files: list[str], explicit: str | None, flag: str) -> str:
    """``explicit``, else the extension of the path or of its files; Parquet when nothing
    says (a directory of extensionless part files)."""
    if explicit:
        fmt: str | None = ALIASES.get(explicit.lower(), explicit.lower())
    else:
        fmt = _extension(path)
        if fmt is None:
            found = {_extension(f) for f in files} - {None}
            fmt = found.pop() if len(found) == 1 else None
        fmt = fmt or "parquet"
    if fmt not in RAY_FORMATS:
        raise OptionError(f"{flag}: the Ray engine reads {', '.join(RAY_FORMATS)}; not {fmt} "
                          "(convert it with 'rankeval convert')")
    return fmt


def _extension(name: str) -> str | None:
    leaf = name.rstrip("/").rsplit("/", 1)[-1]
    suffixes = [s.lower() for s in os.path.splitext(leaf.removesuffix(".gz"))[1:] if s]
    return EXTENSIONS.get(suffixes[-1]) if suffixes else None


def _dataset(path: str, filesystem, files: list[str], fmt: str, reading: dict[str, Any]):
    import ray.data  # optional dependency: rankeval[ray]

    if fmt == "parquet":
        with _parquet_v1():
            return ray.data.read_parquet(files, filesystem=filesystem), None
    delimiter = reading.get("delimiter") or ("\t" if fmt == "tsv" else ",")
    encoding = reading.get("encoding") or "utf-8"
    names = _header(path, filesystem, files[0], delimiter, encoding)
    # Every column as text (empty cells null, as Spark reads them), so that numbers are
    # parsed and checked by rankeval's loaders, as in a local run.
    options: dict[str, Any] = dict(convert_options=pa_csv.ConvertOptions(
        column_types={n: pa.string() for n in names}, strings_can_be_null=True,
        null_values=[""]), parse_options=pa_csv.ParseOptions(delimiter=delimiter),
        read_options=pa_csv.ReadOptions(encoding=encoding))
    return ray.data.read_csv(files, filesystem=filesystem, **options), options


def _csv_problem(path: str, filesystem, files: list[str], options: dict) -> InputError | None:
    """What Arrow said of the first file it cannot parse (Ray's error keeps its own words
    only), read again here: the local engine's message."""
    for name in files:
        try:
            with filesystem.open_input_stream(name, compression="detect") as fh:
                for _ in pa_csv.open_csv(fh, **options):
                    pass
        except (pa.ArrowInvalid, OSError) as exc:
            where = "" if len(files) == 1 else f" {name}"
            return InputError(path, f"cannot parse{where}: {_first_line(exc)}")
    return None


@contextmanager
def _parquet_v1():
    """Ray Data's first Parquet reader, without progress bars, for the datasets made here:
    given the files (listed by ``resolve``), it reads a small file in 0.1 s where the second
    (Ray 2.60's default) takes 1.2-3 s, a second of it listing them again (measured on two
    cores)."""
    from ray.data import DataContext  # optional dependency: rankeval[ray]

    context = DataContext.get_current()
    saved = context.enable_progress_bars, getattr(context, "use_datasource_v2", None)
    context.enable_progress_bars = False
    if saved[1] is not None:
        context.use_datasource_v2 = False
    try:
        yield
    finally:
        context.enable_progress_bars = saved[0]
        if saved[1] is not None:
            context.use_datasource_v2 = saved[1]


def _header(path: str, filesystem, first: str, delimiter: str, encoding: str) -> list[str]:
    """The column names of the first file's header line."""
    try:
        with filesystem.open_input_stream(first, compression="detect") as fh:
            line = fh.read(1 << 16)
    except OSError as exc:
        raise InputError(path, f"cannot read: {_first_line(exc)}") from None
    text = line.decode(encoding, errors="replace").lstrip("\ufeff").split("\n")[0].rstrip("\r")
    if not text.strip():
        raise InputError(path, "file is empty" if not line else "the header line is empty")
    return next(csv.reader([text], delimiter=delimiter))


@contextmanager
def quiet():
    """Ray Data's console lines (execution plans, progress, a failed read's traceback) off
    stderr while rankeval runs a dataset, whoever started Ray: stderr is for rankeval's
    lines, and Ray's session log files keep them all."""
    import ray.data  # noqa: F401  (optional dependency; sets up its loggers when imported)

    handlers = [h for h in logging.getLogger("ray.data").handlers
                if isinstance(h, logging.StreamHandler)]  # the console's, not the file's
    levels = [h.level for h in handlers]
    for handler in handlers:
        handler.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for handler, level in zip(handlers, levels, strict=True):
            handler.setLevel(level)


def _materialized(ds, label: str, fmt: str) -> Input:
    """The dataset executed once, its blocks in input order (file order within each file,
    files in path order: the input order decides a ranking without rank or score), left in
    the object store. A Dataset given keeps its own settings."""
    context = ds.context
    saved = context.enable_progress_bars, context.execution_options.preserve_order
    context.enable_progress_bars = False  # stderr is for rankeval's lines
    context.execution_options.preserve_order = True
    try:
        with quiet():
            done = ds.materialize()
            rows = done.count()
            schema = done.schema() if rows else None
            blocks = done.to_arrow_refs()
    except Exception as exc:  # a malformed CSV record, a file Ray cannot read
        raise InputError(label, f"Ray cannot read it as {fmt}: {job_error(exc)}") from None
    finally:
        context.enable_progress_bars, context.execution_options.preserve_order = saved
    if schema is None:  # no rows, maybe no block to tell the columns
        raise InputError(label, "no data rows (only a header)")
    return Input(blocks, list(schema.names), [str(t) for t in schema.types], rows, label, fmt)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def job_error(exc: BaseException) -> str:
    """The useful line of a failed Ray job: the first line of what a task raised (Ray's
    wrapper adds the task's traceback, which its logs keep)."""
    cause = getattr(exc, "cause", None) or exc
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return (lines[0] if lines else type(cause).__name__)[:500]
