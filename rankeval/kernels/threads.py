"""Work split over the machine's cores with threads: numpy and Arrow release the GIL in the
bulk operations every hot path is made of, so threads share one copy of the data."""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORKERS = max(1, min(os.cpu_count() or 1, 2))  # the hot paths are split in two, no more


def each(work: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[work(x) for x in items]``, in order, on ``WORKERS`` threads (inline for one item,
    and inside ``work`` itself, so that a nested call never waits for the threads it runs
    on). Every item is done before it returns or raises (the first failure in item order)."""
    items = list(items)
    if len(items) <= 1 or WORKERS == 1 or getattr(_local, "worker", False):
        return [work(x) for x in items]
    jobs = [_pool().submit(work, x) for x in items]
    wait(jobs)
    return [job.result() for job in jobs]


# One pool for the process, its threads started once: a run calls ``each`` a dozen times, and
# starting two threads per call took 25-45 ms of a run's main thread (24 thread starts)
_local = threading.local()
_shared: list[ThreadPoolExecutor] = []
_lock = threading.Lock()


def _mark_worker() -> None:
    _local.worker = True


def _pool() -> ThreadPoolExecutor:
    with _lock:
        if not _shared:
            _shared.append(ThreadPoolExecutor(WORKERS, thread_name_prefix="rankeval-each",
                                              initializer=_mark_worker))
        return _shared[0]


def _forget_pool() -> None:
    """In a forked child: the parent's pool threads are not there; the next call starts a
    pool of the child's own."""
    global _lock
    _shared.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def halves(n: int) -> list[tuple[int, int]]:
    """[(0, n/2), (n/2, n)]: the row ranges of a two-way split (one range when small)."""
    if n < 1 << 16:
        return [(0, n)]
    mid = n // 2
    return [(0, mid), (mid, n)]


class Later:
    """``work(*args)`` started on a thread of its own, for a caller with other work to do
    meanwhile; ``result()`` waits for it and returns its value or raises its exception.
    ``inline`` (or one core): done at once, for work too small to be worth a thread."""

    def __init__(self, work: Callable[..., R], *args, inline: bool = False):
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = None
        if inline or WORKERS == 1:
            self._run(work, args)
        else:
            # In the caller's context, so that errors it collects (``errors.report``) are seen.
            context = contextvars.copy_context()
            # Not a daemon: a caller that fails meanwhile leaves it running, and the interpreter
            # must wait for it before finalizing (a daemon thread inside pyarrow at exit crashes
            # the process: SIGSEGV or SIGABRT).
            self._thread = threading.Thread(target=context.run, args=(self._run, work, args))
            self._thread.start()

    def _run(self, work, args) -> None:
        try:
            self._value = work(*args)
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def wait(self) -> None:
        """Wait for the work to end, keeping its value or error for ``result()``."""
        if self._thread is not None:
            self._thread.join()

    def result(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._value
