"""``rankeval agree`` and ``rankeval.agree`` (#48 item 3): agreement of machine-judged qrels
with human qrels, on labels and on system orderings.

Oracles: scikit-learn's cohen_kappa_score (every weighting), the ``krippendorff`` package
(nominal, ordinal, interval), scipy's kendalltau / spearmanr / pearsonr, tau_AP by brute force
from its definition, compare's paired test; and a small example worked by hand.
"""

from __future__ import annotations

import itertools
import json
import math
import re

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, precision_score, recall_score

from rankeval import agree
from rankeval.analysis.agreement import labels, tau_ap
from rankeval.analysis.significance import compare as paired
from rankeval.cli import cli
from rankeval.notices import TEMPLATES

from .conftest import ROOT


def _graded(seed: int, n: int = 400, top: int = 3, gap: bool = False):
    """Human grades 0..top and a noisy machine that overrates: many ties, every grade used
    (``gap``: one grade left out by both sides, so that distances are not indices)."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, top + 1, n).astype(float)
    m = np.clip(h + rng.choice([-1, 0, 0, 1, 1], n), 0, top).astype(float)
    if gap:
        h[h == 1], m[m == 1] = 0.0, 0.0
    return h, m


# --- labels against the oracles ---------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gap", [False, True])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_is_scikit_learns(seed, gap, weights):
    h, m = _graded(seed, gap=gap)
    got = labels(h, m).kappa[weights or "unweighted"]
    # the grades' own values weigh a disagreement: every grade of the scale as a label
    want = cohen_kappa_score(h, m, weights=weights, labels=[0, 1, 2, 3])
    assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_is_the_krippendorff_packages(seed, level):
    h, m = _graded(seed, top=4)
    want = krippendorff.alpha(reliability_data=np.vstack([h, m]), level_of_measurement=level)
    assert labels(h, m).alpha[level] == pytest.approx(want, abs=1e-12)


def test_alpha_leaves_out_the_units_one_side_judged():
    """Krippendorff's alpha drops units with one value (not pairable): the package given
    the one-sided pairs as missing agrees with alpha over the pairs both judged."""
    h, m = _graded(7)
    extra = np.full(50, np.nan)
    data = np.vstack([np.concatenate([h, np.arange(50) % 4]), np.concatenate([m, extra])])
    for level in ("nominal", "ordinal", "interval"):
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert labels(h, m).alpha[level] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("threshold", [None, 1.0, 2.0, 3.0])
def test_precision_and_recall_are_scikit_learns(threshold):
    h, m = _graded(3)
    result = labels(h, m, threshold)
    rel = (lambda x: x > 0) if threshold is None else (lambda x: x >= threshold)
    assert result.binary.precision == pytest.approx(precision_score(rel(h), rel(m)))
    assert result.binary.recall == pytest.approx(recall_score(rel(h), rel(m)))
    assert result.binary.kappa == pytest.approx(cohen_kappa_score(rel(h), rel(m)))
    per = precision_score(h, m, average=None, labels=[0, 1, 2, 3])
    back = recall_score(h, m, average=None, labels=[0, 1, 2, 3])
    assert [g.precision for g in result.per_grade] == pytest.approx(list(per))
    assert [g.recall for g in result.per_grade] == pytest.approx(list(back))


def test_a_small_example_by_hand():
    """Five pairs: human 0 0 1 2 2, machine 0 1 1 1 2."""
    r = labels(np.array([0, 0, 1, 2, 2.0]), np.array([0, 1, 1, 1, 2.0]))
    assert r.confusion.tolist() == [[1, 1, 0], [0, 1, 0], [0, 1, 1]]
    # p_o = 3/5; the margins 2 1 2 and 1 3 1 give p_e = (2 + 3 + 2) / 25 = 7/25
    assert r.observed == pytest.approx(0.6)
    assert r.kappa["unweighted"] == pytest.approx((0.6 - 7 / 25) / (1 - 7 / 25))  # 4/9
    # linear: two pairs one grade apart, 2/5; by chance sum |i - j| r_i c_j / 25 with rows
    # 2 1 2 and columns 1 3 1: (6 + 4 + 1 + 1 + 4 + 6) / 25 = 22/25; 1 - (2/5) / (22/25)
    assert r.kappa["linear"] == pytest.approx(6 / 11)
    assert r.binary.tp == 3 and r.binary.fp == 1 and r.binary.fn == 0 and r.binary.tn == 1
    assert r.binary.precision == pytest.approx(0.75) and r.binary.recall == 1.0
    assert (r.machine_higher, r.machine_lower) == (1, 1)


def test_one_grade_everywhere_is_undefined_with_a_reason():
    r = labels(np.ones(10), np.ones(10))
    assert math.isnan(r.kappa["unweighted"]) and math.isnan(r.alpha["ordinal"])
    assert "kappa.unweighted" in r.undefined and "krippendorff_alpha.ordinal" in r.undefined
    assert math.isnan(r.binary.kappa) and "at_threshold.kappa" in r.undefined


# --- system orderings -------------------------------------------------------------------------

def _tau_ap_brute(reference, other) -> float:
    """Yilmaz et al.'s definition, one item at a time: for each rank i > 1 of ``other``'s
    ordering, the share of the items above it that ``reference`` also puts above it."""
    order = sorted(range(len(other)), key=lambda i: -other[i])
    n = len(order)
    total = 0.0
    for i in range(1, n):
        correct = sum(reference[order[j]] > reference[order[i]] for j in range(i))
        total += correct / i
    return 2 / (n - 1) * total - 1


@pytest.mark.parametrize("seed", range(20))
def test_tau_ap_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 15))
    x = rng.permutation(n) + rng.random(n) * 0.1
    y = x + rng.normal(0, 2, n)
    assert tau_ap(x, y) == pytest.approx(_tau_ap_brute(x, y), abs=1e-12)


def test_tau_ap_extremes_and_ties():
    x = np.arange(6.0)
    assert tau_ap(x, x) == 1.0 and tau_ap(x, -x) == -1.0
    assert math.isnan(tau_ap(np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])))


# --- the library and the command on files -----------------------------------------------------

def _world(tmp_path, seed: int = 0, runs: int = 5, queries: int = 30):
    """Human and machine qrels over the same pool (with grades tied and a few pairs judged
    by one side only), and runs ranking the pool."""
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}") for q in range(queries) for d in range(12)]
    frame = pd.DataFrame(rows, columns=["query", "docid"])
    h = rng.integers(0, 4, len(frame))
    m = np.clip(h + rng.choice([-1, 0, 0, 1, 1], len(frame)), 0, 3)
    human = frame.assign(relevance=h).iloc[: len(frame) - 7]  # 7 pairs the machine alone
    machine = frame.assign(relevance=m).iloc[5:]  # 5 pairs the human alone
    paths = {"human": tmp_path / "human.csv", "machine": tmp_path / "machine.csv"}
    human.to_csv(paths["human"], index=False)
    machine.to_csv(paths["machine"], index=False)
    run_paths = []
    for r in range(runs):
        score = h + rng.normal(0, 1.0 + r, len(frame))
        run = frame.assign(score=score).sort_values(["query", "score"], ascending=[True, False])
        run["rank"] = run.groupby("query").cumcount() + 1
        path = tmp_path / f"run{r}.csv"
        run[["query", "docid", "rank"]].to_csv(path, index=False)
        run_paths.append(path)
    return paths, run_paths, h[5: len(frame) - 7], m[5: len(frame) - 7]


def test_the_library_against_the_oracles(tmp_path):
    paths, runs, h, m = _world(tmp_path)
    result = agree(str(paths["human"]), str(paths["machine"]), [str(p) for p in runs],
                   ["ndcg@10", "map@5"], relevance_threshold=2)
    c = result.coverage
    assert (c.pairs_both, c.pairs_human_only, c.pairs_machine_only) == (len(h), 5, 7)
    assert result.labels.kappa["quadratic"] == pytest.approx(
        cohen_kappa_score(h, m, weights="quadratic", labels=[0, 1, 2, 3]))
    assert result.labels.binary.precision == pytest.approx(precision_score(h >= 2, m >= 2))
    from rankeval import evaluate

    for o in result.orderings:
        # each run's value: what score gives under each qrels (every query shared here)
        for r, path in enumerate(runs):
            for side, values in (("human", o.human), ("machine", o.machine)):
                ev = evaluate(str(path), str(paths[side]), o.metric, relevance_threshold=2)
                assert values[r] == pytest.approx(ev.metrics[o.metric], abs=1e-12)
        x, y = np.array(o.human), np.array(o.machine)
        assert o.kendall_tau == pytest.approx(stats.kendalltau(x, y).statistic)
        assert o.spearman == pytest.approx(stats.spearmanr(x, y).statistic)
        assert o.tau_ap == pytest.approx(_tau_ap_brute(x, y))
        swapped = {(a, b) for a, b in itertools.permutations(range(len(x)), 2)
                   if x[a] > x[b] and y[a] < y[b]}
        assert {(int(s.above[3:]), int(s.below[3:])) for s in o.swaps} == swapped


def test_swaps_use_compares_test_and_correction(tmp_path):
    paths, runs, _, _ = _world(tmp_path, seed=3, runs=6)
    result = agree(paths["human"], paths["machine"], runs, "ndcg@10", correction="none")
    o = result.ordering("ndcg@10")
    from rankeval import evaluate

    per = {f"run{r}": evaluate(str(p), str(paths["human"]), "ndcg@10").values("ndcg@10")
           for r, p in enumerate(runs)}
    for s in o.swaps:
        assert s.p_value == pytest.approx(paired(per[s.above], per[s.below]).p_value)
        assert s.p_adjusted == s.p_value
        assert s.significant == (s.p_value < 0.05)


def test_per_query_correlation_is_scipys(tmp_path):
    paths, runs, _, _ = _world(tmp_path, seed=5)
    result = agree(paths["human"], paths["machine"], runs, "ndcg@10")
    from rankeval import evaluate

    h = np.concatenate([evaluate(str(p), str(paths["human"]), "ndcg@10").values("ndcg@10")
                        for p in runs])
    m = np.concatenate([evaluate(str(p), str(paths["machine"]), "ndcg@10").values("ndcg@10")
                        for p in runs])
    o = result.ordering("ndcg@10")
    assert o.query_pearson == pytest.approx(stats.pearsonr(h, m).statistic)
    assert o.query_spearman == pytest.approx(stats.spearmanr(h, m).statistic)


@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "table"])
def test_every_format(run_cli, tmp_path, fmt):
    paths, runs, _, _ = _world(tmp_path, runs=3)
    r = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m", "ndcg@10",
                "-f", fmt, "-q")
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        doc = json.loads(r.stdout)  # strict JSON: no NaN
        assert doc["pairs"]["human_only"] == 5 and doc["metrics"][0]["metric"] == "ndcg@10"
        assert "NaN" not in r.stdout
    elif fmt == "csv":
        frame = pd.read_csv(__import__("io").StringIO(r.stdout))
        assert list(frame.columns) == ["section", "metric", "subject", "statistic", "value"]
        assert "kappa_quadratic" in set(frame.statistic)
    else:
        assert "kappa (quadratic)" in r.stdout and "Kendall" in r.stdout


def test_undefined_values_are_null_with_a_reason(run_cli, tmp_path):
    """Every pair graded 1 on both sides: kappa undefined, null in JSON and why."""
    (tmp_path / "h.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,1\n")
    (tmp_path / "m.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,1\n")
    r = run_cli("agree", tmp_path / "h.csv", tmp_path / "m.csv", "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["labels"]["kappa"]["unweighted"] is None
    assert "chance agreement" in doc["labels"]["undefined"]["kappa.unweighted"]


def test_runs_after_one_flag_or_repeated(run_cli, tmp_path):
    paths, runs, _, _ = _world(tmp_path, runs=3)
    one = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m",
                  "ndcg@10", "-f", "json", "-q")
    each = run_cli("agree", paths["human"], paths["machine"], *itertools.chain.from_iterable(
        ("--runs", p) for p in runs), "-m", "ndcg@10", "-f", "json", "-q")
    assert one.exit_code == each.exit_code == 0
    assert json.loads(one.stdout)["runs"] == json.loads(each.stdout)["runs"]
    assert len(json.loads(one.stdout)["runs"]) == 3


def test_stdin_and_output_file(run_cli, tmp_path):
    paths, _, _, _ = _world(tmp_path)
    out = tmp_path / "agree.json"
    r = run_cli("agree", paths["human"], "-", "--truth-format", "csv", "-f", "json", "-o",
                out, "-q", input=paths["machine"].read_text())
    assert r.exit_code == 0, r.stderr
    assert json.loads(out.read_text())["pairs"]["machine_only"] == 7


BAD = [  # (human, machine, what the one line says)
    ("query,docid,relevance\nq1,d1,1\n", "query,docid,relevance\nq2,d1,1\n",
     "shares no judged (query, item) pair"),
    ("query,docid,relevance\nq1,d1,1\nq1,d1,2\n", "query,docid,relevance\nq1,d1,1\n",
     "listed more than once"),
    ("query,docid,relevance\nq1,d1,x\n", "query,docid,relevance\nq1,d1,1\n", "relevance"),
]


@pytest.mark.parametrize(("human", "machine", "said"), BAD)
def test_bad_input_is_one_line_exit_2(run_cli, tmp_path, human, machine, said):
    (tmp_path / "h.csv").write_text(human)
    (tmp_path / "m.csv").write_text(machine)
    r = run_cli("agree", tmp_path / "h.csv", tmp_path / "m.csv")
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error:") and said in lines[0]


def test_different_grade_scales_are_said(run_cli, tmp_path):
    (tmp_path / "h.csv").write_text("query,docid,relevance\nq1,d1,3\nq1,d2,0\nq1,d3,1\n")
    (tmp_path / "m.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,0\nq1,d3,1\n")
    r = run_cli("agree", tmp_path / "h.csv", tmp_path / "m.csv")
    assert r.exit_code == 0
    assert "use different grades" in r.stderr


def test_a_corpus_metric_is_refused(run_cli, tmp_path):
    paths, runs, _, _ = _world(tmp_path, runs=2)
    r = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m",
                "coverage@10")
    assert r.exit_code == 2 and "corpus-level" in r.stderr


def test_every_option_is_on_the_page():
    """In the page's help (generated from the CLI: docs/generate.py) or its prose."""
    page = (ROOT / "docs" / "commands" / "agree.md").read_text()
    for param in [p for p in cli.commands["agree"].params if not getattr(p, "hidden", False)]:
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("-") and opt not in ("--help", "-h"):
                assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", page), opt


