"""Keep freed memory in the process for reuse, for the command line's one-shot runs.

An evaluation makes a few dozen temporary arrays of the size of the input. By default glibc
hands every block over 32 MiB back to the kernel when it is freed, and Arrow keeps its own
separate heap, so each new temporary is fresh memory that the kernel must zero page by page:
on a virtual machine that costs more than the arithmetic (on 10M rows, about a third of the
run). Reusing freed blocks from one shared heap avoids it. Peak memory stays what the live
arrays need, because a freed block is reused before the heap grows.

Only the command line calls this: a library should not change its host process's allocator.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8


def retain_freed_memory() -> None:
    """Make numpy and Arrow share glibc's heap and keep freed blocks (no-op off glibc)."""
    # Arrow reads this when it first allocates; a user's own choice wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return
    mallopt(_M_MMAP_MAX, 0)  # large blocks from the heap, so that free() keeps them
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)  # ...and does not give the heap's top back
    mallopt(_M_ARENA_MAX, 1)  # worker threads share the main heap rather than private ones
