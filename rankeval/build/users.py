"""The users of one build: both inputs' ids as codes over shared dictionaries (``encode``),
and which users are evaluated, with the count of every other case (``select``, SPEC section
2). The first two stages of ``build.stages.build``; vectorized, no loop over users."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankeval.errors import InputError
from rankeval.io.encode import Ids, factorize_ids, factorize_list
from rankeval.io.load import Predictions, Truth, release_ids
from rankeval.kernels.distinct import present
from rankeval.kernels.threads import each
from rankeval.settings import Settings


@dataclass(frozen=True)
class UserCounts:
    """How many users fall in each case of SPEC section 2 (integers: they add up across
    partitions of users)."""

    evaluated: int
    in_truth: int
    in_predictions: int
    without_relevant: int  # truth users with no relevant item
    without_predictions: int  # users that could be evaluated but have no predictions
    only_in_predictions: int  # prediction users absent from the truth

    def __add__(self, other: UserCounts) -> UserCounts:
        return UserCounts(*(a + b for a, b in zip(self.astuple(), other.astuple(), strict=True)))

    def astuple(self) -> tuple[int, ...]:
        return (self.evaluated, self.in_truth, self.in_predictions, self.without_relevant,
                self.without_predictions, self.only_in_predictions)



@dataclass(frozen=True)
class Codes:
    """Both inputs' ids as codes over shared dictionaries (byte order)."""

    t_user: np.ndarray
    t_item: np.ndarray
    p_user: np.ndarray
    p_item: np.ndarray
    user_ids: pa.Array
    items: Ids  # numbered item ids stay numbers until their text is asked for

    @property
    def item_ids(self) -> pa.Array:
        return self.items.text

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_items(self) -> int:
        return max(len(self.items), 1)



@dataclass(frozen=True)
class Selection:
    """Which users are evaluated; evaluated users get compact codes 0..n-1 in id order."""

    counts: UserCounts
    evaluated: np.ndarray  # bool per user code
    compact: np.ndarray  # user code -> compact code, -1 when not evaluated
    n_relevant: np.ndarray  # relevant truth items per user code


def encode(preds: Predictions, truth: Truth, release: bool = False) -> Codes:
    """Users and items as codes, encoded at once on the two cores (Arrow releases the GIL).
    ``release``: nothing reads the inputs' ids again (``load.release_ids``), so numbered
    ids are let go as soon as they are numbers, before the codes' own peak."""
    user_cols, item_cols = [truth.user, preds.user], [truth.item, preds.item]
    if release:
        release_ids(preds, truth)
    with ThreadPoolExecutor(2) as pool:
        users_job = pool.submit(factorize_list, user_cols)
        (t_item, p_item), items = factorize_ids(item_cols)
        (t_user, p_user), user_ids = users_job.result()
    codes = Codes(t_user, t_item, p_user, p_item, user_ids, items)
    if codes.n_users * codes.n_items >= 2**63:
        raise InputError(preds.source.label, "too many distinct users x items to index")
    return codes


def select(codes: Codes, truth: Truth, settings: Settings, select_by=None) -> Selection:
    """SPEC section 2: evaluated users, and the count of every other case. ``select_by``:
    other settings that choose the users (a metric's own threshold, ``params``), R being
    counted at ``settings``' threshold."""
    def relevant_per_user(t: float | None) -> np.ndarray:
        relevant = truth.relevance > 0 if t is None else truth.relevance >= t
        return np.bincount(codes.t_user[relevant], minlength=codes.n_users)

    in_truth, own, in_preds = each(lambda work: work(), [
        lambda: present(codes.t_user, codes.n_users),
        lambda: relevant_per_user(settings.relevance_threshold),
        lambda: present(codes.p_user, codes.n_users)])
    by = settings if select_by is None else select_by
    n_relevant = own if by.relevance_threshold == settings.relevance_threshold else (
        relevant_per_user(by.relevance_threshold))
    eligible = in_truth & ((n_relevant > 0) | (settings.zero_relevant_users == "zero"))
    missing = eligible & ~in_preds
    evaluated = eligible & ~missing if settings.skip_missing_users else eligible
    counts = UserCounts(
        evaluated=int(evaluated.sum()),
        in_truth=int(in_truth.sum()),
        in_predictions=int(in_preds.sum()),
        without_relevant=int((in_truth & (n_relevant == 0)).sum()),
        without_predictions=int(missing.sum()),
        only_in_predictions=int((in_preds & ~in_truth).sum()),
    )
    compact = np.full(codes.n_users, -1, dtype=np.int32)  # monotonic: sorted stays sorted
    compact[evaluated] = np.arange(counts.evaluated, dtype=np.int32)
    return Selection(counts, evaluated, compact, own)
