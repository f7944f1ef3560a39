"""MLflow (#32): score --mlflow, Evaluation.log_mlflow and the ``rankeval`` evaluator of
mlflow.evaluate, against a real tracking store (SQLite in a temporary folder, no server),
read back through MlflowClient."""

from __future__ import annotations

import json
import math
import os
import socket
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import rankeval

from .conftest import ROOT

SAMPLE = ROOT / "sample_data"


@pytest.fixture()
def store(tmp_path, monkeypatch):
    """A tracking store of its own: SQLite and artifacts under tmp_path."""
    import mlflow

    monkeypatch.chdir(tmp_path)  # artifacts go to ./mlruns beside the database
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "rankeval-tests")
    mlflow.set_tracking_uri(None)
    yield mlflow.MlflowClient()
    while mlflow.active_run() is not None:
        mlflow.end_run()


def _only_run(client):
    experiment = client.get_experiment_by_name("rankeval-tests")
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 1
    return runs[0]


def test_score_logs_metrics_params_and_reports(store, run_cli, tmp_path):
    args = [SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-m", "ndcg,recall,ee_l(p=0.8)",
            "-k", "10"]
    r = run_cli("score", *args, "--mlflow")
    assert r.exit_code == 0, r.stderr
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ndcg,recall,ee_l(p=0.8)", k=10)
    run = _only_run(store)
    assert run.info.run_id in r.stderr
    names = json.loads(run.data.tags["rankeval.metrics"])
    assert sorted(names.values()) == sorted(ev.metrics)
    assert names["ndcg_at_10"] == "ndcg@10" and "ee_l_p_0.8_at_10" in names
    for key, name in names.items():
        assert run.data.metrics[key] == pytest.approx(ev.metrics[name], abs=1e-12)
    assert run.data.params["gain"] == "linear" and run.data.params["ties"] == "trec"
    assert json.loads(run.data.params["metrics"]) == list(ev.metrics)
    paths = {a.path for a in store.list_artifacts(run.info.run_id, "rankeval")}
    assert paths == {"rankeval/report.json", "rankeval/per_user.parquet",
                     "rankeval/report.html"}
    local = store.download_artifacts(run.info.run_id, "rankeval", str(tmp_path / "got"))
    report = json.loads((tmp_path / "got" / "rankeval" / "report.json").read_text())
    assert report["metrics"] == pytest.approx(ev.metrics, abs=1e-15)
    table = pq.read_table(f"{local}/per_user.parquet").to_pandas()
    assert len(table) == ev.users.evaluated


def test_log_mlflow_into_the_active_run_and_undefined_values(store):
    """Evaluation.log_mlflow() logs to the run the user started; a mean over no user is not
    logged as a number but named in the tag rankeval.undefined."""
    import mlflow

    features = pd.DataFrame({"item_id": ["i0001"], "genre": [1.0]})  # ild: never 2 items
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ild,ndcg", k=10, item_features=features)
    assert math.isnan(ev.metrics["ild@10"])
    with mlflow.start_run() as active:
        assert ev.log_mlflow() == active.info.run_id
    run = store.get_run(active.info.run_id)
    assert "ild_at_10" not in run.data.metrics and "ndcg_at_10" in run.data.metrics
    assert json.loads(run.data.tags["rankeval.undefined"]) == ["ild@10"]


def test_the_mlflow_evaluate_plugin(store):
    """mlflow.models.evaluate (mlflow.evaluate before MLflow 3) with evaluators=["rankeval"]
    on one table of (user, item, score, relevance) rows gives rankeval's numbers, logged to
    its run."""
    import mlflow

    preds = pd.read_csv(SAMPLE / "preds.csv")
    truth = pd.read_csv(SAMPLE / "truth.csv")
    data = preds.merge(truth, on=["user_id", "item_id"], how="left").fillna({"relevance": 0})
    data = data[["user_id", "item_id", "score", "relevance"]]
    with mlflow.start_run() as active:
        result = mlflow.models.evaluate(data=data, predictions="score", targets="relevance",
                                 model_type="ranking", evaluators=["rankeval"],
                                 evaluator_config={"rankeval": {"metrics": "ndcg,map",
                                                                "k": [5, 10]}})
    want = rankeval.evaluate(data[["user_id", "item_id", "score"]],
                             data[["user_id", "item_id", "relevance"]],
                             metrics="ndcg,map", k=[5, 10])
    assert result.metrics == pytest.approx(
        {name.replace("@", "_at_"): v for name, v in want.metrics.items()}, abs=1e-12)
    run = store.get_run(active.info.run_id)
    assert run.data.metrics["ndcg_at_10"] == pytest.approx(want.metrics["ndcg@10"], abs=1e-12)


def test_without_mlflow_one_line(monkeypatch, run_cli):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow fails
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--mlflow")
    assert r.exit_code == 2 and "rankeval[mlflow]" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@pytest.fixture()
