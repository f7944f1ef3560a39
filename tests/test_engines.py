"""The engine interface: a third engine is one class and one ``register`` call, and it gets
the whole pipeline (reports, gates, distributions, segments, intervals) from the command line
and the library. The one here scores users in partitions with the local kernels and merges
the partial results, as a distributed engine does."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import rankeval
from rankeval.engines import ENGINES, Engine, Job, get, register
from rankeval.engines.finish import finish
from rankeval.engines.partial import merge
from rankeval.engines.partition import evaluate_partition
from rankeval.errors import OptionError
from rankeval.io.load import load_inputs

from .conftest import SAMPLE
from .datagen import generate
from .test_spark import METRICS as ALL_METRICS
from .test_spark import OPEN_FORM, SETTINGS, K, generated


class PartitionEngine(Engine):
    """The local kernels over ``parts`` partitions of users (by a hash of the id), merged."""

    name = "partitions"
    help = "the local kernels over partitions of users (a test engine)"
    keywords = ("parts",)

    def score(self, job: Job, progress):
        read = {str: lambda p: pd.read_csv(p, dtype={"user_id": str, "item_id": str})}
        preds, truth = (read[type(x)](x) if isinstance(x, str) else x
                        for x in (job.predictions, job.truth))
        parts = job.options.get("parts") or 3
        partials = []
        part = [frame.user_id.map(lambda u: zlib.crc32(u.encode()) % parts)
                for frame in (preds, truth)]
        for i in range(parts):
            mine = [frame[p == i] for frame, p in zip((preds, truth), part, strict=True)]
            if len(mine[1]):
                loaded = load_inputs(*mine, job.columns)
                partials.append(evaluate_partition(*loaded, job.settings))
        whole = load_inputs(job.predictions, job.truth, job.columns)
        return finish(merge(partials), job.settings, *whole)


@pytest.fixture
def partitions():
    engine = register(PartitionEngine())
    yield engine
    del ENGINES[engine.name]


PREDS, TRUTH = str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv")
METRICS = "precision,recall,ndcg,map,mrr,hit_rate,f1,bpref,err,rbp,r_precision,gm_map,num_rel_ret"


def test_a_registered_engine_is_a_choice_of_the_command_line(partitions, run_cli):
    local = run_cli("score", PREDS, TRUTH, "-m", METRICS, "--k", "1,5,10", "-f", "json")
    theirs = run_cli("score", PREDS, TRUTH, "-m", METRICS, "--k", "1,5,10", "-f", "json",
                     "--engine", "partitions", "--stats", "mean,p90", "--intervals",
                     "--rounds", "300")
    assert theirs.exit_code == 0, theirs.stderr
    a, b = json.loads(local.stdout), json.loads(theirs.stdout)
    assert b["users"] == a["users"] and b["warnings"] == a["warnings"]
    for name, value in a["metrics"].items():
        assert b["metrics"][name] == pytest.approx(value, abs=1e-12, rel=0), name
    assert b["distribution"] and b["ci"]  # the pipeline's later stages ran on its result
    gate = run_cli("score", PREDS, TRUTH, "--engine", "partitions", "--fail-under",
                   "ndcg@10=0.9", "-q")
    assert gate.exit_code == 1 and "FAILED ndcg@10" in gate.stderr


def _dataset(ray, df: pd.DataFrame, blocks: int):
    """A Ray Dataset of ``blocks`` Arrow blocks (a user's rows across several of them)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    step = -(-len(table) // blocks)
    return ray.data.from_arrow([table.slice(i, step) for i in range(0, len(table), step)])


# Each engine besides the default one, as this test session runs it: what starts it (a
# fixture), its pytest marks (a JVM, a local Ray: one xdist worker each, left out of make
# test-fast), its inputs as it takes them (truth, blocks), and options that make it cut the
# users finely (partials from many tasks merged). An engine registered later is tested here
# with no row at all (pandas frames, no options) unless it needs one.
STARTED = {"spark": "spark", "ray": "ray_session", "partitions": "partitions"}
MARKS = {"spark": [pytest.mark.spark, pytest.mark.xdist_group("spark")],
         "ray": [pytest.mark.ray, pytest.mark.xdist_group("ray")]}
INPUTS = {"spark": lambda spark, df, _: spark.createDataFrame(
              pa.Table.from_pandas(df, preserve_index=False)),
          "ray": _dataset}
CUT = {"spark": {"chunk_rows": 97}, "ray": {"partitions": 3}, "partitions": {"parts": 3}}
OTHERS = [n for n, e in ENGINES.items() if e is not get(None)] + [PartitionEngine.name]


def same(local, theirs) -> None:
    """Per-user values to 1e-12, means to 1e-12, identical counts and notices."""
    theirs = theirs.collect()  # the values on this machine, whatever the engine
    assert theirs.users == local.users
    assert [n.to_dict() for n in theirs.notices] == [n.to_dict() for n in local.notices]
    assert theirs.prediction_rows_beyond_k == local.prediction_rows_beyond_k
    assert theirs.tied_users == local.tied_users
    assert list(theirs.metrics) == list(local.metrics)
    for name, value in local.metrics.items():
        assert theirs.metrics[name] == pytest.approx(value, abs=1e-12, rel=0, nan_ok=True), name
    for name, (low, high) in local.tie_range.items():
        assert theirs.tie_range[name] == pytest.approx((low, high), abs=1e-12, rel=0,
                                                       nan_ok=True)
    a, b = (ev.per_user_table().to_pandas().sort_values("user_id").reset_index(drop=True)
            for ev in (local, theirs))
    assert list(b.columns) == list(a.columns) and b["user_id"].tolist() == a["user_id"].tolist()
    assert len(a) == local.users.evaluated > 0
    # NaN where a metric cannot score a user (ild, serendipity), on both sides alike
    np.testing.assert_allclose(b.drop(columns="user_id").to_numpy(dtype=float),
                               a.drop(columns="user_id").to_numpy(dtype=float), rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("name", [pytest.param(n, marks=MARKS.get(n, ())) for n in OTHERS])
@pytest.mark.parametrize("options", SETTINGS, ids=lambda o: ",".join(map(str, o.values()))
                         or "defaults")
def test_every_engine_gives_the_local_numbers(request, name, options):
    """Every metric and setting, on every engine of the registry (and this file's test
    engine), equals the default engine: the same means, per-user values, counts, notices."""
    started = request.getfixturevalue(STARTED[name]) if name in STARTED else None
    preds, truth = generated(1)
    metrics = ALL_METRICS if options.get("ties") != "expected" else [
        m for m in ALL_METRICS if m not in OPEN_FORM]
    local = rankeval.evaluate(preds, truth, metrics=metrics, k=K, **options)
    given = INPUTS.get(name, lambda _, df, __: df)
    theirs = rankeval.evaluate(given(started, preds, 3), given(started, truth, 2),
                               metrics=metrics, k=K, engine=name,
                               engine_options=CUT.get(name), **options)
    same(local, theirs)
    assert any(n.code == "users_only_in_predictions" for n in local.notices)
    assert local.users.without_relevant and local.users.without_predictions


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("parts", [1, 2, 5])
def test_any_cut_of_the_users_merges_to_the_local_numbers(partitions, seed, parts):
    """The exact merge of partials holds for any number of parts, one part included."""
    preds, truth = generate(seed, n_users=60, n_items=40, list_len=12, judged=8)
    preds, truth = (f.astype({"user_id": str, "item_id": str}) for f in (preds, truth))
    tied = "precision,recall,ndcg,map,mrr,hit_rate,f1,bpref,r_precision"  # closed forms
    local = rankeval.evaluate(preds, truth, tied, [3, 10], ties="expected")
    theirs = rankeval.evaluate(preds, truth, tied, [3, 10], ties="expected",
                               engine="partitions", engine_options={"parts": parts})
    same(local, theirs)


def test_engine_choices_and_options_come_from_the_registry(partitions):
    assert get("PARTITIONS") is partitions and get(None).name == "local"
    with pytest.raises(OptionError, match="engine must be one of local, spark, ray, partitions"):
        rankeval.evaluate(PREDS, TRUTH, engine="dask")
    with pytest.raises(OptionError, match=r"^parts needs engine partitions$"):
        rankeval.evaluate(PREDS, TRUTH, engine_options={"parts": 2})
    with pytest.raises(OptionError, match=r"^spark_conf needs engine spark$"):
        rankeval.evaluate(PREDS, TRUTH, engine="partitions",
                          engine_options={"spark_conf": ["a=b"]})


def test_no_engine_name_is_compared_outside_the_registry():
    """A new engine is one module: no command or library function asks for an engine by
    name (its options and checks live in its class)."""
    import pathlib
    import re

    root = pathlib.Path(rankeval.__file__).parent
    found = [f"{p.relative_to(root)}: {line.strip()}"
             for p in root.rglob("*.py") if p.parent.name != "engines"
             for line in p.read_text().splitlines()
             if re.search(r"""(==|!=)\s*["'](local|spark)["']|["'](local|spark)["']\s*(==|!=)|"""
                          r"""on_spark""", line)]
    assert found == []
