"""``sampled(runs, candidates, negatives, ...)`` -> a ``SampledResult`` (``rankeval
sampled``): metrics on sampled negatives and their corrections toward the full ranking. The
runs and the truth are read here; ``analysis/sampled_runs.py`` turns them into sampled ranks,
``analysis/sampled.py`` estimates."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankeval.analysis.sampled import Ranks, SampledResult, check_sizes, estimate
from rankeval.analysis.sampled_runs import TIES, among_negatives, parse_metrics
from rankeval.errors import InputError, OptionError
from rankeval.io.load import load_predictions, load_truth, open_input


def sampled(runs: Any, candidates: int, negatives: int | None = None, *, truth: Any = None,
            metrics: str | Iterable[str] = "hit_rate,ndcg,mrr,auc",
            k: int | str | Iterable[int] = 10, gamma: float = 0.1, sampling: str = "without",
            ties: str = "expected", names: Sequence[str] | None = None,
            preds_format: str | None = None, truth_format: str | None = None,
            columns: Mapping[str, str | None] | None = None,
            reading: Mapping[str, Any] | None = None) -> SampledResult:
    """Sampled metrics and their corrections toward the full ranking among ``candidates``
    items (Krichene and Rendle 2020).

    ``runs``: one run or a list (or a dict name -> run) of paths or tables. Without
    ``truth`` each has one row per held-out item with its rank among itself and its
    ``negatives`` sampled negatives (a ``rank`` or ``rank_among_sampled`` column). With
    ``truth`` each holds the scores (or ranks) of every user's held-out items and sampled
    negatives, and ``truth`` names the held-out items (relevance > 0); ``negatives`` is
    then read from the file (given, it must agree). ``metrics``: hit_rate, precision, ndcg,
    mrr, auc; ``k``: their cut-offs; ``gamma``: the bias-variance correction's weight of
    variance; ``sampling``: negatives drawn ``"without"`` or ``"with"`` replacement;
    ``ties``: expected, optimistic or pessimistic; ``columns``: ``user_col``, ``item_col``,
    ``rank_col``, ``score_col``, ``relevance_col``; ``reading``: delimiter, encoding.

    >>> rankeval.sampled("scores.csv", candidates=3706, truth="heldout.csv")
    """
    check_sizes(candidates, negatives)
    if sampling not in ("without", "with"):
        raise OptionError(f"sampling must be 'without' or 'with', got {sampling!r}")
    if ties not in TIES:
        raise OptionError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
    named = _named(runs, names)
    cols = dict(columns or {})
    wanted = parse_metrics(metrics, k)
    judged = None
    if truth is not None:
        judged = load_truth(open_input(truth, "truth", truth_format, reading),
                            cols.get("user_col"), cols.get("item_col"), cols.get("relevance_col"))
    ranks: dict[str, Ranks] = {}
    warnings: list[str] = []
    for name, data in named.items():
        table = open_input(data, "predictions", preds_format, reading)
        preds = load_predictions(table, cols.get("user_col"), cols.get("item_col"),
                                 cols.get("rank_col"), cols.get("score_col"), None)
        if judged is None:
            if preds.rank is None:
                raise InputError(preds.source.label, "no rank column: each row is a held-out "
                                 "item with its rank among the sampled negatives (or, with "
                                 "the scores of the negatives too, give the held-out items "
                                 "last: rankeval sampled RUN [RUN...] TRUTH)")
            ranks[name] = preds.rank
            continue
        low, high, found, left = among_negatives(preds, judged, ties)
        if negatives is not None and found != negatives:
            raise InputError(preds.source.label, f"{found:,} sampled negatives per held-out "
                             f"item here, but {negatives:,} given")
        negatives = found
        ranks[name] = (low, high)
        if left:
            warnings.append(f"{name}: {left:,} users with scores but no held-out item in the "
                            "truth are not instances")
    if negatives is None:
        raise OptionError("{opt:negatives} is needed: how many negatives were sampled per "
                          "held-out item (with the truth it is read from the runs)")
    result = estimate(ranks, wanted, candidates, negatives, gamma, sampling == "with")
    return SampledResult(result.runs, result.candidates, result.negatives, result.gamma,
                         result.replacement, result.flips,
                         ties if judged is not None else None, warnings)


def _named(runs: Any, names: Sequence[str] | None) -> dict[str, Any]:
    """Runs by name: a dict as given, else the names given or the paths (run-1, ...)."""
    if isinstance(runs, Mapping):
        return dict(runs)
    items = list(runs) if isinstance(runs, list | tuple) else [runs]
    given = list(names) if names else [os.fspath(r) if isinstance(r, str | os.PathLike)
                                       else f"run-{i + 1}" for i, r in enumerate(items)]
    if len(given) != len(items):
        raise OptionError(f"{len(given)} names for {len(items)} runs")
    return dict(zip(given, items, strict=True))
