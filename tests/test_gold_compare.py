"""``compare --gold`` and ``rankeval.compare(gold=...)`` (#48 item 2, SPEC §12): each run's
difference from the baseline estimated by PPI++ from per-query differences, against ppi_py on
the per-query values rankeval computes under each judgments, the correction over a metric's
tests against statsmodels, the disagreement with the machine-only comparison, every report
format, and the input errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_pval
from statsmodels.stats.multitest import multipletests

import rankeval
from rankeval.analysis.ppi import Interval, PPIEstimate
from rankeval.results.gold import GoldDifference

from .conftest import ROOT

DATA = ROOT / "sample_data"
BM25, LLM, MACHINE, HUMAN = (str(DATA / n) for n in (
    "judged_bm25.run", "judged_llm.run", "judged_llm.qrels", "judged_human.qrels"))
METRICS = ["ndcg@10", "precision@5"]


def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"JSON holds {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def third_run(tmp_path_factory) -> str:
    """A third run: llm's lists with the first two items swapped on every other query."""
    frame = pd.read_csv(LLM, sep=r"\s+", header=None, dtype={0: str, 2: str})
    frame.columns = ["q", "Q0", "doc", "rank", "score", "tag"]
    odd = frame["q"].rank(method="dense").astype(int) % 2 == 1
    swap = odd & frame["rank"].isin([1, 2])
    frame.loc[swap, "rank"] = 3 - frame.loc[swap, "rank"]
    frame["score"] = -frame["rank"]
    path = tmp_path_factory.mktemp("runs") / "mixed.run"
    frame.to_csv(path, sep=" ", header=False, index=False)
    return str(path)


def _per_query(run: str, truth: str, metric: str) -> pd.Series:
    per = rankeval.evaluate(run, truth, metric).per_user
    return per.set_index(per["user_id"].astype(str))[metric]


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
def test_each_difference_is_ppi_py_on_the_paired_differences(third_run, lam):
    """Per candidate and metric: ppi_py's point estimate, interval and p-value on the
    per-query differences (human on the gold queries, machine on every query), to 1e-9;
    the p-values adjusted by holm over the metric's two tests as statsmodels adjusts them."""
    runs = {"bm25": BM25, "llm": LLM, "mixed": third_run}
    result = rankeval.compare(runs, MACHINE, METRICS, gold=HUMAN, ppi_lambda=lam)
    gold_queries = {line.split()[0] for line in Path(HUMAN).read_text().splitlines()}
    assert result.gold.gold_queries == 50 and len(result.gold.differences) == 4
    for metric in METRICS:
        machine = {n: _per_query(p, MACHINE, metric) for n, p in runs.items()}
        human = {n: _per_query(p, HUMAN, metric) for n, p in runs.items()}
        p_values = []
        for name in ("llm", "mixed"):
            a = machine[name] - machine["bm25"]
            h = human[name] - human["bm25"]
            gold = a.index.isin(list(gold_queries))
            h_gold = h.reindex(a.index[gold]).to_numpy()
            args = (h_gold, a[gold].to_numpy(), a[~gold].to_numpy())
            d = next(x for x in result.gold.differences if x.run == name and x.metric == metric)
            e = d.estimate.ppi
            assert e.value == pytest.approx(float(np.squeeze(
                ppi_mean_pointestimate(*args, lam=lam))), abs=1e-9)
            low, high = ppi_mean_ci(*args, alpha=0.05, lam=lam)
            assert (e.low, e.high) == pytest.approx((float(np.squeeze(low)),
                                                     float(np.squeeze(high))), abs=1e-9)
            want_p = float(np.squeeze(ppi_mean_pval(*args, lam=lam)))
            assert d.p_value == pytest.approx(want_p, abs=1e-9)
            p_values.append(want_p)
            cell = result.cell(name, metric)
            assert d.machine_delta == cell.stats.delta
            assert d.machine_significant == cell.significant
            assert (d.estimate.gold_queries, d.estimate.other_queries) == (50, 200)
        adjusted = multipletests(p_values, method="holm")[1]
        got = [d.p_adjusted for d in result.gold.differences if d.metric == metric]
        assert got == pytest.approx(list(adjusted), abs=1e-12)
        assert [d.significant for d in result.gold.differences if d.metric == metric] == [
            bool(p < 0.05) for p in adjusted]


def test_the_sample_world_reverses_sign_and_significance():
    """On the generated world the judge favours llm: the machine judgments put llm above
    bm25 on ndcg@10, PPI puts it significantly below (the true order, make_judged.py)."""
    result = rankeval.compare({"bm25": BM25, "llm": LLM}, MACHINE, "ndcg@10", gold=HUMAN)
    (d,) = result.gold.differences
    assert d.machine_delta > 0 and d.estimate.ppi.high < 0
    assert d.significant is True and d.machine_significant is False
    assert d.disagreement == ("sign", "significance")
    assert result.gold.disagreements == [d]


