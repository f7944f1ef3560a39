"""The shape of the package: what a notebook user finds, what every command shares, what the
kernels import, and the JSON report as CI scripts read it."""

from __future__ import annotations

import inspect
import json
import pydoc
import subprocess
import sys
from pathlib import Path

import click
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import rankeval
from rankeval import evaluate
from rankeval.cli import cli
from rankeval.errors import OptionError
from rankeval.report.json import SCHEMA_VERSION
from rankeval.settings import TABLE

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "preds.csv", SAMPLE / "truth.csv"
GOLDEN = Path(__file__).parent / "golden"


def test_dir_lists_the_public_api():
    names = dir(rankeval)
    for name in ("evaluate", "Evaluation", "make_settings", "Settings", "validate_inputs",
                 "convert", "REGISTRY", "InputError", "OptionError", "RankevalError"):
        assert name in names
        assert getattr(rankeval, name) is not None
    assert (Path(rankeval.__file__).parent / "py.typed").is_file()


def test_evaluation_reads_well_in_a_notebook():
    r = evaluate(PREDS, TRUTH, ["ndcg", "map"], [5, 10])
    text = repr(r)
    assert text.startswith("<Evaluation of 298 users>")
    assert "ndcg" in text and "0.3391" in text and "users: 298 evaluated" in text
    page = r._repr_html_()
    assert page.startswith("<table>") and "<th>ndcg</th>" in page and "0.3391" in page


def test_help_of_evaluate_lists_every_setting_with_its_values():
    import typing

    from rankeval.api.request import Options
    from rankeval.io.options import Columns, ExtraInputs

    text = pydoc.render_doc(evaluate, renderer=pydoc.plaintext)
    params = inspect.signature(evaluate).parameters
    # the keywords are typed (Unpack of a TypedDict: what IDEs and mypy read), declared once
    assert params["options"].annotation == "Unpack[Options]"
    keywords = typing.get_type_hints(Options)
    assert {*Columns.names(), *ExtraInputs.names(), "compat", "preds_format",
            "truth_format"} <= set(keywords)
    for s in TABLE:
        assert s.name in keywords
        assert f"{s.name}: " in text
        assert s.describe() in " ".join(text.split())  # and described, with its choices
    assert "'linear' | 'exponential'" in text


@pytest.mark.parametrize("verb", ["rankeval.evaluate", "rankeval.compare",
                                  "rankeval.spark.evaluate", "rankeval.ray.evaluate"])
def test_the_verbs_that_take_evaluates_keywords_declare_them_once(verb):
    import importlib
    import typing

    from rankeval.api.request import Options

    module, name = verb.rsplit(".", 1)
    params = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    assert params["options"].annotation == "Unpack[Options]"
    assert not set(params) & set(typing.get_type_hints(Options))  # none declared twice


def test_compare_still_takes_the_formats_and_compat():
    runs = {"a": PREDS, "b": PREDS}
    plain = rankeval.compare(runs, TRUTH, "ndcg@10")
    named = rankeval.compare(runs, TRUTH, "ndcg@10", compat=None, preds_format="csv",
                             truth_format="csv")
    assert named.mean("b", "ndcg@10") == plain.mean("b", "ndcg@10") == pytest.approx(
        0.3391, abs=5e-5)
    for wrong in ({"truth_format": "trec"}, {"preds_format": "trec"}, {"compat": "nope"}):
        with pytest.raises(rankeval.RankevalError):
            rankeval.compare(runs, TRUTH, "ndcg@10", **wrong)


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "batch", "reader", "path"])
def test_evaluate_takes_every_kind_of_table(kind):
    frames = [pd.read_csv(PREDS, dtype={"user_id": str, "item_id": str}),
              pd.read_csv(TRUTH, dtype={"user_id": str, "item_id": str})]
    make = {
        "pandas": lambda f: f,
        "polars": pl.from_pandas,
        "arrow": lambda f: pa.Table.from_pandas(f, preserve_index=False),
        "batch": lambda f: pa.RecordBatch.from_pandas(f, preserve_index=False),
        "reader": lambda f: pa.Table.from_pandas(f, preserve_index=False).to_reader(),
        "path": None,
    }[kind]
    inputs = [PREDS, TRUTH] if make is None else [make(f) for f in frames]
    r = evaluate(*inputs, ["ndcg@10"])
    assert r.metrics["ndcg@10"] == pytest.approx(0.3391, abs=5e-5)


def test_something_else_is_a_clear_error():
    with pytest.raises(rankeval.InputError, match="expected a file path, a pandas or polars"):
        evaluate([1, 2], TRUTH)


def test_library_errors_name_settings_as_keywords_and_the_cli_as_flags(run_cli):
    with pytest.raises(OptionError, match=r"^gain must be one of linear, exponential"):
        evaluate(PREDS, TRUTH, gain="cubic")
    with pytest.raises(OptionError, match=r"^relevance_threshold must be a number >= 0"):
        evaluate(PREDS, TRUTH, relevance_threshold=-1)
    r = run_cli("score", PREDS, TRUTH, "--relevance-threshold", "-1")
    assert r.exit_code == 2
    assert r.stderr.startswith("rankeval: error: --relevance-threshold must be a number >= 0")
    warned = evaluate(PREDS, TRUTH).warnings
    assert any("(zero_relevant_users='zero' scores them 0)" in w for w in warned)


