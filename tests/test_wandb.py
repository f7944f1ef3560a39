"""Weights & Biases (#32): score --wandb and Evaluation.log_wandb in offline mode, the run
directory read back: its records (the .wandb file, LevelDB's log format of protobuf
records) for the summary and config, and the per-user table's JSON."""

from __future__ import annotations

import json
import math
import struct
import sys
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


def _run(folder: Path) -> dict:
    """The offline run's summary, config and tables, as W&B recorded them."""
    (run_dir,) = list((folder / "wandb").glob("offline-run-*"))
    summary: dict = {}
    config: dict = {}
    for record in _records(next(run_dir.glob("run-*.wandb"))):
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
    got = _run(offline)
    assert run_id in next((offline / "wandb").glob("offline-run-*")).name
    assert "ild@10" not in got["summary"] and got["summary"]["rankeval/undefined"] == ["ild@10"]


def test_without_wandb_one_line(monkeypatch, run_cli):
    monkeypatch.setitem(sys.modules, "wandb", None)
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--wandb")
    assert r.exit_code == 2 and "rankeval[wandb]" in r.stderr
    assert r.stderr.count("\n") == 1
