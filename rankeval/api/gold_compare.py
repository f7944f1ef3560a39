"""``compare --gold`` (#48 item 2, SPEC §12): each run's difference from each baseline
estimated by PPI++ from the per-query differences (``compared``), and compare's gates judged
on those estimates (``gold_margin``, ``gold_worse``); the gold sample's reading and the
estimator's pieces are ``api.gold``'s."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.analysis.equivalence import Margin, Verdict
from rankeval.analysis.gates import lower_better
from rankeval.analysis.ppi import judge_ppi, ppi_mean
from rankeval.analysis.significance import correct
from rankeval.api.gold import GoldRequest, Queries, ppi_of, strata_of
from rankeval.engines.finish import evaluate_inputs
from rankeval.io.arrow import to_numpy
from rankeval.names import from_name
from rankeval.notices import Notice
from rankeval.registry import CORPUS, MEAN, REGISTRY
from rankeval.results.gold import FEW, GoldComparison, GoldDifference, GoldWorseVerdict


def compared(result, loaded: Mapping[str, Any], gold_truth, settings, extras,
             inputs: tuple[Queries, Queries], request: GoldRequest):
    """``compare --gold``: ``result`` (a ``CompareResult`` on the machine-judged truth) with
    each run's difference from each baseline estimated by PPI++ from per-query differences
    (SPEC §12): each run (``loaded``: name -> its loaded predictions) evaluated again under
    the gold judgments, the differences paired by query over the users compared; the PPI
    p-values corrected over each metric's tests as the machine-only ones are."""
    every, sample = inputs
    o = result.options
    ids = pa.array(result.shared_users).cast(pa.string())
    in_sample = pc.is_in(ids, value_set=sample.ids).to_numpy(zero_copy_only=False)
    human = {}
    for name, preds in loaded.items():
        ev = evaluate_inputs(preds, gold_truth, settings, extras)
        where = pc.index_in(ids, value_set=ev.user_id_array.cast(pa.string()))
        found = pc.is_valid(where).to_numpy(zero_copy_only=False)
        rows = to_numpy(where.fill_null(0))
        human[name] = {m: np.where(found & in_sample, ev.values(m)[rows], np.nan)
                       for m in result.values[name]}
    strata = strata_of(every, ids)
    differences, notices, skipped = [], [], {}
    for metric in result.metrics:
        row = REGISTRY[from_name(metric).name]
        if row.scope == CORPUS or row.overall != MEAN:
            skipped[metric] = ("one value per run, no per-query values" if row.scope == CORPUS
                               else "not a mean over queries")
            continue
        found_cells = []
        for base in result.baselines:
            for name in result.candidates:
                a = result.values[name][metric] - result.values[base][metric]
                h = human[name][metric] - human[base][metric]
                gold, _, est = ppi_of(h, a, in_sample, strata, request, sample.label)
                left = len(sample.ids) - int(gold.sum())
                if left:
                    notices.append(Notice("gold_left_out", left, {
                        "path": sample.label, "metric": f"{metric} ({name} - {base})"}))
                found_cells.append((name, base, est, left))
        adjusted = correct([e.ppi.p_value() for _, _, e, _ in found_cells], o["correction"])
        for (name, base, est, left), p in zip(found_cells, adjusted, strict=True):
            cell = result.cell(name, metric, base)
            differences.append(GoldDifference(
                name, base, metric, est, est.ppi.p_value(), p,
                bool(p < o["alpha"]) if math.isfinite(p) else None,
                cell.stats.delta if cell is not None else math.nan,
                cell.significant if cell is not None else None, left))
    if len(sample.ids) < FEW:
        notices.insert(0, Notice("few_gold", len(sample.ids), {"path": sample.label}))
    result.gold = GoldComparison(sample.label, request.level, request.lam, len(every.ids),
                                 len(sample.ids), o["alpha"], o["correction"], differences,
                                 request.strata, skipped, paired=(human, in_sample, strata))
    result.notices += notices
    return result


def gold_margin(result, margin: Margin, run: str, base: str) -> Verdict | None:
    """``compare --gold --non-inferior/--equivalent``: the margin of ``run`` against ``base``
    judged on the PPI++ estimate of their per-query differences (SPEC §12), as ``score
    --gold`` judges its baseline's; None where the metric has no PPI estimate (a corpus
    metric, one that is not a mean over queries): compare's machine-only test then."""
    g = result.gold
    if g is None or g.paired is None or margin.metric in g.not_estimated:
        return None
    human, in_sample, strata = g.paired
    metric = margin.metric
    a_b, h_b = result.values[base][metric], human[base][metric]
    a, h = result.values[run][metric] - a_b, human[run][metric] - h_b
    gold = in_sample & ~np.isnan(a) & ~np.isnan(h)
    other = ~in_sample & ~np.isnan(a)
    base_mean = ppi_mean(h_b[gold], a_b[gold], a_b[other], lam=g.lam).ppi.value
    pair = None if strata is None else (strata[gold], strata[other])
    verdict = judge_ppi(margin, run, h[gold], a[gold], a[other], base_mean,
                        result.options["alpha"], g.lam, pair)
    return dataclasses.replace(verdict, baseline=base)


def gold_worse(result, run: str, base: str, small: Callable[[str, float, float], bool]
               ) -> GoldWorseVerdict:
    """``compare --gold --fail-if-worse`` for ``run`` against ``base``: the PPI++
    differences significantly worse (``small``: below ``--min-effect``, of the metric, the
    difference and the baseline's mean), and compare's worse cells of the metrics without
    a PPI estimate."""
    g = result.gold
    assert g is not None
    mine = [d for d in g.differences if d.run == run and d.baseline == base]
    worse = tuple(d for d in mine if d.significant and not small(
        d.metric, d.estimate.ppi.value, float(np.nanmean(result.values[base][d.metric])))
        and (d.estimate.ppi.value > 0 if lower_better(d.metric) else d.estimate.ppi.value < 0))
    machine = tuple(c for c in result.worse if c.run == run and c.baseline == base
                    and c.metric in g.not_estimated)
    tested = sum(d.significant is not None for d in mine) + sum(
        c.run == run and c.baseline == base and c.tested and c.metric in g.not_estimated
        for c in result.cells)
    return GoldWorseVerdict(run, base, worse, machine, tested)
