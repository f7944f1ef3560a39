"""Shared helpers: tiny frame builders, a CLI runner that keeps stdout and stderr apart."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import settings

from rankeval.cli import cli

settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def ranked(lists: dict[str, list[str]]) -> pd.DataFrame:
    """Predictions from {user: [best item, next, ...]} with explicit ranks."""
    rows = [(u, item, r) for u, items in lists.items() for r, item in enumerate(items, 1)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "rank"])


def judged(truth: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Ground truth from {user: {item: relevance}}."""
    rows = [(u, item, rel) for u, items in truth.items() for item, rel in items.items()]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "relevance"])


class Run:
    def __init__(self, result):
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr

    def json(self) -> dict:
        return json.loads(self.stdout)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (two cores) for the test run (tests marked spark)."""
    from rankeval.spark import session

    spark = session("local[2]", [("spark.sql.shuffle.partitions", "3"),
                                 ("spark.sql.execution.arrow.maxRecordsPerBatch", "50"),
                                 ("spark.default.parallelism", "2")])
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray (two CPUs) for the test run (tests marked ray)."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    yield ray
    ray.shutdown()


@pytest.fixture(autouse=True)
def _no_ci_environment(monkeypatch):
    """Tests must not append to a real GitHub step summary when the suite itself runs in CI."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def run_cli():
    """Invoke the CLI in-process: run_cli("score", a, b, input=...) -> Run."""

    def invoke(*args: str, input: str | bytes | None = None) -> Run:
        runner = CliRunner()
        return Run(runner.invoke(cli, [str(a) for a in args], input=input))

    return invoke


@pytest.fixture
def write(tmp_path):
    """write("name.csv", frame_or_text) -> path of a file in a temporary folder."""

    def _write(name: str, content) -> Path:
        path = tmp_path / name
        if isinstance(content, pd.DataFrame):
            if name.endswith((".parquet", ".pq")):
                content.to_parquet(path, index=False)
            else:
                sep = "\t" if name.endswith((".tsv", ".tab", ".tsv.gz")) else ","
                content.to_csv(path, index=False, sep=sep)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    return _write


# Chromium as root in a container, without the background services that call home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--disable-quic"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Chromium is missing: run `make test` (it installs the chromium package)"
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        yield b
        b.close()
