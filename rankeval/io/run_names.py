"""The names runs go by in reports: the ones given (``--name``), else their files' stems."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rankeval.errors import OptionError, plural


def run_names(runs: Sequence[Any], names: Sequence[str] | None,
              default: Callable[[Any, int], str] | None = None) -> list[str]:
    """``names`` (``--name`` values), else ``default(run, i)`` (file stems, ``run1``... for
    in-memory tables), which are made unique (``a``, ``a-2``); a name given twice is
    refused, since the report could not tell the two runs apart."""
    if names and len(names) != len(runs):
        raise OptionError(f"{plural(len(names), 'run name')} for {plural(len(runs), 'run')}: "
                          "give one name per run, in order")
    if names:
        repeated = sorted({n for n in names if list(names).count(n) > 1})
        if repeated:
            raise OptionError(f"--name {repeated[0]!r} is given to more than one run: give each "
                              "run its own name")
    chosen = list(names or []) or [(default or _stem)(run, i) for i, run in enumerate(runs, 1)]
    seen: dict[str, int] = {}
    unique = []
    for name in chosen:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    if len(set(unique)) != len(unique):
        raise OptionError("run names must differ: give each run its own name")
    return unique


def _stem(run: Any, i: int) -> str:
    if isinstance(run, str | os.PathLike):
        return "stdin" if str(run) == "-" else Path(run).name.split(".")[0]
    return f"run{i}"
