"""From a merged partial to an ``Evaluation`` (``evaluation_of``): the user notices, the
check that someone was evaluated, corpus metrics, input summaries and popularity exposure, for
every engine; and ``evaluate_inputs``, the local engine's whole run over loaded inputs."""

from __future__ import annotations

import dataclasses
import math

import pyarrow.compute as pc

from rankeval.analysis.exposure import exposure, exposure_ks
from rankeval.build.items import ItemStats, item_stats
from rankeval.engines.groups import per_user
from rankeval.engines.partial import Partial
from rankeval.engines.partition import (
    corpus_notices,
    depth_notices,
    evaluate_partition,
    item_notices,
    judgement_notices,
    scoring_notices,
    unevaluable,
    with_user_notices,
)
from rankeval.engines.sampled import sample_columns, samples_of
from rankeval.engines.zscores import check_specs, zscored
from rankeval.io.arrow import from_numpy
from rankeval.io.cast import numeric_order
from rankeval.io.extras import Extras
from rankeval.io.judgment_groups import Groups
from rankeval.io.load import Predictions, Train, Truth
from rankeval.io.zscores import ZTable, read_zscores
from rankeval.kernels.aggregate import overall
from rankeval.kernels.corpus import CORPUS_KERNELS, Lists
from rankeval.names import MetricSpec
from rankeval.notices import RUN, Notice
from rankeval.presets import preset_of
from rankeval.registry import CORPUS, REGISTRY
from rankeval.results.evaluation import Evaluation, InputSummary
from rankeval.results.store import LocalValues
from rankeval.settings import Settings


def evaluate_inputs(preds: Predictions, truth: Truth, settings: Settings,
                    extras: Extras | None = None, release: bool = False,
                    groups: Groups | None = None) -> Evaluation:
    """Evaluate loaded and checked inputs with the local engine (one partition).
    ``release``: the caller is done with both inputs' ids (``load.release_ids``);
    ``groups``: the users are (user, judgment group) pairs, averaged per user
    (``io.judgment_groups``)."""
    table = listed = None
    if settings.zscores is not None:  # its errors before the scoring
        check_specs(settings)
        table = read_zscores(settings.zscores)
        # the users with a list, read before the ids are released
        listed = pc.unique(preds.user if groups is None else groups.run_user)
    extras = extras or Extras()
    stats = item_stats(extras, preds, settings)
    partial = evaluate_partition(preds, truth, settings, extras, stats, release)
    if groups is not None:
        partial = per_user(partial, groups, settings)
    return finish(partial, settings, preds, truth, extras, stats, zscores=table, listed=listed)


