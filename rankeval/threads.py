"""Work split over the machine's cores with threads: numpy and Arrow release the GIL in the
bulk operations every hot path is made of, so threads share one copy of the data."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORKERS = max(1, min(os.cpu_count() or 1, 2))  # the hot paths are split in two, no more


def each(work: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[work(x) for x in items]``, in order, on ``WORKERS`` threads (inline for one item).
    ``work`` must not call ``each`` itself."""
    items = list(items)
    if len(items) <= 1 or WORKERS == 1:
        return [work(x) for x in items]
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(work, items))


def halves(n: int) -> list[tuple[int, int]]:
    """[(0, n/2), (n/2, n)]: the row ranges of a two-way split (one range when small)."""
    if n < 1 << 16:
        return [(0, n)]
    mid = n // 2
    return [(0, mid), (mid, n)]
