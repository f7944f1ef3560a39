"""ir_measures' output (``ir_measures QRELS RUN MEASURES``): ``measure<TAB>value`` lines."""

from __future__ import annotations

import numpy as np

from rankeval.io.formats.trec import check_field
from rankeval.irmeasures import printed, write
from rankeval.registry import CORPUS, REGISTRY
from rankeval.report.numbers import defined


def render(ev, per_user: bool = False, summary: bool = True) -> str:
    """ir_measures' lines: with ``per_user`` (its ``-q``), ``user<TAB>measure<TAB>value`` for
    each user and then ``all<TAB>measure<TAB>mean``; else ``measure<TAB>value``. Measures
    are written as ir_measures writes them (``P(rel=2)@10``, ``AP``), in the order named;
    values with 4 decimals, counts too (``3.0000``), as it prints them (a provider's values it
    reads back from text, gdeval's 5 decimals, rounded so first). ``summary`` False:
    the per-user lines alone (its ``-n``).

    ir_measures orders its per-query lines by provider and by a hash seed; these are by
    user, then measure (``sort`` both to diff). An undefined value has no line.
    """
    specs = list(ev.specs)
    # z-scores (--zscores): named with trec_eval -Z's prefix, Z (ZnDCG@10), as they are not
    # the measure's values
    names = [("Z" if ev.zscores is not None and REGISTRY[s.name].measured else "") + write(s)
             for s in specs]
    lines = []
    if per_user:
        at = [i for i, s in enumerate(specs) if REGISTRY[s.name].scope != CORPUS]
        users = ev.user_id_array.to_pylist()
        # its lines are split on whitespace and its summary is the query 'all', as trec_eval's
        check_field(f"{ev.inputs['predictions'].path}: the user ids", users, ("all",))
        columns = [_as_read(ev.values(specs[i]), printed(specs[i])).tolist() for i in at]
        for user, *values in zip(users, *columns, strict=True):
            lines += [f"{user}\t{names[i]}\t{v:.4f}\n"
                      for i, v in zip(at, values, strict=True) if defined(v)]
    if not summary:
        return "".join(lines)
    prefix = "all\t" if per_user else ""
    for spec, name in zip(specs, names, strict=True):
        value = ev.metrics[str(spec)]
        decimals = printed(spec)
        if decimals is not None and defined(value):  # the mean of the values as read back
            read = _as_read(ev.values(spec), decimals)
            value = float(np.mean(read[~np.isnan(read)]))
        if defined(value):
            lines.append(f"{prefix}{name}\t{value:.4f}\n")
    return "".join(lines)


def _as_read(values: np.ndarray, decimals: int | None) -> np.ndarray:
    """Per-user values as ir_measures reads them from a provider that prints ``decimals``
    (C's printf, correctly rounded, as Python's format); unchanged for None. The report's
    other formats (JSON) keep full precision."""
    if decimals is None:
        return values
    return np.array([float(f"{v:.{decimals}f}") for v in values.tolist()])
