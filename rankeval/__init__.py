"""rankeval: evaluate rankings and recommendations against ground truth.

>>> from rankeval import evaluate
>>> result = evaluate("preds.csv", "truth.csv", metrics=["ndcg", "map"], k=[5, 10])
>>> result.metrics["ndcg@10"]
"""

__version__ = "0.1.0"

__all__ = ["Evaluation", "InputError", "OptionError", "RankevalError", "__version__", "evaluate"]


def __getattr__(name: str):
    # Imported lazily so that `import rankeval` (and `rankeval --help`) stays light.
    if name in ("evaluate", "Evaluation"):
        from . import evaluation as _module

        return getattr(_module, name)
    if name in ("InputError", "OptionError", "RankevalError"):
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'rankeval' has no attribute {name!r}")
