"""Writing results: a regular file appears whole or not at all (a temporary file, renamed),
with the permissions the umask gives (or the replaced file had); a symlink keeps pointing at
its file, which is replaced the same way; devices and FIFOs are written through, as streams;
a path that is the process's own stdout or stderr (``/dev/stdout``, ``/dev/fd/2``) is written
to that descriptor, where it stands, never reopened and truncated; stdout may be closed by
its reader without changing the run's outcome. Temporary files are registered before they
exist (``pending``), so that a signal at any moment removes them (``remove_pending``).
Every byte goes through ``write_all``, which loops over short writes: an output is whole, or
the run fails with one ``OutputError`` line naming the target (never an internal error, never
exit 0 with a cut-short file)."""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from rankeval.errors import OptionError, RankevalError
from rankeval.io.formats import STDOUT
from rankeval.io.paths import check

PER_USER_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class OutputError(RankevalError):
    """An output could not be written (disk full, read-only, permission, ...)."""


def check_writable(path: str, flag: str) -> None:
    """Fail before any work when an output could not be written."""
    if path == STDOUT:
        return
    if path.endswith(("/", os.sep)):
        raise OptionError(f"{flag} {path}: names a directory (it ends in /), not a file")
    p = Path(path)
    if p.is_dir():
        raise OptionError(f"{flag} {path}: is a directory")
    if _written_through(p):
        if not os.access(p, os.W_OK):
            raise OptionError(f"{flag} {path}: permission denied")
        return
    check_folder(_replaced(p).parent, f"{flag} {path}")


def check_folder(parent: Path, named: str) -> None:
    """The folder an output goes in exists, or can be made (``make_folder``, at the write):
    its nearest existing ancestor is a writable directory."""
    existing = parent.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OptionError(f"{named}: {existing} is not a directory")
    if not os.access(existing, os.W_OK):
        raise OptionError(f"{named}: cannot write to {existing}")


def make_folder(target: Path) -> None:
    """The missing folders of an output's path made, as ``mkdir -p`` does."""
    target.parent.mkdir(parents=True, exist_ok=True)


def check_distinct(outputs: dict[str, str | None], inputs: Iterable[str]) -> None:
    """No output may be an input or another output (the same file by any name), checked
    before any work: ``-o preds.csv`` must never destroy the predictions (``io.paths``)."""
    check([("input", path) for path in inputs],
          [(flag, path) for flag, path in outputs.items() if path is not None])


def _is_device(p: Path) -> bool:
    try:
        mode = p.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def _written_through(p: Path) -> bool:
    """Anything that is not a regular file (devices, FIFOs, the process's own descriptors
    behind a symlink) is written in place: renaming over it would replace the device node."""
    try:
        mode = p.stat().st_mode  # through symlinks
    except OSError:
        return False  # a new file (or a link to one)
    return not stat.S_ISREG(mode) or _standard_fd(str(p)) is not None


