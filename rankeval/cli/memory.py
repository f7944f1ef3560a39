"""How the command line's one-shot runs allocate: numpy keeps freed memory for reuse, Arrow
gives its freed memory back.

An evaluation makes a few dozen temporary numpy arrays of the size of the input. By default
glibc hands every block over 32 MiB back to the kernel when it is freed, so each new temporary
is fresh memory that the kernel must zero page by page: on a virtual machine that costs more
than the arithmetic (on 10M rows, about a third of the run). Keeping freed blocks in the heap
avoids it, and peak memory stays what the live arrays need, because a freed block is reused
before the heap grows.

Arrow's memory is the other kind: the file's text, read once and let go once the ids are
encoded. Kept in that heap it would stay the peak's floor, in pieces numpy's later arrays do
not fit. jemalloc returns it to the system within ``_DECAY_MS``: on 1M users x 10 over 5M
items the peak goes from 950 to 780 MiB, and the run is as fast or faster (``make bench``).
Its threads share one arena (``_JEMALLOC_CONF``), so that a block one reading thread lets go
is the next one's, where with jemalloc's default of four arenas a core each thread's freed
blocks waited out the decay in its own.

numpy's BLAS gets one thread (``one_blas_thread``): as numpy loads, OpenBLAS starts a thread
per core that spins for about 0.1 s of CPU before it sleeps (``import numpy`` and a 1 s sleep:
0.30 s of CPU, 0.19 s with one thread), beside Arrow's reading threads on the same cores, and
no hot path multiplies matrices.

Only the command line calls this: a library should not change its host process's allocator.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8
# Long enough that the reader's own churn reuses pages, short enough that the text read
# is gone before the join's arrays are made (0 ms: 10% slower; 1 s: the peak stays up).
_DECAY_MS = 200
# Read by pyarrow's jemalloc once, as pyarrow is imported; the user's own options follow ours and
# win. One arena, in 6 interleaved pairs on each of ten shapes (issue #49's four and H, from CSV
# and from Parquet): peak memory 0.79-1.03x (median 0.92x; 4.2M hashed ids from Parquet, 627 ->
# 496 MiB), wall time 0.96-1.09x (median 1.01x).
_JEMALLOC_ENV = "JE_ARROW_MALLOC_CONF"
_JEMALLOC_CONF = "narenas:1"


_BLAS_ENV = "OPENBLAS_NUM_THREADS"


def for_one_run() -> None:
    """Set up the process's allocators for one evaluation; see the module's docstring."""
    retain_freed_memory()
    with one_blas_thread():
        release_arrow_memory()  # imports pyarrow, which loads numpy


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS loaded with one thread, unless the environment names a count (which wins) or
    numpy is loaded already; the environment as it was afterwards, for child processes."""
    if _BLAS_ENV in os.environ or "numpy" in sys.modules:
        yield
        return
    os.environ[_BLAS_ENV] = "1"
    try:
        # --help does not load numpy; a command loads it here, where OpenBLAS reads the count
        import numpy  # noqa: F401

        yield
    finally:
        del os.environ[_BLAS_ENV]


def retain_freed_memory() -> None:
    """Keep numpy's freed blocks in glibc's heap for reuse (no-op off glibc)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    mallopt(_M_MMAP_MAX, 0)  # large blocks from the heap, so that free() keeps them
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # ...and does not give the heap's top back
    mallopt(_M_ARENA_MAX, 1)  # worker threads share the main heap rather than private ones


def release_arrow_memory() -> None:
    """Arrow allocates from jemalloc, one arena, which returns freed pages within
    ``_DECAY_MS``; where pyarrow was built without it, from glibc's heap.
    ``ARROW_DEFAULT_MEMORY_POOL``, when set, is the user's choice and wins; so do their
    ``JE_ARROW_MALLOC_CONF`` options. Where pyarrow was imported already, its jemalloc has
    read its options: the arena count is then its default."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return
    told = os.environ.get(_JEMALLOC_ENV)
    os.environ[_JEMALLOC_ENV] = ",".join(filter(None, (_JEMALLOC_CONF, told)))
    try:
        import pyarrow as pa  # --help's import cost: pyarrow, once a command runs

        # Under an address-space limit (ulimit -v) jemalloc's reservations fail and pyarrow's
        # jemalloc crashes the process (SIGSEGV on a thread's first allocation) where glibc's
        # heap gives a clean MemoryError: tests/test_stress.py runs both cases.
        if "jemalloc" in pa.supported_memory_backends() and not _address_space_limited():
            pa.set_memory_pool(pa.jemalloc_memory_pool())
            pa.jemalloc_set_decay_ms(_DECAY_MS)  # jemalloc has read its options by now
        else:
            pa.set_memory_pool(pa.system_memory_pool())
    finally:  # the process's environment as it was: child processes see the user's own
        if told is None:
            del os.environ[_JEMALLOC_ENV]
        else:
            os.environ[_JEMALLOC_ENV] = told


def _address_space_limited() -> bool:
    try:
        import resource  # optional dependency: POSIX only
    except ImportError:  # not POSIX
        return False
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY
