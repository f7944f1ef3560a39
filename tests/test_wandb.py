"""Weights & Biases (#32): score --wandb and Evaluation.log_wandb in offline mode, the run
directory read back: its records (the .wandb file, LevelDB's log format of protobuf
records) for the summary and config, and the per-user table's JSON.

The run directory is read right after rankeval returns, with no wait: a run rankeval started
is complete by then (its last record, the exit record, written out), which is what a user
reading or syncing the run relies on (#46: wandb 0.31 writes the file out after finish()
returns, when its service closes the run's stream)."""

from __future__ import annotations

import json
import math
import os
import socket
import struct
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import rankeval

from .conftest import ROOT

SAMPLE = ROOT / "sample_data"
BLOCK = 32768


def _records(path: Path) -> list:
    """The protobuf records of a run's .wandb file: a 7-byte header (':W&B', magic, version),
    then LevelDB log blocks of chunks (crc32, length, type: full, first, middle, last)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    out, pending, at = [], b"", 7
    while at + 7 <= len(data):
        left = BLOCK - at % BLOCK
        if left < 7:  # the block's tail is padding
            at += left
            continue
        _, length, kind = struct.unpack("<IHB", data[at:at + 7])
        if length == 0 and kind == 0:
            break
        chunk = data[at + 7:at + 7 + length]
        at += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = pb.Record()
            record.ParseFromString(pending)
            out.append(record)
            pending = b""
    return out


def _run(folder: Path, run_id: str | None = None) -> dict:
    """The offline run's summary, config and tables, as W&B recorded them; the run must be
    complete: its records end with the exit record."""
    runs = list((folder / "wandb").glob(f"offline-run-*-{run_id or ''}*"))
    (run_dir,) = runs
    summary: dict = {}
    config: dict = {}
    files = list(run_dir.glob("run-*.wandb"))
    assert len(files) == 1, f"no run file in {run_dir}: {sorted(run_dir.rglob('*'))}"
    records = _records(files[0])
    kinds = [record.WhichOneof("record_type") for record in records]
    assert kinds and kinds[-1] == "exit", f"the run is not complete: {kinds[-5:]}"
    for record in records:
        kind = record.WhichOneof("record_type")
        if kind == "summary":
            for item in record.summary.update:
                key = item.key or "/".join(item.nested_key)
                summary[key] = json.loads(item.value_json)
        elif kind == "config":
            for item in record.config.update:
                config[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    tables = {p.name: json.loads(p.read_text()) for p in run_dir.rglob("*.table.json")}
    return {"summary": summary, "config": config, "tables": tables}


def _services() -> list[str]:
    """The W&B service processes this process started and still runs (Linux's /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        if int(rest.split()[1]) == os.getpid() and "wandb" in name.split("(", 1)[1]:
            out.append(name.split("(", 1)[1])
    return out


@pytest.fixture()
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    yield tmp_path
    import wandb

    wandb.teardown()  # W&B keeps its settings (the run directory) for the process otherwise


def test_score_logs_the_summary_config_and_per_user_table(offline, run_cli):
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-m", "ndcg,recall",
                "-k", "10", "--wandb")
    assert r.exit_code == 0, r.stderr
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ndcg,recall", k=10)
    got = _run(offline)
    for name, value in ev.metrics.items():
        assert got["summary"][name] == pytest.approx(value, abs=1e-12), name
    config = {k: v.get("value", v) if isinstance(v, dict) else v
              for k, v in got["config"].items()}
    assert config["rankeval/gain"] == "linear"
    assert json.loads(config["rankeval/metrics"]) == ["ndcg@10", "recall@10"]
    (table,) = got["tables"].values()
    frame = pd.DataFrame(table["data"], columns=table["columns"])
    assert len(frame) == ev.users.evaluated
    want = ev.per_user.set_index("user_id")["ndcg@10"]
    assert frame.set_index("user_id")["ndcg@10"].to_dict() == pytest.approx(want.to_dict())