def test_the_gates_judge_the_ppi_differences(run_cli):
    """Under --gold, compare's gates judge what the gold sample says, as score's do: on the
    sample world the judge favours llm, so the machine judgments alone pass llm against
    bm25 and the PPI++ differences fail it; --non-inferior's bound is ppi_py's (1 - 2 alpha)
    interval on the per-query differences; a metric without a PPI estimate (gm_map, not a
    mean over queries) is judged on the machine judgments alone and says so."""
    runs = {"bm25": BM25, "llm": LLM}
    margin = "ndcg@10=0.01"
    machine = rankeval.compare(runs, MACHINE, "ndcg@10", fail_if_worse=True,
                               non_inferior=margin)
    gold = rankeval.compare(runs, MACHINE, "ndcg@10,gm_map@10", gold=HUMAN,
                            fail_if_worse=True, non_inferior=[margin, "gm_map@10=5"])
    assert [g.passed for g in machine.gates] == [True, True]
    ni, corpus, worse = gold.gates
    assert not ni.passed and not worse.passed and corpus.passed
    assert "PPI++" in ni.judged_by and "machine judgments alone" in corpus.judged_by
    (d,) = [d for d in gold.gold.differences if d.metric == "ndcg@10"]
    assert worse.worse == (d,) and worse.to_dict()["worse"][0]["judged_by"] == "ppi"
    gold_queries = {line.split()[0] for line in Path(HUMAN).read_text().splitlines()}
    a = _per_query(LLM, MACHINE, "ndcg@10") - _per_query(BM25, MACHINE, "ndcg@10")
    h = _per_query(LLM, HUMAN, "ndcg@10") - _per_query(BM25, HUMAN, "ndcg@10")
    inside = a.index.isin(list(gold_queries))
    low, high = ppi_mean_ci(h.reindex(a.index[inside]).to_numpy(), a[inside].to_numpy(),
                            a[~inside].to_numpy(), alpha=2 * 0.05)
    assert (ni.low, ni.high) == pytest.approx((float(np.squeeze(low)),
                                               float(np.squeeze(high))), abs=1e-9)
    assert ni.low < -0.01  # why it fails
    args = ("compare", BM25, LLM, MACHINE, "-m", "ndcg@10", "--fail-if-worse")
    assert run_cli(*args).exit_code == 0
    failed = run_cli(*args, "--gold", HUMAN)
    assert failed.exit_code == 1 and "PPI++" in failed.stdout


def _difference(ppi: float, machine: float, significant, machine_significant):
    interval = Interval(ppi, 0.01, ppi - 0.02, ppi + 0.02)
    estimate = PPIEstimate(interval, 0.5, interval, interval, interval, 50, 200, 60.0)
    return GoldDifference("r", "b", "m", estimate, 0.01, 0.01, significant, machine,
                          machine_significant)


@pytest.mark.parametrize("ppi, machine, sig, msig, want", [
    (0.1, 0.2, True, True, ()), (0.1, -0.2, True, True, ("sign",)),
    (0.1, 0.2, True, False, ("significance",)), (-0.1, 0.2, False, True,
                                                 ("sign", "significance")),
    (0.1, math.nan, True, None, ()), (0.1, 0.2, None, True, ()),
    (0.0, 0.2, False, False, ("sign",))])
def test_disagreement_is_on_sign_or_significance(ppi, machine, sig, msig, want):
    assert _difference(ppi, machine, sig, msig).disagreement == want


def test_every_compare_format_shows_the_ppi_comparison(run_cli, tmp_path, monkeypatch):
    base = ["compare", BM25, LLM, MACHINE, "-m", "ndcg@10", "--gold", HUMAN]
    table = run_cli(*base)
    assert table.exit_code == 0, table.stderr
    out = table.stdout
    assert "Differences from the baseline with the gold sample" in out
    assert "disagree on sign and significance: judged_llm on ndcg@10" in out
    assert "assumption:" in out and "uniform random sample" in out
    doc = _strict(run_cli(*base, "-f", "json").stdout)["gold"]
    (d,) = doc["differences"]
    assert d["disagreement"] == ["sign", "significance"] and doc["disagreements"] == 1
    assert d["significant"] is True and d["machine_significant"] is False
    assert d["ppi"]["high"] < 0 < d["machine_delta"]
    rows = [line.split(",") for line in run_cli(*base, "-f", "csv").stdout.splitlines()]
    (ppi_row,) = [r for r in rows if r[1] == "ndcg@10[ppi]"]
    assert float(ppi_row[4]) == pytest.approx(d["ppi"]["value"], abs=1e-12)
    assert ppi_row[9] == "True" and ppi_row[-1] == "judged_bm25"
    markdown = run_cli(*base, "-f", "markdown").stdout
    assert "| run | metric | machine | machine significant | PPI |" in markdown
    assert "disagree on sign and significance" in markdown
    html = tmp_path / "report.html"
    assert run_cli(*base, "-f", "html", "-o", html).exit_code == 0
    page = html.read_text()
    assert 'id="gold"' in page and 'id="gold-chart"' in page and "<svg" in page
    assert "disagree on sign and significance" in page
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run_cli(*base).exit_code == 0
    assert "| run | metric | machine | machine significant | PPI |" in summary.read_text()


