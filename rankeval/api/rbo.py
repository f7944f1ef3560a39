"""``rbo(run, baseline, p)`` -> an ``Overlap``: how alike two runs rank, user by user (no
truth read). The runs are read here; ``analysis/overlap.py`` computes the overlap."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rankeval.analysis.overlap import Overlap, check_p, overlap
from rankeval.io.load import load_predictions, open_input
from rankeval.io.run_names import run_names
from rankeval.settings import make_settings


def rbo(run: Any, baseline: Any, p: float = 0.9, *, names: tuple[str, str] | None = None,
        compat: str | None = None, preds_format: str | None = None,
        reading: Mapping[str, Any] | None = None, user_col: str | None = None,
        item_col: str | None = None, rank_col: str | None = None,
        score_col: str | None = None, **options: Any) -> Overlap:
    """Rank-biased overlap of ``run`` and ``baseline`` (paths or tables, as ``evaluate``
    reads predictions) for every user of either, with persistence ``p``: ``ext``, ``min``,
    ``max`` and ``residual`` per user and as means. No truth is read. ``options``: the
    settings that shape the lists (``ties``, ``max_depth``, ``dedupe``).

    >>> r = rbo("pr.csv", "main.csv", p=0.9)
    >>> r.mean("ext"), r.per_user.head()
    """
    shaping = {"ties", "max_depth", "dedupe"}
    if set(options) - shaping:
        raise TypeError(f"unknown option(s): {', '.join(sorted(set(options) - shaping))}")
    settings = make_settings(None, None, compat=compat, **options)
    p = check_p(p, "p")
    label = run_names([run, baseline], list(names) if names else None)
    columns = {"user_col": user_col, "item_col": item_col, "rank_col": rank_col,
               "score_col": score_col}
    loaded = [load_predictions(open_input(x, "predictions", preds_format, reading), columns)
              for x in (run, baseline)]
    return overlap(loaded[0], loaded[1], settings, (label[0], label[1]), p)
