"""The engine: inputs -> partial results for a partition of users (merged by ``partial.merge``).

``evaluate_partition`` runs the staged build and the kernels over the users of one partition
(every user's rows in the same partition) and returns a ``Partial``: per-user values, exact
sums, integer counts and counted notices. ``merge`` combines partials of disjoint partitions
into exactly what evaluating everything at once gives. The local engine evaluates one
partition; a distributed engine runs ``evaluate_partition`` where the data lives and merges
the partials on the driver.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from rankeval import params
from rankeval.analysis.exposure import exposure_ks
from rankeval.build.ordering import ordered_by
from rankeval.build.samples import expand
from rankeval.build.samples import groups as sample_groups
from rankeval.build.stages import build
from rankeval.build.users import UserCounts
from rankeval.engines.partial import Partial, item_counts
from rankeval.engines.sampled import no_corpus_metrics, sampled_partial
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import from_numpy
from rankeval.io.load import Predictions, Truth, release_ids
from rankeval.kernels.aggregate import exact_parts
from rankeval.kernels.distinct import count_distinct, distinct
from rankeval.kernels.fairness import GroupTotals, distributions
from rankeval.kernels.metrics import compute
from rankeval.names import MetricSpec, from_name
from rankeval.notices import Notice
from rankeval.notices import merge as merge_notices
from rankeval.registry import REGISTRY
from rankeval.settings import ROWS, Settings

if TYPE_CHECKING:
    from rankeval.build.items import ItemStats
    from rankeval.io.extras import Extras


def evaluate_partition(preds: Predictions, truth: Truth, settings: Settings, extras=None,
                       stats=None, release: bool = False) -> Partial:
    """Build and score the users of one partition (``extras``, ``stats`` and ``release``:
    see ``ranking.build``). A stochastic run's users are scored sample by sample and each
    per-user value is the mean over the user's samples (``build/samples.py``)."""
    sampled = None
    how = ordered_by(preds, settings.order_by)
    if preds.sample is not None:
        no_corpus_metrics(settings, preds)
        if settings.relstring is not None:
            raise OptionError(f"-m relstring: {preds.source.label} is a stochastic run, with "
                              "no one ranking per user whose grades it could spell")
        preds, truth, sampled = expand(preds, truth, settings)
        release = True  # the composite ids are this function's own
    keys = {k for s in settings.specs if (k := params.build_key(s, settings))}
    built = build(preds, truth, settings, extras, stats, release and not keys)
    # Metrics with a threshold or condensed lists of their own: builds of their own, of the
    # same users (a rare request, which costs a build each)
    chunks = {key: build(preds, truth, dataclasses.replace(settings, **dict(key)), extras,
                         stats, select_by=settings).chunk for key in keys}
    if release and keys:
        release_ids(preds, truth)
    groups = None
    if sampled is not None:
        groups = sample_groups(sampled, built.users)
        built = dataclasses.replace(built, chunk=groups.mark(built.chunk))
        chunks = {key: groups.mark(c) for key, c in chunks.items()}
    values = compute(built.chunk, settings.specs, settings, chunks)
    scored = {}
    for spec, v in values.items():
        finite = np.isfinite(v)
        if not REGISTRY[spec.name].every_user or params.undefined_without_relevant(
                spec, settings):  # NaN: a user this metric cannot score
            scored[spec] = int(np.count_nonzero(finite))
            finite |= np.isnan(v)
        if not finite.all():
            raise _unrepresentable(spec, v, built, truth, settings)
    tied, bounds = tie_bounds(built.chunk, settings, chunks, groups, values)
    exposure = group_exposure(built.chunk, chunks, settings, groups)
    if groups is not None:
        assert sampled is not None
        partial = sampled_partial(built, values, scored, tied, bounds, groups, sampled,
                                   settings, stats)
        return dataclasses.replace(partial, group_exposure=exposure, ordered_by=how)
    return Partial(
        users=built.users,
        values=values,
        sums={spec: exact_parts(v[~np.isnan(v)] if spec in scored else v)
              for spec, v in values.items()},
        counts=built.counts,
        notices=merge_notices([built.notices]),  # in one order, however many partitions
        rows_beyond_k=built.prediction_rows_beyond_k,
        tied_users=tied,
        tie_bounds=bounds,
        item_counts=item_counts(built.chunk, built.items, settings,
                                also=exposure_ks(settings, stats)),
        scored=scored,
        longest=int(built.chunk.pos.max(initial=0)),
        group_exposure=exposure,
        relstrings=built.relstrings,
        ordered_by=how,
    )