def test_log_wandb_names_undefined_values(offline):
    features = pd.DataFrame({"item_id": ["i0001"], "genre": [1.0]})  # ild: never 2 items
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ild,ndcg", k=10, item_features=features)
    assert math.isnan(ev.metrics["ild@10"])
    run_id = ev.log_wandb()
    got = _run(offline, run_id)
    assert "ild@10" not in got["summary"] and got["summary"]["rankeval/undefined"] == ["ild@10"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
def test_each_own_run_is_complete_when_log_wandb_returns(offline):
    """Run after run in one process, each read at once: complete, and W&B's service (which
    writes a run's file out only when it closes the run) shut down, not left to exit."""
    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ndcg", k=10)
    for _ in range(3):
        run_id = ev.log_wandb()
        assert _services() == []
        assert _run(offline, run_id)["summary"]["ndcg@10"] == pytest.approx(ev.metrics["ndcg@10"])


def test_the_users_run_is_left_running(offline):
    """Into the active run: logged, not finished, W&B not shut down under the user."""
    import wandb

    ev = rankeval.evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"),
                           metrics="ndcg", k=10)
    run = wandb.init(project="rankeval-tests", mode="offline")
    assert ev.log_wandb() == run.id
    assert wandb.run is run
    run.log({"after": 1.0})  # still usable
    run.finish()
    wandb.teardown()
    got = _run(offline, run.id)
    assert got["summary"]["ndcg@10"] == pytest.approx(ev.metrics["ndcg@10"])


@pytest.fixture()
def closed_port():
    """A loopback port bound but not listening: a connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


# Every way the W&B store can fail: (environment, a word of the cause)
FAILURES = {
    "unknown mode": ({"WANDB_MODE": "bogus"}, "bogus"),
    "online without an API key": ({"WANDB_MODE": "online"}, "API key"),
    "server unreachable": ({"WANDB_MODE": "online", "WANDB_API_KEY": "0" * 40,
                            "WANDB_BASE_URL": "http://127.0.0.1:{port}"}, "127.0.0.1"),
}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow)
                                  if c == "server unreachable" else c for c in FAILURES])
def test_a_failing_store_is_one_line_in_bounded_time(case, offline, monkeypatch, run_cli,
                                                     closed_port, tmp_path):
    """Exit 2 after the report, one line naming the store and the cause, no traceback, and
    within a bound (wandb.init waits 90 s by default; rankeval's own run 15 s)."""
    env, word = FAILURES[case]
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials of the machine's
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "config"))
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(port=closed_port))
    out = tmp_path / "report.json"
    start = time.monotonic()
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-k", "10", "-q",
                "--wandb", "-o", out)
    assert time.monotonic() - start < 75
    assert r.exit_code == 2 and out.exists()
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("rankeval: error: W&B could not "
                                                             "log to "), r.stderr
    assert word in r.stderr and "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_without_wandb_one_line(monkeypatch, run_cli):
    monkeypatch.setitem(sys.modules, "wandb", None)
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--wandb")
    assert r.exit_code == 2 and "rankeval[wandb]" in r.stderr
    assert r.stderr.count("\n") == 1


def test_interleave_score_logs_each_pair(offline, run_cli):
    log = SAMPLE / "interleave_clicks.csv"
    r = run_cli("interleave", "score", log, "--wandb", "--seed", "3")
    assert r.exit_code == 0, r.stderr
    result = rankeval.interleave.score(str(log), seed=3)
    got = _run(offline)
    for p in result.pairs:
        pair = f"[{p.a}-{p.b}]"
        assert got["summary"][f"delta{pair}"] == pytest.approx(p.delta, abs=1e-12)
        assert got["summary"][f"p_value{pair}"] == pytest.approx(p.p_value, abs=1e-12)
    config = {k: v.get("value", v) if isinstance(v, dict) else v
              for k, v in got["config"].items()}
    assert config["rankeval/method"] == result.method
