"""Import paths users may hold keep working through the reshaping of #47: every public name
of ``rankeval``, the engines' own entry points and the ``rankeval.evaluation`` module."""

from __future__ import annotations

import importlib
import math
import pickle
from pathlib import Path

import pytest

import rankeval

from .conftest import SAMPLE

OLD = {
    "rankeval.evaluation": ("evaluate", "Evaluation", "InputSummary", "EvaluateOptions"),
    # the engine moved under rankeval.engines.spark (#47 S6); its door keeps its names
    "rankeval.spark": ("evaluate", "session", "SparkValues", "validate_frames", "input_frames",
                       "extra_frames", "evaluate_frames", "CHUNK_ROWS"),
    # the engine moved under rankeval.engines.ray (#47 S7); its door keeps its names
    "rankeval.ray": ("evaluate", "init", "read_inputs", "evaluate_inputs", "validate_inputs",
                     "RayValues"),
    # a third-party engine's imports (docs/development.md); the store: old pickles name it
    "rankeval.engines": ("ENGINES", "EXTRA", "ON_SIGNAL", "Engine", "Job", "engine_options",
                         "get", "register", "run", "signal_handlers_kept"),
    "rankeval.engines.store": ("LocalValues", "Store"),
    # encode and select moved to build.users (#47 S17); an old pickle names stages.UserCounts
    "rankeval.build.stages": ("UserCounts", "build", "Built"),
    # flag moved to errors (#47 S17), which integrations import; the command line re-exports it
    "rankeval.cli.app": ("flag",),
}


@pytest.mark.parametrize("name", sorted(rankeval.__all__))
def test_every_public_name_resolves(name):
    assert getattr(rankeval, name) is not None


def test_the_library_names_are_the_moved_ones():
    assert rankeval.evaluate is importlib.import_module("rankeval.api.evaluate").evaluate
    assert rankeval.Evaluation is importlib.import_module("rankeval.results.evaluation").Evaluation
    old = importlib.import_module("rankeval.evaluation")
    assert old.Evaluation is rankeval.Evaluation and old.evaluate is rankeval.evaluate


# public name -> the module it lives in after #47's moves (S10-S13)
MOVED_NAMES = {
    "validate_inputs": "api.validate", "convert": "api.convert",
    "evaluate_scores": "api.scores", "power": "api.power", "rbo": "api.rbo",
    "sampled": "api.sampled", "ope": "api.ope", "compare": "api.compare",
    "CompareResult": "results.comparison",
}


@pytest.mark.parametrize(("name", "module"), sorted(MOVED_NAMES.items()))
def test_a_moved_public_name_is_the_new_module_s(name, module):
    assert getattr(rankeval, name) is getattr(importlib.import_module(f"rankeval.{module}"), name)


def test_flag_is_the_errors_one():
    from rankeval.cli.app import flag
    from rankeval.errors import flag as moved

    assert flag is moved and moved("ap_denominator", "relevant") == "--ap-denominator relevant"


def test_a_validation_is_a_result():
    """``Validation`` lives in results/ (S11); the engines' path to it stays the same class."""
    from rankeval.engines.validation import Validation
    from rankeval.results.validation import Validation as moved

    assert Validation is moved
    checked = rankeval.validate_inputs(SAMPLE / "preds.csv", SAMPLE / "truth.csv",
                                       rankeval.make_settings(["ndcg"], [5]))
    assert isinstance(checked, moved) and checked.ok() and checked.users.evaluated == 298


def test_an_evaluation_pickled_before_the_move_loads():
    """tests/data/evaluation-a5d897b.pickle: an evaluation pickled at a5d897b, when it was
    ``rankeval.evaluation.Evaluation`` with its values in ``rankeval.engines.store``."""
    data = (Path(__file__).parent / "data" / "evaluation-a5d897b.pickle").read_bytes()
    assert b"rankeval.evaluation" in data and b"rankeval.engines.store" in data
    ev = pickle.loads(data)
    assert isinstance(ev, rankeval.Evaluation)
    assert ev.users.evaluated == 3 and list(ev.user_ids) == ["u1", "u2", "u3"]
    assert math.isclose(ev.metrics["recall@3"], 1 / 3) and math.isclose(ev.metrics["mrr@1"], 1 / 3)
    assert ev.values("ndcg@3").tolist() == pytest.approx([0.7601875334318684, 0.0, 0.0])
    assert ev.to_dict()["metrics"] == ev.metrics


@pytest.mark.parametrize(("module", "names"), sorted(OLD.items()))
def test_the_old_modules_keep_their_names(module, names):
    found = importlib.import_module(module)
    for name in names:
        assert getattr(found, name) is not None, f"{module}.{name}"


VOCABULARY = ["errors", "version", "registry", "registry.metric", "registry.recommender", "params",
              "irmeasures", "foreign_names", "names", "conventions", "compat", "settings",
              "notices"]


# modules that moved out of a circle (#47 S3, S4): each imports first, with no order needed
# (an engine class imported before the half-made engines package was the risk)
MOVED = ["results.evaluation", "results.store", "api.evaluate", "engines.interface",
         "engines.registry", "engines.pipeline", "engines.signals", "engines.partial",
         "engines.partition", "engines.sampled", "engines.finish", "engines.local",
         "engines.spark", "engines.ray", "evaluation", "results.validation", "api.validate",
         "api.convert", "api.scores", "api.power", "api.score", "api.rbo", "api.sampled",
         "api.ope", "api.compare", "results.comparison", "analysis.baselines",
         "analysis.changes", "engines.spark.engine",
         "engines.spark.driver", "engines.spark.worker", "engines.distributed.chunks",
         "engines.distributed.merge", "spark", "engines.ray.engine", "engines.ray.cluster",
         "engines.ray.driver", "engines.ray.exchange", "engines.distributed.engine",
         "engines.distributed.store", "ray"]


@pytest.mark.parametrize("module", VOCABULARY + MOVED)
def test_each_module_imports_first(module):
    """No import order is needed: each module of the vocabulary floor, and each one moved out
    of a circle, imports in a fresh interpreter (``import rankeval.recommender.registry``
    alone was a circular-import error)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", f"import rankeval.{module}"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(("module", "optional"), [("rankeval.spark", "pyspark"),
                                                  ("rankeval.ray", "ray")])
def test_the_engine_doors_import_without_their_engine(module, optional):
    """``rankeval.spark`` and ``rankeval.ray`` and every name of their ``__all__`` resolve
    with neither pyspark nor ray imported: each engine's package imports it when it runs."""
    import subprocess
    import sys

    code = (f"import sys, {module} as m; [getattr(m, n) for n in m.__all__]; "
            "print(sorted({'pyspark', 'ray'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", (module, optional)


def test_spark_submit_prints_a_file_beside_the_log_configuration():
    """``python -m rankeval.spark.submit`` (docs/spark.md) prints the file spark-submit runs;
    the Spark session's log4j2.properties is in the package where it looks for it."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "rankeval.spark.submit"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert Path(out).is_file() and Path(out).name == "submit.py"
    session = importlib.import_module("rankeval.engines.spark.session")
    assert Path(session.__file__).with_name("log4j2.properties").is_file()