def group_exposure(chunk, chunks, settings: Settings, groups=None) -> dict[MetricSpec, GroupTotals]:
    """Per awrf metric, the exposure each item group gets and its target, summed over the
    users with a list (a stochastic run's users: their means over samples)."""
    out, seen = {}, set()
    for spec in settings.specs:
        if "item_groups" not in REGISTRY[spec.name].needs:
            continue
        given = params.kernel_params(spec.params, spec.name)
        same = (spec.k, params.build_key(spec, settings), tuple(sorted(given.items())))
        if same in seen:  # awrf@10 and exposure_ratio@10 read one table
            continue
        seen.add(same)
        key = params.build_key(spec, settings)
        where = chunks[key] if key else chunk
        names, ranked, target = distributions(where, given,
                                              np.inf if spec.k is None else spec.k)
        if groups is not None:
            ranked = np.column_stack([groups.mean(col) for col in ranked.T])
            target = np.column_stack([groups.mean(col) for col in np.asarray(target).T])
        out[spec] = GroupTotals.of(names, ranked, target)
    return out


def tie_bounds(chunk, settings: Settings, chunks=None, groups=None, values=None):
    """(users with ties, {spec: (pessimistic parts, optimistic parts)}): how far each mean
    can move with the order of tied items alone. ``groups``: a stochastic run's samples,
    whose values are averaged per user first. ``values``: each spec's per-user values as
    computed, given when the users without ties keep them in both orders: then only the
    users with ties are computed again, twice (a few of trec_eval's 5,000 queries with
    -m all_trec: 9.7 s -> 0.2 s)."""
    if chunk.tie_start is None:
        return 0, {}
    tied_rows = chunk.user[chunk.pos != chunk.tie_start]
    if groups is not None:
        tied_rows = groups.user_of(tied_rows)
    tied = count_distinct(tied_rows)
    if not tied:
        return 0, {}
    # the kernels take the reordered rows as given: only ties="expected" reads tie groups
    # (one rule for all, so no metric's own build is keyed by its rule)
    fixed = dataclasses.replace(settings, ties="optimistic") if settings.ties == "expected" \
        else settings
    chunks = chunks or {}
    users = None
    if groups is None and values is not None:  # every build's tied users (one run: alike)
        users = distinct(np.concatenate([c.user[c.pos != c.tie_start]
                                          for c in (chunk, *chunks.values())
                                          if c.tie_start is not None]))
    part = None if users is None else chunk.only(users)
    parts = {k: c.only(users) for k, c in chunks.items()} if part is not None else {}
    if part is None or any(c is None for c in parts.values()):
        part, parts, users = chunk, chunks, None
    low, high = (compute(part.reordered(best_first=best), settings.specs, fixed,
                         {k: c.reordered(best_first=best) for k, c in parts.items()})
                 for best in (False, True))
    if users is not None:  # the users without ties: as computed
        low, high = ({s: _put(values[s], users, v) for s, v in side.items()}
                     for side in (low, high))
    if groups is not None:
        low, high = ({s: groups.mean(v) for s, v in side.items()} for side in (low, high))
    # Per-user metrics only; users a metric cannot score (NaN) are left out, as from its mean.
    return tied, {s: (exact_parts(low[s][~np.isnan(low[s])]),
                      exact_parts(high[s][~np.isnan(high[s])])) for s in low}


