"""rankeval: evaluate rankings and recommendations against ground truth.

>>> from rankeval import evaluate
>>> result = evaluate("preds.csv", "truth.csv", metrics=["ndcg", "map"], k=[5, 10])
>>> result.metrics["ndcg@10"]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rankeval.version import __version__ as __version__

# Public name -> the module that defines it. Imported on first use, so that `import rankeval`
# (and `rankeval --help`) stays light.
_EXPORTS: dict[str, str | None] = {
    "evaluate": "api.evaluate",
    "agree": "api.agree",
    "Agreement": "results.agreement",
    "evaluate_scores": "api.scores",
    "evaluate_gold": "api.gold",
    "power": "api.power",
    "compare": "api.compare",
    "ope": "api.ope",
    "sampled": "api.sampled",
    "SampledResult": "analysis.sampled",
    "OffPolicy": "offpolicy.result",
    "rbo": "api.rbo",
    "Overlap": "analysis.overlap",
    "CompareResult": "results.comparison",
    "Evaluation": "results.evaluation",
    "make_settings": "settings",
    "Settings": "settings",
    "validate_inputs": "api.validate",
    "convert": "api.convert",
    "REGISTRY": "registry",
    "Metric": "registry",
    "MetricSpec": "names",
    "Notice": "notices",
    "RankevalError": "errors",
    "InputError": "errors",
    "OptionError": "errors",
    "interleave": None,  # the module rankeval.interleave (make, score, simulate)
}
__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:
    from rankeval.analysis.overlap import Overlap as Overlap
    from rankeval.analysis.sampled import SampledResult as SampledResult
    from rankeval.api.agree import agree as agree
    from rankeval.api.compare import compare as compare
    from rankeval.api.convert import convert as convert
    from rankeval.api.evaluate import evaluate as evaluate
    from rankeval.api.gold import evaluate_gold as evaluate_gold
    from rankeval.api.ope import ope as ope
    from rankeval.api.power import power as power
    from rankeval.api.rbo import rbo as rbo
    from rankeval.api.sampled import sampled as sampled
    from rankeval.api.scores import evaluate_scores as evaluate_scores
    from rankeval.api.validate import validate_inputs as validate_inputs
    from rankeval.errors import InputError as InputError
    from rankeval.errors import OptionError as OptionError
    from rankeval.errors import RankevalError as RankevalError
    from rankeval.names import MetricSpec as MetricSpec
    from rankeval.notices import Notice as Notice
    from rankeval.offpolicy.result import OffPolicy as OffPolicy
    from rankeval.registry import REGISTRY as REGISTRY
    from rankeval.registry import Metric as Metric
    from rankeval.results.agreement import Agreement as Agreement
    from rankeval.results.comparison import CompareResult as CompareResult
    from rankeval.results.evaluation import Evaluation as Evaluation
    from rankeval.settings import Settings as Settings
    from rankeval.settings import make_settings as make_settings


def __getattr__(name: str):
    if name in _EXPORTS and _EXPORTS[name] is None:  # a module of its own
        return importlib.import_module(f".{name}", __name__)
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'rankeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