@pytest.mark.parametrize(("modules", "heavy"), [
    # the kernels run wherever numpy does (a Spark worker), without the readers
    ("rankeval.kernels.chunk, rankeval.kernels.metrics",
     ("pyarrow", "pandas", "polars", "scipy", "rich", "click")),
    # rankeval --help and click's parsing: the commands import the rest when they run
    ("rankeval.cli", ("numpy", "pyarrow", "pandas", "scipy", "rich")),
])
def test_imports_stay_light(modules, heavy):
    code = (f"import sys\nimport {modules}\n"
            f"print([m for m in sys.modules if m.split('.')[0] in {heavy!r}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def _commands():
    return {name: cli.commands[name] for name in ("score", "validate", "compare")}


def test_the_same_option_means_the_same_thing_in_every_command():
    shared = {}
    for command in _commands().values():
        for p in command.params:
            if isinstance(p, click.Argument) or p.hidden:
                continue
            for opt in p.opts:
                # -f lists the report formats each command offers; the rest must be identical.
                kind = "report format" if p.name == "fmt" else str(p.type)
                key = (opt, p.name, kind, p.multiple, p.is_flag)
                shared.setdefault(opt, set()).add(key)
    clashes = {opt: keys for opt, keys in shared.items() if len(keys) > 1}
    assert not clashes
    for opt in ("-k", "-m", "--compat", "--gain", "--dedupe", "--ties", "--user-col",
                "--preds-format", "--truth-format", "-f", "-o", "-q", "--config", "--debug"):
        for name, command in _commands().items():
            assert any(opt in p.opts for p in command.params), (name, opt)


@pytest.mark.parametrize("args, old, new", [
    (["score", PREDS, TRUTH, "--ci", "--ci-rounds", "200", "-f", "json"], "--ci-rounds",
     "--rounds"),
    (["compare", PREDS, PREDS, TRUTH, "--baseline", "preds-2", "-f", "json"], "--baseline",
     "--baseline-run"),
    (["compare", PREDS, PREDS, TRUTH, "--runs-format", "csv", "-f", "json"], "--runs-format",
     "--preds-format"),
])
def test_old_spellings_still_work_and_warn(run_cli, args, old, new):
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    assert f"{old} is now {new}" in r.stderr or f"{old} is now {new}" in r.stderr.replace(
        "compare --baseline", "--baseline")
    doc = r.json()
    if old == "--ci-rounds":
        assert doc["ci"]["intervals"]
    if old == "--baseline":
        assert doc["baseline"] == "preds-2"


def test_validate_and_compare_have_the_shared_options(run_cli, write, tmp_path):
    out = tmp_path / "v.json"
    r = run_cli("validate", PREDS, TRUTH, "--compat", "trec_eval", "-q", "-f", "json", "-o", out)
    assert r.exit_code == 0 and r.stderr == ""
    assert json.loads(out.read_text())["users"]["without_relevant"] == 2
    doubled = write("d.csv", PREDS.read_text() + "".join(PREDS.read_text().splitlines(True)[1:3]))
    refused = run_cli("compare", PREDS, doubled, TRUTH)
    assert refused.exit_code == 2 and "--dedupe keeps the best-ranked one" in refused.stderr
    r = run_cli("compare", PREDS, doubled, TRUTH, "--dedupe", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["settings"]["dedupe"] is True
    assert [c["delta"] for c in r.json()["comparisons"]] == [0.0] * 6  # the six defaults


def test_compare_reads_the_config_file(run_cli, tmp_path, monkeypatch):
    (tmp_path / "rankeval.toml").write_text('metrics = ["ndcg@5"]\ngain = "exponential"\n')
    monkeypatch.chdir(tmp_path)
    r = run_cli("compare", PREDS, PREDS, TRUTH, "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["settings"]["metrics"] == ["ndcg@5"]
    assert r.json()["settings"]["gain"] == "exponential"


@pytest.mark.parametrize("content, problem", [
    ({"rankeval": "9", "schema": SCHEMA_VERSION + 1, "metrics": {"ndcg@10": 0.3}},
     "newer than this rankeval understands"),
    ({"runs": []}, "not a rankeval JSON report"),
    ({"metrics": {"ndcg@10": "high"}}, "not finite numbers"),
    ({"metrics": {"ndcg@10": 0.3}, "settings": [1]}, "'settings' is not an object"),
])
def test_a_baseline_that_is_not_a_report_we_understand_is_exit_2(run_cli, write, content,
                                                                  problem):
    base = write("base.json", json.dumps(content))
    r = run_cli("score", PREDS, TRUTH, "--baseline", base, "--max-drop", "1%")
    assert r.exit_code == 2
    assert r.stderr.startswith(f"rankeval: error: --baseline {base}: ")
    assert problem in r.stderr


def _scrubbed(doc: dict) -> dict:
    doc["rankeval"] = "<version>"
    # the messages that name an input name it as given: without this checkout's folder
    folder = str(Path(doc["inputs"]["truth"]["path"]).parent) + "/"
    doc["warnings"] = [w.replace(folder, "") for w in doc["warnings"]]
    for notice in doc["notices"]:
        notice["message"] = notice["message"].replace(folder, "")
    for summary in doc["inputs"].values():
        summary["path"] = Path(summary["path"]).name
    return doc


def test_the_json_report_is_the_golden_file(run_cli):
    """The CI contract: keys, values and warnings of the sample data's report."""
    r = run_cli("score", PREDS, TRUTH, "--k", "5,10", "-f", "json", "--fail-under",
                "ndcg@10=0.3")
    golden = GOLDEN / "score_sample.json"
    doc = _scrubbed(r.json())
    if not golden.exists():  # `make golden` (re)writes it, for review in the diff
        golden.write_text(json.dumps(doc, indent=2) + "\n")
    assert doc == json.loads(golden.read_text())
