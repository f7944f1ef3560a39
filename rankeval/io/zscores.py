"""A z-scores file (``zscores``; trec_eval's ``-Z FILE``): per user and metric, the mean and
standard deviation of a reference set of runs, ``qid measure mean stddev`` per line, fields
separated by whitespace. Each value is then reported as its z-score against them: (value -
mean) / stddev, 0 when the standard deviation is 0 and the value is the mean; undefined when
the file has no line for the (user, metric) pair, or a standard deviation of 0 and the value
is off the mean (trec_eval prints -1000000 then: ``MISSING``), or the file's mean or standard
deviation is nan."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, plural
from rankeval.io.arrow import fill_null, from_numpy, to_numpy

LAYOUT = "qid measure mean stddev"
EXAMPLE = "'301 map 0.2134 0.0871'"
# trec_eval's value for a z-score it has no mean and standard deviation for (-Z's lines and
# the means over queries, into which it is summed)
MISSING = -1000000.0


@dataclass(frozen=True)
class ZTable:
    """The file's lines: user ids, metric names, means and standard deviations."""

    path: str
    users: pa.Array
    measures: pa.Array
    means: np.ndarray
    stddevs: np.ndarray

    def lookup(self, users: pa.Array, measure: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per user of ``users`` (ids compared as text), the mean and standard deviation of
        ``measure``, and whether the file has them."""
        rows = np.flatnonzero(to_numpy(pc.equal(self.measures, pa.scalar(measure))))
        at = pc.index_in(pc.cast(users, pa.string()), value_set=self.users.take(rows))
        found = to_numpy(pc.is_valid(at))
        place = rows[to_numpy(fill_null(at, 0)).astype(np.int64)] if len(rows) else (
            np.zeros(len(users), dtype=np.int64))
        mean = np.where(found, self.means[place] if len(rows) else 0.0, np.nan)
        sd = np.where(found, self.stddevs[place] if len(rows) else 0.0, np.nan)
        return mean, sd, found


def zscore(values: np.ndarray, mean: np.ndarray, sd: np.ndarray,
           found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The z-scores of ``values`` (NaN where undefined: a value already undefined, a mean or
    standard deviation of nan, no line, a standard deviation of 0 with the value off the
    mean) and trec_eval's numbers for them: ``MISSING`` for the last two, and a NaN whose
    sign says how C prints it, ``-nan`` for a value's own 0/0 and ``nan`` for the file's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd != 0, (values - mean) / np.where(sd != 0, sd, 1.0), 0.0)
    missing = ~found | (found & (sd == 0) & (values != mean))
    z = np.where(missing, np.nan, z)
    shown = np.where(missing, MISSING, np.where(np.isnan(values), -np.nan, z))
    return z, np.where(~missing & ~np.isnan(values) & np.isnan(z), np.nan, shown)


@dataclass(frozen=True)
class ZScored:
    """What ``zscores`` did to an evaluation: the file, and per metric (``str(spec)``) the
    numbers trec_eval prints for the users (in their order; ``zscore``'s second value) and
    for its summary (the missing ones summed as ``MISSING``), for ``-f trec`` under its
    presets."""

    path: str
    shown: dict[str, np.ndarray] = field(default_factory=dict)
    trec: dict[str, float] = field(default_factory=dict)

    def taken(self, order: np.ndarray) -> ZScored:
        """The same with the users in ``order``."""
        return ZScored(self.path, {m: v[order] for m, v in self.shown.items()}, self.trec)


def read_zscores(path: Any) -> ZTable:
    """The z-scores file at ``path``; an InputError naming its line for a line that is not
    ``qid measure mean stddev`` with numbers (a standard deviation >= 0), or a (qid, measure)
    pair given twice."""
    label = os.fspath(path)
    try:
        data = Path(label).read_bytes()
    except OSError as exc:
        raise InputError(label, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(label, f"line {line} is not valid utf-8 text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the last line's newline
    if not lines:
        raise InputError(label, f"is empty: a z-scores file has a line '{LAYOUT}' per user "
                                f"and metric (e.g. {EXAMPLE})")
    fields = pc.utf8_split_whitespace(pa.array(lines, pa.string()))
    counts = to_numpy(pc.list_value_length(fields))
    bad = np.flatnonzero(counts != 4)
    if len(bad):
        i = int(bad[0])
        if not lines[i].strip():  # split, a blank line is one empty field
            raise InputError(label, f"line {i + 1} is blank: each line is '{LAYOUT}' (e.g. "
                                    f"{EXAMPLE})")
        raise InputError(label, f"line {i + 1} has {plural(int(counts[i]), 'field')}, not 4 "
                                f"('{LAYOUT}', "
                                f"e.g. {EXAMPLE}): {lines[i].strip()[:80]!r}")
    flat = pc.list_flatten(fields)
    n = len(lines)
    cols: list[Any] = [flat.take(from_numpy(np.arange(j, 4 * n, 4))) for j in range(4)]
    means = _numbers(label, cols[2], lines, "mean")
    sds = _numbers(label, cols[3], lines, "standard deviation")
    negative = np.flatnonzero(sds < 0)
    if len(negative):
        i = int(negative[0])
        raise InputError(label, f"line {i + 1}: a standard deviation is >= 0: "
                                f"{lines[i].strip()[:80]!r}")
    keys = to_numpy(pc.binary_join_element_wise(cols[0], cols[1], "\x00"))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    again = np.flatnonzero(first[inverse] != np.arange(n))
    if len(again):
        i = int(again[0])
        j = int(first[inverse[i]])
        raise InputError(label, f"line {i + 1} gives qid {cols[0][i].as_py()!r} and measure "
                                f"{cols[1][i].as_py()!r} again (line {j + 1}): one mean and "
                                "standard deviation per user and metric")
    return ZTable(label, cols[0], cols[1], means, sds)


def _numbers(label: str, column: pa.Array, lines: list[str], what: str) -> np.ndarray:
    try:
        values = to_numpy(pc.cast(column, pa.float64()))
    except (pa.ArrowInvalid, ValueError):
        values = None
    if values is not None and not np.isinf(values).any():
        return values  # nan: undefined (trec_eval's own test file has some), its z-score too
    texts = column.to_pylist()
    for i, t in enumerate(texts):  # the error's line only: the file has a bad one
        try:
            if not math.isinf(float(str(t))):
                continue
        except ValueError:
            pass
        raise InputError(label, f"line {i + 1}: the {what} {t!r} is not a finite number or "
                                f"nan ('{LAYOUT}', e.g. {EXAMPLE})")
    raise AssertionError("unreachable: a value failed to convert")  # pragma: no cover
