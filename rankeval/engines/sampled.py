"""A stochastic run's partial (``build/samples.py``): each user's values the mean over its
sampled rankings, their spread, and the totals the report gives of them, which add up over
partitions as the rest of a ``Partial`` does."""

from __future__ import annotations

import math

import numpy as np

from rankeval.analysis.exposure import exposure_ks
from rankeval.build.users import UserCounts
from rankeval.engines.partial import Partial, SampleTotals, item_counts
from rankeval.errors import InputError
from rankeval.io.arrow import from_numpy
from rankeval.io.load import Predictions
from rankeval.kernels.aggregate import exact_parts, mean
from rankeval.notices import merge as merge_notices
from rankeval.registry import CORPUS, REGISTRY
from rankeval.results.evaluation import Samples
from rankeval.settings import Settings


def no_corpus_metrics(settings: Settings, preds: Predictions) -> None:
    corpus = [str(s) for s in settings.specs if REGISTRY[s.name].scope == CORPUS]
    if corpus:
        raise InputError(preds.source.label, f"{', '.join(corpus)} describe one ranking per "
                         "user, and this run has several sampled rankings per user (column "
                         f"{preds.columns.get('sample', 'sample')!r}): score them without "
                         "it, or one sample at a time")


def user_counts(built, groups, sampled) -> UserCounts:
    """A stochastic run's users, each counted once however many samples it has."""
    return UserCounts(
        evaluated=len(groups.users), in_truth=sampled.in_truth,
        in_predictions=sampled.in_predictions, without_relevant=sampled.without_relevant,
        without_predictions=built.counts.without_predictions,
        only_in_predictions=sampled.only_in_predictions)


def sampled_partial(built, values, scored, tied, bounds, groups, sampled, settings: Settings, stats
                     ) -> Partial:
    """A stochastic run's partial: each user's values the mean over its samples, with their
    spread; users counted once, however many samples they have."""
    means = {spec: groups.mean(v) for spec, v in values.items()}
    spread = {spec: np.where(np.isnan(means[spec]), np.nan, 0.0)
              if REGISTRY[spec.name].over_samples else groups.sd(v)
              for spec, v in values.items()}
    counts = user_counts(built, groups, sampled)
    return Partial(
        users=sampled.user_ids.take(from_numpy(groups.users)),
        values=means,
        sums={spec: exact_parts(v[~np.isnan(v)] if spec in scored else v)
              for spec, v in means.items()},
        counts=counts,
        notices=merge_notices([built.notices]),
        rows_beyond_k=built.prediction_rows_beyond_k,
        tied_users=tied,
        tie_bounds=bounds,
        item_counts=item_counts(built.chunk, built.items, settings,
                                also=exposure_ks(settings, stats)),
        scored={spec: int(np.count_nonzero(~np.isnan(means[spec]))) for spec in scored},
        longest=int(built.chunk.pos.max(initial=0)),
        samples=groups.rankings,
        spread=spread,
        sample_totals=SampleTotals.of(groups.rankings, spread),
    )


def samples_of(partial: Partial) -> Samples | None:
    t = partial.sample_totals
    if t is None:
        return None
    return Samples(t.rankings, t.fewest if t.fewest < 2**62 else 0, t.most,
                   {str(s): mean(parts, n) if n else math.nan
                    for s, (parts, n) in t.spread.items()})


def sample_columns(partial: Partial) -> dict[str, np.ndarray]:
    """A stochastic run's per-user columns: its number of samples, each metric's sd."""
    if partial.samples is None:
        return {}
    return {"samples": partial.samples,
            **{f"{s} sd": v for s, v in partial.spread.items()}}