def _replaced(p: Path) -> Path:
    """The file a write replaces: a symlink's file (the link stays a link), else ``p``."""
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def _standard_fd(path: str) -> int | None:
    """1 or 2 when ``path`` is the file this process's stdout or stderr is open on
    (``/dev/stdout``, ``/dev/fd/2``, a file the shell redirected stdout to): writing it
    means writing that descriptor where it stands, never opening it again with O_TRUNC."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    for fd in (1, 2):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            return fd
    return None


# Temporary outputs being written (files and dataset directories), registered before they
# exist: the command line's signal handling removes them (``remove_pending``).
_PENDING: set[str] = set()


@contextlib.contextmanager
def pending(path: str) -> Iterator[str]:
    """``path`` is a temporary output for the block: removed after it (when it is still
    there, i.e. not renamed into place) or on a signal meanwhile."""
    _PENDING.add(path)
    try:
        yield path
    finally:
        _remove(path)
        _PENDING.discard(path)


def remove_pending() -> None:
    """Remove every temporary output being written (on a signal; safe from any thread). Each
    stays registered until its own block ends: a second call removes one that did not exist
    yet at the first (another thread was creating it)."""
    for path in list(_PENDING):
        _remove(path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def temporary_name(target: Path, kind: str = "tmp") -> Path:
    """A new hidden name beside ``target`` for its temporary copy."""
    return target.with_name(f".{target.name}.{os.urandom(4).hex()}.{kind}")


def per_user_format(path: str) -> str:
    if path == STDOUT:
        return "csv"
    suffix = Path(path).suffix.lower()
    if suffix not in PER_USER_FORMATS:
        raise OptionError(f"--per-user {path}: use a .csv or .parquet file name, or - for stdout")
    return PER_USER_FORMATS[suffix]


def write_atomic(path: str, write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` and move the result to ``path`` only when it succeeded (for a
    symlink, to the file it points at); a device or FIFO is written through instead."""
    target = Path(path)
    try:
        if _written_through(target):
            write(path)
            return
        target = _replaced(target)
        make_folder(target)
        mode = _mode(target)
        # registered before it exists: a signal at any moment leaves nothing behind
        with pending(str(temporary_name(target))) as tmp:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            write(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, target)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _mode(target: Path) -> int:
    """The permissions of the file being replaced, else those the umask gives a new file."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# The one system call every output's bytes go through (tests replace it with a device that
# takes a few bytes per call and then fails).
_os_write = os.write


def write_all(write: Callable[[memoryview], int | None], data: bytes) -> None:
    """Every byte of ``data`` through ``write`` (an ``os.write`` on a descriptor, or a
    stream's ``write``), however few each call takes: a write that takes none is an error,
    never a silently shorter output. Errors (ENOSPC, EIO, EFBIG) are raised as they come."""
    view = memoryview(data).cast("B")
    while view:
        taken = write(view)
        if taken is None:  # a non-blocking stream that would block: try again
            continue
        if taken <= 0:
            raise OSError(errno.EIO, "the output accepted no more bytes (a short write)")
        view = view[taken:]


def write_fd(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to the descriptor ``fd``."""
    write_all(lambda view: _os_write(fd, view), data)


def write_stdout(data: bytes) -> None:
    """Bytes to standard output, every one or an ``OutputError`` naming why (a full disk's
    short write included). A reader that closed it early (``| head``, ``| true``) is not an
    error, and the run goes on (files asked for are still written, the exit code is still
    the gates')."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("cannot write to standard output: it is closed")
    try:
        sys.stdout.flush()
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, ValueError, io.UnsupportedOperation):  # in-memory (tests)
            write_all(sys.stdout.buffer.write, data)
            sys.stdout.flush()
        else:
            sys.stdout.buffer.flush()  # anything buffered goes first, in order
            write_fd(fd, data)
    except BrokenPipeError:
        stdout_closed()
    except OSError as exc:
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


def stdout_closed() -> None:
    """Point stdout at /dev/null so that later writes and the final flush succeed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def write_text(path: str, text: str) -> None:
    """Text to a file (atomically) or to stdout for ``-``."""
    write_bytes(path, text.encode("utf-8"))


def csv_bytes(table, delimiter: str = ",") -> bytes:
    """A table as CSV text with shortest round-trip floats, quoting only where a value needs it.

    (Arrow would quote every string; plain ids read and diff better.)
    """
    import pyarrow as pa  # --help's import cost: pyarrow
    import pyarrow.compute as pc  # --help's import cost: pyarrow
    import pyarrow.csv as pa_csv  # --help's import cost: pyarrow

    special = f'[{delimiter}"\\r\\n]'
    quote = any(
        pc.any(pc.match_substring_regex(table.column(name), special)).as_py()
        for name in table.column_names
        if pa.types.is_string(table.column(name).type)
    )
    sink = pa.BufferOutputStream()
    options = pa_csv.WriteOptions(
        include_header=False, delimiter=delimiter, quoting_style="needed" if quote else "none"
    )
    pa_csv.write_csv(table, sink, options)
    # names hold users' words (a metric's parameters, a run's --name): quoted where needed
    line = io.StringIO()
    csv.writer(line, delimiter=delimiter, lineterminator="\n").writerow(table.column_names)
    return line.getvalue().encode() + sink.getvalue().to_pybytes()


def write_bytes(path: str, data: bytes) -> None:
    """Bytes to a file (atomically) or to stdout for ``-`` (or a name of it)."""
    fd = 1 if path == STDOUT else _standard_fd(path)
    if fd == 1:
        write_stdout(data)
        return
    if fd == 2:
        sys.stderr.flush()  # what was said before goes first
        try:
            write_fd(fd, data)
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        return

    def write(tmp: str) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            write_fd(fd, data)
        finally:
            os.close(fd)

    write_atomic(path, write)


def append_bytes(path: str, data: bytes) -> None:
    """Bytes added at the end of a file (created if missing), every one or an ``OSError``
    for the caller to word (the step summary is a warning, not a failure). A FIFO with no
    reader is an error at once (ENXIO), never a wait without end."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o666)
    try:
        os.set_blocking(fd, True)  # opened: a slow reader is waited for, like any output
        write_fd(fd, data)
    finally:
        os.close(fd)


def write_per_user(table, path: str) -> None:
    """The per-user Arrow table as CSV (``-`` or ``.csv``) or Parquet, full precision."""
    if per_user_format(path) == "csv":
        write_bytes(path, csv_bytes(table))
    else:
        import pyarrow.parquet as pq  # --help's import cost: pyarrow

        write_atomic(path, lambda tmp: pq.write_table(table, tmp))