def finish(partial: Partial, settings: Settings, preds: Predictions, truth: Truth,
           extras: Extras | None = None, stats: ItemStats | None = None,
           judgements: list[Notice] | None = None,
           extra_inputs: dict[str, InputSummary] | None = None,
           zscores: ZTable | None = None, listed=None) -> Evaluation:
    """Merged partial -> Evaluation: user notices, the no-user check, corpus metrics, input
    summaries. Of ``preds`` and ``truth`` only ``source`` is read when ``judgements`` (the
    notices about the truth's grades) are given. ``zscores``: the values become z-scores
    against it (``engines.zscores``; ``listed``, the users with a list in the run), after
    the notices about the values themselves."""
    error = unevaluable(partial.counts, settings, truth.source.label, preds.source.label)
    if error is not None:
        raise error
    partial = with_user_notices(partial, settings, preds.source.label, truth.source.label)
    partial = dataclasses.replace(partial, notices=[
        *partial.notices,
        *(judgement_notices(truth, settings) if judgements is None else judgements),
        *item_notices(partial, settings, extras or Extras(), stats),
        *scoring_notices(partial.scored, partial.counts.evaluated),
        *depth_notices(partial.longest, settings.specs),
        *(Notice("extra_fields", side.source.extra_fields,
                 {"path": side.source.label, "subject": subject})
          for side, subject in ((preds, RUN), (truth, "truth")) if side.source.extra_fields)])
    if zscores is not None:
        partial = zscored(partial, zscores, settings, listed)
    c = partial.counts
    inputs = {
        "predictions": InputSummary(preds.source.path, preds.source.format, preds.source.rows,
                                    c.in_predictions, preds.source.tag,
                                    partial.ordered_by or None),
        "truth": InputSummary(truth.source.path, truth.source.format, truth.source.rows,
                              c.in_truth),
    }
    for role, data in (("train", (extras or Extras()).train),
                       ("catalog", (extras or Extras()).catalog),
                       ("exclude", (extras or Extras()).exclude)):
        if extra_inputs is not None:  # summarized where the data is
            inputs.update({role: extra_inputs[role]} if role in extra_inputs else {})
        elif data is not None:
            users = len(pc.unique(data.user)) if isinstance(data, Train) else 0
            inputs[role] = InputSummary(data.source.path, data.source.format, data.source.rows,
                                        users)
    corpus = {str(spec): corpus_value(spec, partial, stats, settings) for spec in settings.specs
              if REGISTRY[spec.name].scope == CORPUS}
    if any(math.isnan(v) for v in corpus.values()):
        partial = dataclasses.replace(partial, notices=[*partial.notices,
                                                        *corpus_notices(corpus)])
    ev = evaluation_of(partial, settings, inputs, corpus)
    ks = exposure_ks(settings, stats)
    if ks:
        ev = dataclasses.replace(ev, exposure=exposure(partial.item_counts[ks[0]], stats, ks[0]))
    return ev


def evaluation_of(partial: Partial, settings: Settings, inputs: dict[str, InputSummary],
                  corpus: dict[str, float] | None = None) -> Evaluation:
    """A merged partial as an ``Evaluation``: the means, the per-user values in a local store,
    users in display order: by number when every id is an integer written plainly (1, 2, 10
    rather than 1, 10, 2), else as byte strings (and always so under a preset whose tool
    orders them so: ``Preset.user_order``)."""
    n = partial.counts.evaluated  # also when the per-user values live elsewhere (Spark)
    preset = preset_of(settings.compat)
    by_number = preset is None or preset.user_order == "number"
    order = numeric_order(partial.users) if by_number else None
    if order is not None:
        partial = dataclasses.replace(
            partial, users=partial.users.take(from_numpy(order)),
            values={s: v[order] for s, v in partial.values.items()},
            relstrings=None if partial.relstrings is None else partial.relstrings.take(
                from_numpy(order)),
            zscores=None if partial.zscores is None else partial.zscores.taken(order))
    return Evaluation(
        settings=settings,
        metrics={str(s): overall(s, partial.sums[s], partial.scored.get(s, n))
                 if s in partial.sums else (corpus or {})[str(s)] for s in settings.specs},
        users=partial.counts,
        inputs=inputs,
        notices=list(partial.notices),
        prediction_rows_beyond_k=partial.rows_beyond_k,
        store=LocalValues(partial.values, partial.users, sample_columns(partial)),
        tied_users=partial.tied_users,
        tie_range={str(s): (overall(s, low, partial.scored.get(s, n)),
                            overall(s, high, partial.scored.get(s, n)))
                   for s, (low, high) in partial.tie_bounds.items()},
        samples=samples_of(partial),
        group_exposure={str(s): t for s, t in partial.group_exposure.items()},
        relstrings=partial.relstrings,
        zscores=partial.zscores,
    )


def corpus_value(spec: MetricSpec, partial: Partial, stats: ItemStats | None,
                 settings: Settings) -> float:
    counts = partial.item_counts[spec.k]
    lists = Lists(counts=counts.counts, users=counts.users,
                  k=spec.k if spec.k is not None else counts.longest,
                  catalog_size=stats.catalog_size if stats is not None else 0,
                  entropy_unit=settings.entropy_unit,
                  entropy_per_item=settings.entropy_per_item)
    return CORPUS_KERNELS[spec.name](lists)