def _put(values: np.ndarray, users: np.ndarray, some: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[users] = some
    return out


def _unrepresentable(spec, values, built, truth: Truth, settings: Settings) -> InputError:
    """A metric whose value overflows float64 (huge grades, exponential gain): refused, never
    reported as inf or NaN."""
    bad = np.flatnonzero(~np.isfinite(values))
    users = built.users.take(from_numpy(bad[:5])).to_pylist()
    top = float(np.max(built.chunk.max_relevance[bad]))
    return InputError(
        truth.source.label,
        f"{spec} overflows a 64-bit float for {plural(len(bad), 'user')} (relevance up to "
        f"{top:g} with {settings.gain} gain); ndcg stays exact at any size: ask for it "
        "instead, or use " + ("smaller grades" if settings.gain == "linear" else
                              "linear gain or smaller grades"),
        column=truth.columns.get("relevance"),
        examples=[(u, top) for u in users],
        unit="user",
    )


def user_notices(c: UserCounts, settings: Settings, predictions: str, truth: str) -> list[Notice]:
    """The notices of SPEC section 2, from the (merged) counts."""
    labels = {"predictions": predictions, "truth": truth}
    notices = []
    if c.without_relevant:
        notices.append(Notice("users_without_relevant", c.without_relevant,
                              {"policy": settings.zero_relevant_users, "path": truth}))
    if c.without_predictions:
        notices.append(Notice("users_without_predictions", c.without_predictions,
                              {"skip": settings.skip_missing_users}))
    if c.only_in_predictions:
        notices.append(Notice("users_only_in_predictions", c.only_in_predictions, labels))
    return notices


@dataclasses.dataclass(frozen=True)
class Grades:
    """The truth's relevance column as the judgement notices read it: its name in the input,
    its lowest and highest grade, and its rows whose grade gains otherwise than a hit does
    (positive and not 1: a linear or exponential gain weighs them, a binary one does not).
    Partitions of the truth combine by min, max and sum (``combined``)."""

    column: str
    lowest: float
    highest: float
    graded: int


def grades_of(truth: Truth) -> Grades | None:
    """The truth's ``Grades``; None without a relevance column (every row is 1) or a row."""
    column, rel = truth.columns.get("relevance"), truth.relevance
    if column is None or not len(rel):
        return None
    return Grades(column, float(rel.min()), float(rel.max()),
                  int(np.count_nonzero((rel > 0) & (rel != 1))))


def combined(parts: Iterable[Grades | None]) -> Grades | None:
    """The ``Grades`` of a truth read in parts (one column: the first part's name)."""
    found = [g for g in parts if g is not None]
    if not found:
        return None
    return Grades(found[0].column, min(g.lowest for g in found), max(g.highest for g in found),
                  sum(g.graded for g in found))


def judgement_notices(truth: Truth, settings: Settings) -> list[Notice]:
    """What the truth's grades may make of the numbers, said once, about the whole truth."""
    return judgement_notice(truth.source.label, len(truth.relevance), grades_of(truth),
                            settings)


def judgement_notice(label: str, rows: int, grades: Grades | None, settings: Settings
                     ) -> list[Notice]:
    """``judgement_notices`` from the truth's row count and ``Grades`` (which partitions of
    the truth combine): graded judgements that are all relevant look like raw ratings (1-5
    stars), every rated item a hit; gains taken from a graded column by default (no gain
    chosen, no preset choosing one) are said, with the way to count hits instead."""
    if grades is None or not rows:
        return []
    return [*_all_relevant(label, rows, grades, settings), *graded_gains(label, grades, settings)]


def _all_relevant(label: str, rows: int, grades: Grades, settings: Settings) -> list[Notice]:
    t = settings.relevance_threshold
    relevant = grades.lowest > 0 if t is None else grades.lowest >= t
    # a threshold of 0 asks for every judged item to be relevant: nothing to warn of
    if not relevant or grades.highest == grades.lowest or (t is not None and t <= 0):
        return []
    return [Notice("all_judged_relevant", rows, {"path": label})]


# The settings that decide a gain: chosen (by the caller or a preset), the gains are no
# default's doing
GAIN_ROWS = ("gain", "gains")


def graded_gains(label: str, grades: Grades, settings: Settings) -> list[Notice]:
    """The ``graded_gains`` notice: the metrics the gain row changes weigh hits by the
    column's grades while no gain was chosen (nor a metric's own ``dcg=`` / ``gains=``)."""
    if not grades.graded or set(GAIN_ROWS) & set(settings.chosen):
        return []
    changed = ROWS["gain"].changed
    names = [s.name for s in settings.specs if s.name in changed
             and not set(GAIN_ROWS) & set(params.settings_of(s.params, s.name))]
    if not names:
        return []
    return [Notice("graded_gains", grades.graded, {
        "path": label, "column": grades.column, "lowest": grades.lowest,
        "highest": grades.highest, "metrics": ", ".join(dict.fromkeys(names))})]


def unevaluable(c: UserCounts, settings: Settings, truth: str, predictions: str = "predictions"
                ) -> InputError | None:
    """The error when no user can be evaluated, or when the two files share no user (every
    number would be 0), naming why; None when the files can be scored."""
    if c.in_predictions and c.in_predictions == c.only_in_predictions:
        return InputError(
            predictions, f"shares no user id with {truth}: check the user columns (ids are "
            "compared as text, so '7' and '007' differ)")
    if c.evaluated:
        return None
    why = [f"{plural(c.in_truth, 'user')} in the truth"]
    if c.without_relevant:
        why.append(f"{c.without_relevant:,} without a relevant item")
    if c.without_predictions and settings.skip_missing_users:
        why.append(f"{c.without_predictions:,} without predictions ({{opt:skip_missing_users}})")
    return InputError(truth, "no user can be evaluated: " + ", ".join(why))


def with_user_notices(partial: Partial, settings: Settings, predictions: str, truth: str
                      ) -> Partial:
    """The partial with the user-level notices appended (once, after merging)."""
    extra = user_notices(partial.counts, settings, predictions, truth)
    return dataclasses.replace(partial, notices=[*partial.notices, *extra])


def scoring_notices(scored: dict[MetricSpec, int], evaluated: int) -> list[Notice]:
    """Metrics that left users without a value (SPEC section 9): counted, or undefined when
    no user has one."""
    out = []
    for spec, n in scored.items():  # a metric's own rule, or a threshold of its own (rel=)
        rule = REGISTRY[spec.name].undefined_when or "no relevant item at its own threshold"
        params = {"metric": str(spec), "rule": rule}
        if not n:
            out.append(Notice("undefined", evaluated, params))
        elif n < evaluated:
            out.append(Notice("not_scored", evaluated - n, params | {"scored": n}))
    return out


def depth_notices(longest: int, specs) -> list[Notice]:
    """Cut-offs past every list (10-item lists asked at K = 20): precision still divides by
    K, and nothing else sees more items than at the longest list's length."""
    ks = sorted({s.k for s in specs if s.k is not None and s.k > longest})
    return [Notice("k_past_lists", longest, {"ks": ks})] if ks and longest else []


def corpus_notices(values: dict[str, float]) -> list[Notice]:
    """Corpus metrics whose one value is undefined (personalization of a single list)."""
    return [Notice("undefined", 0, {"metric": name, "corpus": True,
                                    "rule": REGISTRY[from_name(name).name].undefined_when})
            for name, value in values.items() if math.isnan(value)]


def item_notices(partial: Partial, settings: Settings, extras: Extras, stats: ItemStats | None):
    """The catalog fallback, predicted items outside --catalog, items unseen in training."""
    if stats is None:
        return []
    names = {s.name for s in settings.specs}
    notices = []
    if stats.fallback and names & {"coverage", "norm_entropy", "gini", "long_tail"}:
        notices.append(Notice("catalog_fallback", stats.catalog_size))
    if stats.outside and extras.catalog is not None:  # only a --catalog has an outside
        notices.append(Notice("outside_catalog", stats.outside,
                              {"path": extras.catalog.source.label}))
    features = extras.item_features
    if features is not None and features.spaced:
        notices.append(Notice("one_tag_with_spaces", features.spaced,
                              {"path": features.source.label}))
    if "novelty" in names and partial.item_counts:
        widest = partial.item_counts[max(partial.item_counts, key=lambda k: k or 2**62)]
        pop, _ = stats.at(widest.ids)
        unseen = int(np.count_nonzero(pop == 0))
        if unseen:
            notices.append(Notice("unseen_items", unseen))
    return notices
