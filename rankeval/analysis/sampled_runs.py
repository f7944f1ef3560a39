"""``rankeval sampled``'s inputs (``rankeval.sampled``; ``api/sampled.py`` reads them): the
sampled rank of every held-out item, read from a rank column (one row per held-out item), or
computed from the scores of each user's held-out items and sampled negatives with the truth
naming the held-out ones (the file a "1 positive + 100 negatives" evaluation writes).

From scores, a held-out item's sampled rank is 1 + the negatives of its user scored above
it; other held-out items of the same user are not its negatives. A negative tied with the
item ranks above it (``pessimistic``), below it (``optimistic``), or either way with equal
chance (``expected``, the default: the value is the mean over the tie's ranks)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rankeval.analysis.sampled import METRICS
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.load import Predictions, Truth

TIES = ("expected", "optimistic", "pessimistic")
_ALIASES = {"recall": "hit_rate", "hr": "hit_rate", "ap": "mrr", "map": "mrr"}


def among_negatives(preds: Predictions, truth: Truth, ties: str
                    ) -> tuple[np.ndarray, np.ndarray, int, int, np.ndarray]:
    """(lowest and highest sampled rank of each held-out item, the number of negatives per
    item, the users of the run without a held-out item, the held-out items' rows of the
    run)."""
    label = preds.source.label
    if preds.rank is None and preds.score is None:
        raise InputError(label, "no score or rank column: the held-out items and their "
                         "negatives need a score (or a rank) to be ranked by")
    (p_user, t_user), users = factorize(preds.user, truth.user)
    (p_item, t_item), items = factorize(preds.item, truth.item)
    n_items = max(len(items), 1)
    keys = pair_keys(p_user, p_item, n_items)
    repeat = duplicates(keys)
    if len(repeat):
        raise InputError(label, "(user, item) rows given more than once", count=len(repeat),
                         examples=[(int(r) + 1, f"{users[int(p_user[r])].as_py()} / "
                                    f"{items[int(p_item[r])].as_py()}") for r in repeat[:5]])
    rel = truth.relevance > 0
    held = np.unique(pair_keys(t_user[rel], t_item[rel], n_items))
    at = np.minimum(np.searchsorted(held, keys), max(len(held) - 1, 0))
    positive = (held[at] == keys) if len(held) else np.zeros(len(keys), dtype=bool)
    unscored = np.setdiff1d(held, keys[positive], assume_unique=True)
    if len(unscored):
        shown = ", ".join(f"{users[int(x // n_items)].as_py()} / "
                          f"{items[int(x % n_items)].as_py()}" for x in unscored[:5])
        raise InputError(truth.source.label, f"{len(unscored):,} held-out items have no row "
                         f"in {label}, e.g. {shown}: a held-out item needs a score to be "
                         "ranked among its negatives")
    # lower is better: ranks as they are, scores negated
    key = (preds.rank.astype(np.float64) if preds.rank is not None
           else -np.asarray(preds.score, dtype=np.float64))
    user = p_user.astype(np.int64)
    better = _negatives_before(user, key, positive, tied_first=False)
    tied_too = _negatives_before(user, key, positive, tied_first=True)
    low, high = {"optimistic": (better, better), "pessimistic": (tied_too, tied_too),
                 "expected": (better, tied_too)}[ties]
    per_user = np.bincount(user[~positive], minlength=len(users))
    with_items = np.unique(user[positive])
    counts = per_user[with_items]
    if len(counts) and counts.min() != counts.max():
        values, n = np.unique(counts, return_counts=True)
        shown = ", ".join(f"{v:,} for {plural(c, 'user')}" for v, c in zip(values[:4], n[:4],
                                                                     strict=True))
        raise InputError(label, f"users have different numbers of sampled negatives ({shown}):"
                         " the correction needs one number per held-out item")
    left = len(np.unique(user)) - len(with_items)
    return (low + 1, high + 1, int(counts[0]) if len(counts) else 0, left,
            np.flatnonzero(positive))


def _negatives_before(user: np.ndarray, key: np.ndarray, positive: np.ndarray,
                      tied_first: bool) -> np.ndarray:
    """For each positive row (in row order), the negatives of its user with a lower key
    (``tied_first``: or an equal one)."""
    # equal keys: negatives before positives when ties count, after them when they do not
    tie = np.where(positive, 1 if tied_first else 0, 0 if tied_first else 1)
    order = np.lexsort((tie, key, user))
    neg = (~positive[order]).astype(np.int64)
    before = np.cumsum(neg) - neg  # negatives earlier in the whole order
    u = user[order]
    start = np.flatnonzero(np.concatenate([[True], u[1:] != u[:-1]]))
    block = np.repeat(before[start], np.diff(np.concatenate([start, [len(u)]])))
    out = np.empty(len(user), dtype=np.int64)
    out[order] = before - block
    return out[positive]


def parse_metrics(metrics: str | Iterable[str], k: int | str | Iterable[int]
                  ) -> list[tuple[str, int | None]]:
    """(metric, K) pairs: auc has no cut-off; the others at every K."""
    if isinstance(k, str):
        try:
            cutoffs = [int(x) for x in k.split(",")]
        except ValueError:
            cutoffs = []
    else:
        cutoffs = [int(k)] if isinstance(k, int) else [int(x) for x in k]
    if not cutoffs or min(cutoffs) < 1:
        raise OptionError(f"{{opt:k}} takes whole numbers from 1, comma-separated, got {k!r}")
    words = metrics.split(",") if isinstance(metrics, str) else list(metrics)
    out: list[tuple[str, int | None]] = []
    for word in words:
        name = _ALIASES.get(word.strip().lower(), word.strip().lower())
        if name not in METRICS:
            raise OptionError(f"{{opt:metrics}}: unknown metric {word!r} (known: "
                              f"{', '.join(METRICS)})")
        out += [(name, None)] if name == "auc" else [(name, c) for c in cutoffs]
    return out