# --- the HTML page, the step summary, config keys, notices (#48 item 3's leftovers) ---------

def test_html_page_has_the_heat_table_and_the_orderings(run_cli, tmp_path):
    """--html FILE beside the table, and -f html: the confusion matrix as a heat table, each
    cell shaded by its share of its human grade's row, the diagonal outlined; the orderings,
    each metric's runs and the warnings."""
    paths, runs, _, _ = _world(tmp_path, runs=3)
    page = tmp_path / "agree.html"
    r = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m", "ndcg@10",
                "--html", page, "-q")
    assert r.exit_code == 0, r.stderr
    assert "Kendall" in r.stdout  # the table still on stdout
    text = page.read_text()
    result = agree(str(paths["human"]), str(paths["machine"]), [str(p) for p in runs],
                   "ndcg@10")
    confusion = result.labels.confusion
    heat = text[text.index('id="confusion-heat"'):]
    heat = heat[:heat.index("</table>")]
    shades = [float(x) for x in re.findall(r"rgba\(31,119,180,([0-9.]+)\)", heat)]
    want = (confusion / confusion.sum(axis=1, keepdims=True)).ravel()
    assert shades == pytest.approx(want.tolist(), abs=5e-4)
    assert heat.count("outline:2px") == len(result.labels.grades)
    assert "System orderings, human against machine" in text and "ndcg@10 under each qrels" in text
    assert "judged by the human qrels alone" in text  # the warnings section
    also = run_cli("agree", paths["human"], paths["machine"], "-f", "html", "-q")
    assert also.exit_code == 0 and 'id="confusion-heat"' in also.stdout


