"""Judgment groups averaged per user (``judgment_groups``; trec_eval's -R qrels_jg): a
partial over (user, group) pairs (``io.judgment_groups``) as one over users, each user's
value the mean of its evaluated pairs' values (summed in group order, then divided, as
trec_eval does), the counts the users' own."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.checks import report_duplicates, report_repeated_ranks
from rankeval.build.users import UserCounts
from rankeval.engines.partial import Partial
from rankeval.errors import OptionError
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.judgment_groups import Groups
from rankeval.io.load import Predictions, Truth
from rankeval.notices import Notice
from rankeval.presets import preset_of
from rankeval.settings import Settings


def per_user(partial: Partial, groups: Groups, settings: Settings) -> Partial:
    """``partial`` (over pairs) over the users of ``groups``."""
    pairs = to_numpy(pc.cast(partial.users, pa.int64()))
    order = np.argsort(pairs, kind="stable")  # group order within a user
    users = groups.user.take(from_numpy(pairs[order]))
    coded = users.dictionary_encode()
    names = coded.dictionary
    by_bytes = to_numpy(pc.sort_indices(names))  # users sorted as byte strings
    place = np.empty(len(names), dtype=np.int64)
    place[by_bytes] = np.arange(len(names))
    code = place[to_numpy(coded.indices)]
    m = len(names)
    size = np.bincount(code, minlength=m)
    values = {s: np.bincount(code, weights=v[order], minlength=m) / size
              for s, v in partial.values.items()}
    scored = {s: int((~np.isnan(values[s])).sum()) for s in partial.scored}
    # the mean over users: their values summed one by one in byte order, then divided, as
    # trec_eval sums its queries (exact parts would round some means the other way: 0.10875)
    sums = {s: _summed(v[~np.isnan(v)] if s in scored else v) for s, v in values.items()}
    # what the build said of the lists counts pairs: said so once, beside it
    said = [Notice("judgment_group_pairs", len(pairs), {"users": m})] if partial.notices else []
    return dataclasses.replace(
        partial, users=names.take(from_numpy(by_bytes)), values=values, sums=sums,
        notices=[*partial.notices, *said],
        scored=scored, counts=_counts(groups, settings, m),
        # the bounds of tied orders add up over pairs, not over users' means
        tied_users=0, tie_bounds={})


def _counts(groups: Groups, settings: Settings, evaluated: int) -> UserCounts:
    """SPEC section 2's counts over the users (not the pairs): a user is relevant somewhere
    when any group judged an item relevant."""
    t = settings.relevance_threshold
    relevant = groups.relevance > 0 if t is None else groups.relevance >= t
    in_truth = pc.unique(groups.truth_user)
    with_relevant = pc.unique(groups.truth_user.filter(from_numpy(relevant)))
    in_preds = pc.unique(groups.run_user)
    listed = pc.is_in(in_truth, value_set=in_preds)
    has_relevant = pc.is_in(in_truth, value_set=with_relevant)
    eligible = to_numpy(has_relevant) | (settings.zero_relevant_users == "zero")
    missing = eligible & ~to_numpy(listed)
    return UserCounts(
        evaluated=evaluated, in_truth=len(in_truth), in_predictions=len(in_preds),
        without_relevant=int((~to_numpy(has_relevant)).sum()),
        without_predictions=int(missing.sum()),
        only_in_predictions=int((~to_numpy(pc.is_in(in_preds, value_set=in_truth))).sum()))


def _summed(values: np.ndarray) -> tuple[float, ...]:
    """The sum of ``values`` added in their order, as the one part of a sum."""
    return (float(np.cumsum(values)[-1]),) if len(values) else ()


def check_repeats(preds: Predictions, truth: Truth, group: pa.ChunkedArray,
                  settings: Settings) -> None:
    """Repeats named by the files' own rows and ids, before the pairs multiply the run's rows:
    a rank given twice in a judged user's list, an item listed twice in a list (unless
    ``dedupe``, which drops it from every pair; under trec_eval's presets, in the judged
    users' lists alone), and one judged twice by one group."""
    (p_user, t_user), _ = factorize(preds.user, truth.user)
    (p_item, t_item), items = factorize(preds.item, truth.item)
    n_items = max(len(items), 1)
    judged = np.flatnonzero(np.isin(p_user, t_user))
    if preds.rank is not None:  # a rank given twice in a judged list: its order is not told
        order = judged[np.lexsort((preds.rank[judged], p_user[judged]))]
        report_repeated_ranks(preds, order, p_user[order])
    # repeated items where the preset looks for them (``Preset.duplicates``): in every list,
    # or in the judged ones (trec_eval's)
    preset = preset_of(settings.compat)
    listed = (np.arange(len(p_user)) if preset is None or preset.duplicates == "all"
              else judged)
    if not settings.dedupe:
        repeated = duplicates(pair_keys(p_user[listed], p_item[listed], n_items))
        if len(repeated):
            report_duplicates(preds, listed[repeated], "{opt:dedupe} keeps the best-ranked one")
    (t_group,), _ = factorize(group)
    user_group = t_user.astype(np.int64) * (int(t_group.max(initial=0)) + 1) + t_group
    repeated = duplicates(pair_keys(user_group, t_item, n_items))
    if len(repeated):
        report_duplicates(truth, repeated, "each judgment group judges an item once")


# The extra inputs that name users: they would meet (user, group) pairs, matching none
USER_INPUTS = ("train", "exclude", "propensity")


def check_extras(extras) -> None:
    """An OptionError for an extra input given per user (``USER_INPUTS``)."""
    given = [name for name in USER_INPUTS if extras.get(name) is not None]
    if given:
        raise OptionError(f"{{opt:{given[0]}}} names users, which {{opt:judgment_groups}} "
                          "scores as (user, group) pairs: the two are not read together yet",
                          "judgment_groups")
