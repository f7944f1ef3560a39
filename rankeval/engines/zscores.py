"""Per-user values as z-scores (``zscores``; trec_eval's ``-Z FILE``): each user's value of a
metric against that user's mean and standard deviation of it in the file (``io.zscores``),
looked up by the name the report prints (trec_eval's, ``P_5``, under its presets; rankeval's,
``precision@5``, otherwise); the overall value is then the metric's own aggregate of the
z-scores (their mean; the sum for trec_eval's counts, the exp of the mean for gm_map).

A z-score the file cannot give (no line for the pair, or a standard deviation of 0 with the
value off the mean) is undefined: left out of the mean and counted in a warning. trec_eval
prints -1000000 for it instead and sums that into its mean: ``-f trec`` under its presets does
the same, from ``ZScored.trec``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.compat import jg_name, measure_name
from rankeval.engines.partial import Partial
from rankeval.errors import OptionError
from rankeval.io.arrow import to_numpy
from rankeval.io.zscores import ZScored, ZTable, zscore
from rankeval.kernels.aggregate import exact_parts, overall
from rankeval.names import MetricSpec
from rankeval.notices import Notice
from rankeval.presets import preset_of
from rankeval.registry import CORPUS, REGISTRY
from rankeval.settings import Settings


def check_specs(settings: Settings) -> None:
    """An OptionError for a metric of the run as a whole: it has no value per user to
    z-score."""
    whole = [str(s) for s in settings.specs if REGISTRY[s.name].scope == CORPUS]
    if whole:
        raise OptionError(f"{whole[0]}: a z-score rescales each user's value with that "
                          "user's mean and standard deviation; this metric has one value for "
                          "the run (drop it or {opt:zscores})", "zscores")


def report_name(spec: MetricSpec, settings: Settings) -> str:
    """The name a metric's lines carry, which the file's second field gives: trec_eval's
    under its presets (``P_5``, ``map_avgjg`` with judgment groups), else rankeval's."""
    preset = preset_of(settings.compat)
    if preset is None or not preset.trec_output:
        return str(spec)
    name = measure_name(spec)
    return jg_name(name) if settings.judgment_groups else name


def zscored(partial: Partial, table: ZTable, settings: Settings, listed: pa.Array) -> Partial:
    """``partial`` with its per-user values as z-scores. ``listed``: the users with a list in
    the run (under a preset whose tool never evaluates the others, ``Preset.evaluates_missing``
    false, trec_eval 9.0.8, their values are added to its summary as they are)."""
    if partial.samples is not None:  # the spread over samples is in the metrics' units
        raise OptionError("{opt:zscores} reads one ranking per user; this run holds several "
                          "sampled rankings per user (a stochastic run)", "zscores")
    n = partial.counts.evaluated
    users = partial.users
    preset = preset_of(settings.compat)
    raw = np.zeros(len(users), dtype=bool)
    if preset is not None and not preset.evaluates_missing:
        raw = ~to_numpy(pc.is_in(pc.cast(users, pa.string()),
                                  value_set=pc.cast(listed, pa.string())))
    values, sums, scored = dict(partial.values), dict(partial.sums), dict(partial.scored)
    shown: dict[str, np.ndarray] = {}
    trec: dict[str, float] = {}
    undefined = 0
    for spec, v in partial.values.items():
        if not REGISTRY[spec.name].measured:  # num_q: a count of users
            trec[str(spec)] = overall(spec, sums[spec], scored.get(spec, n))
            continue
        mean, sd, found = table.lookup(users, report_name(spec, settings))
        z, shown[str(spec)] = zscore(v, mean, sd, found)
        defined = ~np.isnan(z)
        values[spec], sums[spec] = z, exact_parts(z[defined])
        if spec in scored or not defined.all():
            scored[spec] = int(defined.sum())
        undefined += int((~defined & ~np.isnan(v)).sum())
        trec[str(spec)] = _trec_summary(spec, np.where(raw, v, shown[str(spec)]), n)
    said = [Notice("zscores_undefined", undefined, {"path": table.path})] if undefined else []
    return dataclasses.replace(
        partial, values=values, sums=sums, scored=scored,
        notices=[*partial.notices, *said],
        # the means under the worst and best order of ties are of the raw values: the
        # report's tie sensitivity is left out (the notices about ties stay)
        tied_users=0, tie_bounds={},
        zscores=ZScored(table.path, shown, trec))


def _trec_summary(spec: MetricSpec, shown: np.ndarray, n: int) -> float:
    """trec_eval's summary of its per-query numbers: summed one by one in its (byte) order,
    the sum's NaN, if any, signed as the first NaN summed (as C's additions keep it)."""
    if not len(shown):
        return overall(spec, (), n)
    value = overall(spec, (float(np.cumsum(shown)[-1]),), n)
    nan = np.flatnonzero(np.isnan(shown))
    return float(np.copysign(np.nan, shown[nan[0]])) if len(nan) else value