def test_html_over_an_input_is_refused(run_cli, tmp_path):
    paths, _, _, _ = _world(tmp_path)
    before = paths["human"].read_bytes()
    r = run_cli("agree", paths["human"], paths["machine"], "--html", paths["human"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "--html" in r.stderr
    assert paths["human"].read_bytes() == before


def test_github_step_summary(run_cli, tmp_path, monkeypatch):
    paths, runs, _, _ = _world(tmp_path, runs=2)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m", "ndcg@10",
                "-q")
    assert r.exit_code == 0, r.stderr
    written = summary.read_text()
    assert "Cohen's kappa (quadratic)" in written and "| metric | runs |" in written


def test_config_keys_are_read(run_cli, tmp_path):
    """agree reads its own keys from a configuration file and leaves score's to it."""
    paths, runs, _, _ = _world(tmp_path, runs=2)
    config = tmp_path / "rankeval.toml"
    config.write_text('[tool.rankeval]\ntest = "wilcoxon"\nrelevance_threshold = 2\n'
                      'correction = "bonferroni"\nfail_under = ["ndcg@10=0.1"]\n')
    r = run_cli("agree", paths["human"], paths["machine"], "--runs", *runs, "-m", "ndcg@10",
                "--config", config, "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["test"]["test"] == "wilcoxon" and doc["test"]["correction"] == "bonferroni"
    assert doc["labels"]["at_threshold"]["threshold"] == 2


def _notice_worlds(tmp_path) -> dict[str, tuple[list, str]]:
    """One input per warning agree can give: (arguments, its code)."""
    (tmp_path / "h.csv").write_text("query,docid,relevance\nq1,d1,3\nq1,d2,0\nq1,d3,1\n")
    (tmp_path / "m.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,0\nq1,d3,1\n")
    (tmp_path / "h2.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,0\nq1,d9,1\n")
    (tmp_path / "m2.csv").write_text("query,docid,relevance\nq1,d1,1\nq1,d2,0\nq1,d8,1\n")
    return {
        "agree_grades_differ": ([tmp_path / "h.csv", tmp_path / "m.csv"], "different grades"),
        "agree_pairs_one_side": ([tmp_path / "h2.csv", tmp_path / "m2.csv"],
                                 "judged by the human qrels alone"),
        "agree_queries_beyond": (  # the docs' example: queries only one side judged
            [SAMPLE_AGREE / "agree_human.csv", SAMPLE_AGREE / "agree_machine.csv", "--runs",
             *(SAMPLE_AGREE / f"agree_{n}.csv" for n in ("bm25", "dense", "llm")), "-m",
             "ndcg@10"], "left out of the system orderings"),
    }


SAMPLE_AGREE = ROOT / "sample_data"
AGREE_CODES = [c for c in TEMPLATES if c.startswith("agree_")]


@pytest.mark.parametrize("code", AGREE_CODES)
def test_every_warning_is_a_notice_with_its_code(run_cli, tmp_path, code):
    worlds = _notice_worlds(tmp_path)
    assert sorted(worlds) == sorted(AGREE_CODES)
    args, said = worlds[code]
    r = run_cli("agree", *args, "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    (notice,) = [n for n in doc["notices"] if n["code"] == code][:1]
    assert said in notice["message"] and notice["message"] in doc["warnings"]
    assert f"rankeval: warning: {notice['message']}" in r.stderr.splitlines()
    quiet = run_cli("agree", *args, "-f", "json", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