def test_without_gold_the_report_is_unchanged(run_cli):
    r = run_cli("compare", BM25, LLM, MACHINE, "-m", "ndcg@10", "-f", "json")
    assert "gold" not in _strict(r.stdout)
    assert "gold sample" not in run_cli("compare", BM25, LLM, MACHINE, "-m", "ndcg@10").stdout


def _bad(tmp_path) -> dict[str, tuple[list[str], str]]:
    stray = tmp_path / "stray.qrels"
    stray.write_text("nosuchquery 0 d1 1\n")
    return {
        "lambda without gold": (["--ppi-lambda", "0.5"], "--gold FILE"),
        "strata without gold": (["--gold-strata", "s"], "--gold FILE"),
        "lambda out of range": (["--gold", HUMAN, "--ppi-lambda", "2"], "--ppi-lambda"),
        "gold not a subset": (["--gold", str(stray)], "not in the truth"),
        "no such gold file": (["--gold", str(tmp_path / "missing.qrels")], "missing.qrels"),
        "output over the gold file": (["--gold", HUMAN, "-o", HUMAN], HUMAN),
        "strata column missing": (["--gold", HUMAN, "--gold-strata", "topic"], "topic"),
    }


CASES = ["lambda without gold", "strata without gold", "lambda out of range",
         "gold not a subset", "no such gold file", "output over the gold file",
         "strata column missing"]


@pytest.mark.parametrize("case", CASES)
def test_bad_gold_input_is_one_line_and_exit_2(run_cli, tmp_path, case):
    cases = _bad(tmp_path)
    assert sorted(cases) == sorted(CASES)
    args, said = cases[case]
    before = Path(HUMAN).read_bytes()
    r = run_cli("compare", BM25, LLM, MACHINE, "-m", "ndcg@10", *args)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rankeval: error:"), lines
    assert said in r.stderr and "Traceback" not in r.stderr
    assert Path(HUMAN).read_bytes() == before


def test_strata_are_stratified_ppi_on_the_differences(tmp_path):
    """--gold-strata: each difference is stratified PPI (the analysis function, itself
    checked against ppi_py per stratum in test_gold) on the per-query differences."""
    from rankeval.analysis.ppi import stratified_ppi_mean

    from .test_gold import judged_csv

    _, machine, _ = judged_csv(tmp_path)
    result = rankeval.compare({"bm25": BM25, "llm": LLM}, str(machine), "ndcg@10", gold=HUMAN,
                              gold_strata="topic")
    (d,) = result.gold.differences
    assert [s.name for s in d.estimate.strata] == ["a", "b"]
    topic = pd.read_csv(machine, dtype=str).groupby("user_id")["topic"].first()
    a = _per_query(LLM, str(machine), "ndcg@10") - _per_query(BM25, str(machine), "ndcg@10")
    h = _per_query(LLM, HUMAN, "ndcg@10") - _per_query(BM25, HUMAN, "ndcg@10")
    gold = a.index.isin(h.index)
    want = stratified_ppi_mean(h.reindex(a.index[gold]).to_numpy(), a[gold].to_numpy(),
                               a[~gold].to_numpy(), topic[a.index[gold]].to_numpy(),
                               topic[a.index[~gold]].to_numpy())
    assert d.estimate.ppi.value == pytest.approx(want.ppi.value, abs=1e-12)
    assert d.estimate.ppi.se == pytest.approx(want.ppi.se, abs=1e-12)
    assert "stratified" in result.gold.method and "topic" in result.gold.assumption


def test_in_memory_runs_and_judgments():
    """Tables, not paths (a DataFrame is never taken for standard input): the same
    differences as from the files."""
    def frame(path, names):
        return pd.read_csv(path, sep=r"\s+", header=None, names=names, dtype=str)

    runs = {n: frame(p, ["user_id", "q0", "item_id", "rank", "score", "tag"])[
        ["user_id", "item_id", "score"]].astype({"score": float})
        for n, p in (("bm25", BM25), ("llm", LLM))}
    qrels = [frame(p, ["user_id", "it", "item_id", "relevance"])[
        ["user_id", "item_id", "relevance"]].astype({"relevance": int}) for p in (MACHINE, HUMAN)]
    tables = rankeval.compare(runs, qrels[0], "ndcg@10", gold=qrels[1])
    files = rankeval.compare({"bm25": BM25, "llm": LLM}, MACHINE, "ndcg@10", gold=HUMAN)
    assert tables.gold.differences[0].estimate.ppi.value == pytest.approx(
        files.gold.differences[0].estimate.ppi.value, abs=1e-12)


def test_the_differences_chart_says_what_it_draws(run_cli, tmp_path):
    """compare --gold's chart draws differences: its axis said "mean over the queries" and it
    had no line at 0, where the sign of a difference turns."""
    html = tmp_path / "report.html"
    assert run_cli("compare", BM25, LLM, MACHINE, "-m", "ndcg@10", "--gold", HUMAN, "-f",
                   "html", "-o", html).exit_code == 0
    chart = html.read_text().split('id="gold-chart"', 1)[1].split("</figure>", 1)[0]
    assert "difference from the baseline (run - baseline)" in chart
    assert "mean over the queries" not in chart
