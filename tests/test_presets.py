"""Every ``--compat`` preset is data: a row of ``presets.PRESETS`` and a column of the
settings table, read through one lookup; no code compares a preset's name.

Each preset then reproduces the tool it names on inputs made to tell conventions apart: runs
whose rank column disagrees with their scores (every tool named orders by score), with ties,
unjudged documents, queries missing from the run and a query with nothing relevant.
trec_eval 10.0 and 9.0.8 through their recorded outputs (tests/data/trec_eval), ir_measures
and pytrec_eval live.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from rankeval import evaluate
from rankeval.conventions import TABLE
from rankeval.presets import PRESETS, UNSET
from rankeval.settings import make_settings

from . import test_ir_measures as irm
from .conftest import ROOT, SAMPLE
from .datagen import as_dicts
from .test_trec_eval_versions import CASES, DATA, _known, _ours, refused, slug

# -- presets as data ---------------------------------------------------------------------


def _preset_comparisons(tree: ast.AST) -> list[int]:
    """Lines that compare something with a preset's name (``== "trec_eval"``, ``in
    ("trec_eval", "trec_eval-9")``): a rule applied by name instead of by a row."""
    names = set(PRESETS)

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
            and any(named(n) for n in (node.left, *node.comparators))]


def test_no_code_compares_a_preset_name():
    found = {str(path.relative_to(ROOT)): lines
             for path in sorted((ROOT / "rankeval").rglob("*.py"))
             if (lines := _preset_comparisons(ast.parse(path.read_text())))}
    assert found == {}


def test_the_name_check_finds_a_comparison():
    """The check above can fail: it finds both spellings of a comparison by name."""
    planted = ast.parse('if settings.compat == "trec_eval":\n    pass\n'
                        'x = compat in ("ir_measures", None)\n')
    assert _preset_comparisons(planted) == [1, 3]


@pytest.mark.parametrize("compat", sorted(PRESETS))
def test_each_preset_sets_every_row_from_its_own_column(compat):
    settings = make_settings(["ndcg"], [10], compat=compat)
    for row in TABLE:
        value = row.preset(compat)
        expected = (row.default if value is UNSET else
                    None if value is None else row.check(value))
        assert getattr(settings, row.name) == expected, (compat, row.name)
    # each preset takes its tool's order: by score, where the tool never reads ranks; RecBole's
    # lists are its exported top-K order, which their ranks carry (ties included)
    assert settings.order_by == ("rank" if compat == "recbole" else "score")


def test_a_preset_like_another_takes_its_values_where_its_column_is_silent():
    nine, ten = PRESETS["trec_eval-9"], PRESETS["trec_eval"]
    assert nine.like == ten.name
    rows = {row.name: row for row in TABLE}
    assert rows["order_by"].preset(nine.name) == rows["order_by"].preset(ten.name) == "score"
    assert rows["recall_rounding"].preset(nine.name) != rows["recall_rounding"].preset(ten.name)
    assert rows["rbp_p"].preset(nine.name) is UNSET  # 9.0.8 has no rbp


# -- trec_eval 10.0 and 9.0.8 on a CSV run whose ranks disagree with its scores -------------

def _csv_with_scrambled_ranks(folder: Path, out: Path) -> Path:
    """The TREC run of ``folder`` as a CSV with a rank column that is the reverse of the file
    order within each query (so it disagrees with the scores almost everywhere)."""
    rows = [line.split() for line in (folder / "run").read_text().splitlines()]
    run = pd.DataFrame([(q, d, float(s)) for q, _, d, _, s, _ in rows],
                       columns=["user_id", "item_id", "score"])
    run["rank"] = run.groupby("user_id").cumcount(ascending=False) + 1
    path = out / f"{folder.name}.csv"
    run[["user_id", "item_id", "rank", "score"]].to_csv(path, index=False)
    return path


def _no_runid(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("runid ")]


@pytest.mark.parametrize("version, name, flags",
                         [(v, n, f) for v, cases in CASES.items() for n, f in cases
                          if not refused(v, n, f) and n != "comments"],  # TREC files' own
                         ids=[f"{v}-{n}{slug(f)}" for v, cases in CASES.items()
                              for n, f in cases if not refused(v, n, f) and n != "comments"])
def test_trec_eval_presets_order_a_ranked_csv_by_score(run_cli, tmp_path, version, name, flags):
    """Every recorded case again, from a CSV whose rank column the preset must not read:
    the whole output equals trec_eval's (but the runid line, a TREC run's tag)."""
    folder = DATA / name
    expected = (folder / f"trec_eval-{version}{slug(flags)}.txt").read_text()
    compat = "trec_eval" if version == "10" else "trec_eval-9"
    run = _csv_with_scrambled_ranks(folder, tmp_path)
    r = run_cli("score", run, folder / "qrels", "--compat", compat, "--truth-format", "qrels",
                "-f", "trec", *_ours(flags))
    assert r.exit_code == 0, r.stderr
    theirs, ours = _known(version, name, flags, expected.splitlines(), r.stdout.splitlines())
    assert _no_runid(ours) == _no_runid(theirs)
    assert "ranks that disagree with their scores" in r.stderr


def test_the_issue_example_equals_pytrec_eval(run_cli):
    """The sample run (ranks and scores disagree for some users) under trec_eval-9: map and
    Rprec as pytrec_eval computes them from the scores."""
    preds = pd.read_csv(SAMPLE / "preds.csv", dtype={"user_id": str, "item_id": str})
    truth = pd.read_csv(SAMPLE / "truth.csv", dtype={"user_id": str, "item_id": str})
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "Rprec"}).evaluate(run)
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--compat", "trec_eval-9",
                "-m", "map,Rprec", "-f", "json")
    assert r.exit_code == 0, r.stderr
    metrics = r.json()["metrics"]
    for ours, trec in (("map@all", "map"), ("r_precision", "Rprec")):
        values = [v[trec] for v in theirs.values()]
        assert metrics[ours] == pytest.approx(sum(values) / len(values), abs=1e-12)
    # and the rank column alone (no preset) still orders the lists, as documented
    trec = ("-m", "map@all", "--ap-denominator", "relevant", "--relevance-threshold", "1",
            "--zero-relevant-users", "zero", "--skip-missing-users", "-f", "json")
    plain = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", *trec)
    ordered = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", *trec,
                      "--order-by", "score")
    assert ordered.json()["metrics"]["map@all"] == metrics["map@all"]
    assert plain.json()["metrics"]["map@all"] != metrics["map@all"]


# -- ir_measures on a run whose ranks disagree with its scores ------------------------------

@pytest.mark.parametrize("seed", [61, 62])
def test_ir_measures_preset_orders_by_score(seed):
    preds, truth = irm._data(seed)
    # ranks in the opposite order of the scores: ir_measures never reads them
    preds = preds.assign(rank=preds.groupby("user_id")["score"].rank(ascending=True,
                                                                      method="first"))
    measures = {m: tol for m, tol in irm.MEASURES.items() if tol < 1e-6}
    irm._check(measures, preds, truth)


# -- pytrec_eval (trec_eval 9.0.8) with -J, where a condensed list is empty -----------------

@pytest.mark.parametrize("seed", [71, 72, 73])
def test_an_emptied_condensed_list_is_undefined_as_in_pytrec_eval(seed):
    """A query whose retrieved documents are all unjudged: under -J its list is empty, and
    iprec at a level that needs no relevant document, and 11pt_avg, are 0/0 (NaN in
    pytrec_eval): undefined here, the mean over the other queries."""
    rng = np.random.default_rng(seed)
    queries = [f"q{q}" for q in range(40)]
    truth = pd.DataFrame([(q, f"d{d}", int(rng.integers(0, 3)))
                          for q in queries for d in rng.choice(60, 20, replace=False)],
                         columns=["user_id", "item_id", "relevance"])
    rows = []
    for i, q in enumerate(queries):
        judged = set(truth.item_id[truth.user_id == q])
        pool = [f"d{d}" for d in range(60, 90)] if i % 5 == 0 else [f"d{d}" for d in range(60)]
        docs = [d for d in rng.permutation(pool)[:15] if i % 5 or d not in judged]
        rows += [(q, d, float(s)) for d, s in zip(docs, rng.random(len(docs)), strict=True)]
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels, run = as_dicts(preds, truth)
    measures = {"iprec_at_recall", "11pt_avg", "P_5", "map", "set_P"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures,
                                            judged_docs_only_flag=True).evaluate(run)
    ev = evaluate(preds, truth, sorted(measures), compat="trec_eval-9", judged_only=True)
    table = ev.per_user.set_index("user_id")
    columns = {"iprec_at_recall_0.00": "iprec@0.0", "iprec_at_recall_0.50": "iprec@0.5",
               "11pt_avg": "iprec_11pt", "P_5": "precision@5", "map": "map@all",
               "set_P": "set_precision"}
    nans = 0
    for q, values in theirs.items():
        for name, column in columns.items():
            if math.isnan(values[name]):
                assert math.isnan(table.loc[q, column]), (q, name)
                nans += 1
            else:
                assert table.loc[q, column] == pytest.approx(values[name], abs=1e-12)
    assert nans >= 2 * 8  # 8 emptied queries, two measures each
    mean = np.nanmean([v["11pt_avg"] for v in theirs.values()])
    assert ev.metrics["iprec_11pt"] == pytest.approx(mean, abs=1e-12)
    assert any(n.code == "not_scored" and n.params["metric"] == "iprec_11pt"
               for n in ev.notices)