def closed_port():
    """A loopback port bound but not listening: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _read_only(tmp_path: Path) -> str:
    """A store that exists and can be read, not written: SQLite opened read-only (the same
    for root, whom a folder's permissions do not stop)."""
    db = tmp_path / "ro.db"
    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{db}")
    mlflow.MlflowClient().search_experiments()  # makes the tables
    mlflow.set_tracking_uri(None)
    return f"sqlite:///file:{db}?mode=ro&uri=true"


# Every way the MLflow store can fail: (tracking URI, other environment, a word of the cause)
FAILURES = {
    "read-only store": (_read_only, {}, "readonly"),
    "unknown run id": ("sqlite:///{tmp}/mlflow.db", {"MLFLOW_RUN_ID": "0" * 32}, "not found"),
    "unknown URI scheme": ("bogus://somewhere", {}, "bogus"),
    "file store without its opt-in": ("file://{tmp}/mlruns", {}, "MLFLOW_ALLOW_FILE_STORE"),
    "SQLite in a read-only folder": ("sqlite:////proc/self/mlflow.db", {}, "unable to open"),
    "SQLite below a file": ("sqlite:///{tmp}/a-file/mlflow.db", {}, "a-file"),
    "server unreachable": ("http://user:secret@127.0.0.1:{port}/", {}, "refused"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failing_store_is_one_line_in_bounded_time(case, store, tmp_path, monkeypatch,
                                                     run_cli, closed_port):
    """Exit 2 after the report, one line naming the store and the cause, no traceback (MLflow
    logs one before raising), within a bound: MLflow alone retries an unopenable database
    for about 100 s and a tracking server for minutes."""
    uri, env, word = FAILURES[case]
    uri = uri(tmp_path) if callable(uri) else uri.format(tmp=tmp_path, port=closed_port)
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "report.json"
    start = time.monotonic()
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-k", "10", "-q",
                "--mlflow", "-o", out)
    assert time.monotonic() - start < 60
    assert r.exit_code == 2 and out.exists()
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("rankeval: error: MLflow could not log to "), r.stderr
    assert word in r.stderr and "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert "secret" not in r.stderr
    assert "MLFLOW_HTTP_REQUEST_TIMEOUT" not in os.environ  # set for the call only


def test_a_tracker_failure_beside_a_failing_gate(store, tmp_path, monkeypatch, run_cli):
    """The gates' verdict is said first (FAILED line, JUnit file), then the tracker's failure:
    exit 2, over the gate's 1."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////proc/self/mlflow.db")
    junit = tmp_path / "gates.xml"
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-k", "10", "-q",
                "--fail-under", "ndcg@10=0.99", "--junit", junit, "--mlflow",
                "-o", tmp_path / "report.json")
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert lines[0].startswith("rankeval: FAILED ndcg@10") and len(lines) == 2, r.stderr
    assert lines[1].startswith("rankeval: error: MLflow could not log to sqlite:")
    assert "<failure" in junit.read_text()


def test_the_library_raises_one_rankeval_error(store, tmp_path, monkeypatch):
    """Evaluation.log_mlflow: a RankevalError (the CLI's one line), MLflow's own as its
    cause."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "bogus://somewhere")
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), k=10)
    with pytest.raises(rankeval.RankevalError, match="MLflow could not log to bogus://") as e:
        ev.log_mlflow()
    assert e.value.__cause__ is not None


def test_interleave_score_logs_each_pair(store, run_cli, tmp_path):
    """An interleaving's verdict reaches MLflow as a score's does: Delta per pair of teams with
    its interval and p-value, the method and click rule as params, the JSON report."""
    log = SAMPLE / "interleave_clicks.csv"
    r = run_cli("interleave", "score", log, "--mlflow", "--seed", "3")
    assert r.exit_code == 0, r.stderr
    result = rankeval.interleave.score(str(log), seed=3)
    run = _only_run(store)
    names = json.loads(run.data.tags["rankeval.metrics"])
    assert len(result.pairs) >= 1 and len(names) == 8 * len(result.pairs)
    for p in result.pairs:
        pair = f"[{p.a}-{p.b}]"
        for name, value in ((f"delta{pair}", p.delta), (f"delta{pair}:low", p.low),
                            (f"p_value{pair}", p.p_value), (f"wins{pair}", p.wins)):
            key = next(k for k, n in names.items() if n == name)
            assert run.data.metrics[key] == pytest.approx(value, abs=1e-12), name
    assert run.data.params["method"] == result.method
    assert json.loads(run.data.params["clicks"])["rule"] == result.clicks
    store.download_artifacts(run.info.run_id, "rankeval", str(tmp_path / "got"))
    report = json.loads((tmp_path / "got" / "rankeval" / "report.json").read_text())
    assert report["kind"] == "interleave_score"
    assert not (tmp_path / "got" / "rankeval" / "per_user.parquet").exists()
