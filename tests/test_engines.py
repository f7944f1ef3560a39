"""The engine interface: a third engine is one class and one ``register`` call, and it gets
the whole pipeline (reports, gates, distributions, segments, intervals) from the command line
and the library. The one here scores users in partitions with the local kernels and merges
the partial results, as a distributed engine does."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pandas as pd
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
TIED = "precision,recall,ndcg,map,mrr,hit_rate,f1,bpref,r_precision"  # closed forms for ties


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


@pytest.mark.parametrize("seed", [1, 2])
def test_a_registered_engine_equals_the_local_one_in_the_library(partitions, seed):
    preds, truth = generate(seed, n_users=60, n_items=40, list_len=12, judged=8)
    preds, truth = (f.astype({"user_id": str, "item_id": str}) for f in (preds, truth))
    local = rankeval.evaluate(preds, truth, TIED, [3, 10], ties="expected")
    for parts in (1, 2, 5):
        theirs = rankeval.evaluate(preds, truth, TIED, [3, 10], ties="expected",
                                   engine="partitions",
                                   engine_options={"parts": parts})
        assert theirs.users == local.users
        for name, value in local.metrics.items():
            assert theirs.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name
        for spec in local.specs:
            np.testing.assert_allclose(theirs.values(spec), local.values(spec), atol=1e-12,
                                       rtol=0)
        assert [n.to_dict() for n in theirs.notices] == [n.to_dict() for n in local.notices]


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
