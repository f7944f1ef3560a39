"""Metric kernels: vectorized numpy over a ``Chunk``, one value per user, no loop over users.

Each kernel takes the per-chunk ``Sums`` and a cut-off K (``inf`` for ``@all``; a level for
metrics measured at levels) and returns an array of n_users values. The classic measures are
here; the other kernels modules (``gain_metrics``, ``ir_metrics``, ``item_metrics``,
``diversity``, ``cwl``, ``exposure``, ``fairness``, ``propensity``) hold the others, each in its
own ``KERNELS``, and ``KERNELS`` here merges them: every per-user metric of the registry to its
kernel. Imports numpy and pure-Python modules only (a test checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from rankeval import params
from rankeval.kernels.chunk import Chunk
from rankeval.kernels.cwl import KERNELS as CWL
from rankeval.kernels.diversity import KERNELS as DIVERSITY
from rankeval.kernels.exposure import KERNELS as EXPOSURE
from rankeval.kernels.fairness import KERNELS as FAIRNESS
from rankeval.kernels.gain_metrics import KERNELS as GAIN
from rankeval.kernels.ir_metrics import GM_FLOOR
from rankeval.kernels.ir_metrics import KERNELS as IR
from rankeval.kernels.item_metrics import KERNELS as ITEM
from rankeval.kernels.propensity import KERNELS as PROPENSITY
from rankeval.kernels.sums import Sums, gain, safe_div
from rankeval.kernels.threads import each
from rankeval.names import MetricSpec
from rankeval.registry import PER_USER, REGISTRY
from rankeval.settings import Settings

__all__ = ["KERNELS", "Sums", "compute", "gain"]


def _precision(s: Sums, k: float) -> np.ndarray:
    if k == np.inf:  # precision@all: over the whole list of each user
        return safe_div(s.hits(k), s.list_length)
    return s.hits(k) / k


def _r_precision(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.hits_at_r, s.c.n_relevant)


def _recall(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.hits(k), s.c.n_relevant)


def _f1(s: Sums, k: float) -> np.ndarray:
    p, r = _precision(s, k), _recall(s, k)
    return safe_div(2 * p * r, p + r)


def _hit_rate(s: Sums, k: float) -> np.ndarray:
    return s.hit_rate(k)


def _mrr(s: Sums, k: float) -> np.ndarray:
    return s.rr(k)


def _map(s: Sums, k: float) -> np.ndarray:
    r = s.c.n_relevant
    den = np.minimum(r, k) if s.conv.ap_denominator == "min" else r
    return safe_div(s.ap_sum(k), den)


def _set_precision(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.hits(np.inf), s.list_length)


def _set_recall(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.hits(np.inf), s.c.n_relevant)


def _set_f1(s: Sums, k: float) -> np.ndarray:
    # trec_eval's set_F and ir_measures' SetF: (1 + beta) P R / (beta P + R), beta unsquared
    beta = float(s.params.get("beta", 1.0))
    p, r = _set_precision(s, k), _set_recall(s, k)
    return safe_div((1 + beta) * p * r, beta * p + r)


def _counted(s: Sums, counts: np.ndarray) -> np.ndarray:
    """num_q, num_rel: 0 for a user without predictions when they are not counted."""
    if s.conv.missing_user_counts == "counted":
        return counts
    return np.where(s.list_length > 0, counts, 0.0)


def _ndcg(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.dcg(k), s.idcg(k))


def _gm_map(s: Sums, k: float) -> np.ndarray:
    return np.log(np.maximum(_map(s, k), GM_FLOOR))


_CLASSIC: dict[str, Callable[[Sums, float], np.ndarray]] = {
    "precision": _precision,
    "recall": _recall,
    "f1": _f1,
    "hit_rate": _hit_rate,
    "mrr": _mrr,
    "map": _map,
    "r_precision": _r_precision,
    "cg": lambda s, k: s.unscaled(s.cg(k)),
    "dcg": lambda s, k: s.unscaled(s.dcg(k)),
    "idcg": lambda s, k: s.unscaled(s.idcg(k)),
    "ndcg": _ndcg,
    "num_ret": lambda s, k: s.list_length,
    "num_rel": lambda s, k: _counted(s, s.c.n_relevant.astype(np.float64)),
    "num_rel_ret": lambda s, k: s.hits(np.inf),
    "set_precision": _set_precision,
    "set_recall": _set_recall,
    "set_f1": _set_f1,
    "set_map": lambda s, k: safe_div(s.hits(np.inf) ** 2, s.list_length * s.c.n_relevant),
    "set_relative_precision": lambda s, k: safe_div(
        s.hits(np.inf), np.minimum(s.list_length, s.c.n_relevant)),
    "relative_precision": lambda s, k: safe_div(s.hits(k), np.minimum(k, s.c.n_relevant)),
    "gm_map": _gm_map,
    "num_q": lambda s, k: _counted(s, np.ones(s.c.n_users)),
    "dcg_burges": lambda s, k: s.burges.unscaled(s.burges.dcg(k)),
    "ndcg_burges": lambda s, k: _ndcg(s.burges, k),
}
_MODULES: tuple[Mapping[str, Callable[[Sums, float], np.ndarray]], ...] = (
    _CLASSIC, GAIN, IR, ITEM, DIVERSITY, CWL, EXPOSURE, FAIRNESS, PROPENSITY)
KERNELS = {name: kernel for module in _MODULES for name, kernel in module.items()}
assert len(KERNELS) == sum(map(len, _MODULES)), "a metric with kernels in two modules"
assert set(KERNELS) == {n for n, m in REGISTRY.items() if m.scope == PER_USER}, (
    "every per-user metric needs a kernel here (corpus metrics live in corpus.py)")


def compute(chunk: Chunk, specs: Iterable[MetricSpec], conv: Settings,
            chunks: dict | None = None) -> dict[MetricSpec, np.ndarray]:
    """One array of per-user values for each spec; ``conv`` is the ``Settings`` (the kernels
    read gain, ap_denominator, rr_target and relevance_threshold). A spec with parameters
    (``precision(rel=2)@10``) is computed with its own settings, on its own build from
    ``chunks`` (keyed by ``params.build_key``) when they change what the build reads."""
    todo = [spec for spec in specs if REGISTRY[spec.name].scope == PER_USER]
    groups: dict[tuple, list[MetricSpec]] = {}
    for spec in todo:
        groups.setdefault(params.group_key(spec, conv), []).append(spec)
    out: dict[MetricSpec, np.ndarray] = {}
    for key, group in groups.items():
        own = params.settings_for(group[0], conv)
        where = chunk if not key[0] else (chunks or {})[key[0]]
        values = _compute(where, group, own, params.kernel_params(group[0].params,
                                                                 group[0].name))
        if key[0] and params.undefined_without_relevant(group[0], conv):
            # users without relevant items are left out (SPEC 2): those of its own threshold
            values = {s: np.where(where.n_relevant > 0, v, np.nan) for s, v in values.items()}
        out.update(values)
    return {spec: out[spec] for spec in todo}


def _compute(chunk: Chunk, todo: list[MetricSpec], conv: Settings, kernel_params: dict
             ) -> dict[MetricSpec, np.ndarray]:
    sums = Sums(chunk, conv, kernel_params)

    def kernel(spec: MetricSpec) -> np.ndarray:
        # K = infinity is the whole list: every `pos <= K` holds and min(R, K) is R.
        # A metric measured at levels gets its level (iprec@0.5) in place of K.
        return KERNELS[spec.name](sums, spec.level if spec.level is not None
                                  else np.inf if spec.k is None else spec.k)

    if len(chunk.user) < _THREADED_ROWS:  # starting threads would cost more than they save
        return {spec: kernel(spec) for spec in todo}
    # On the two cores: kernels only read the chunk and share Sums' intermediates, which a
    # race at worst computes twice, alike (1M users, 6 metrics: 118 -> 80 ms).
    return dict(zip(todo, each(kernel, todo), strict=True))


_THREADED_ROWS = 1 << 16
