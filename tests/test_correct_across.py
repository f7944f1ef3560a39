"""The family a multiple-testing correction spans (#52 item 3): ``--correct-across pairs``
(each metric@K its own family, as before) or ``metrics`` (every test of every metric and K of
a report at once), in ``compare`` (the baseline's tests, the segments, ``--all-pairs``,
``--gold``) and ``agree`` (the swaps); the adjusted p-values are statsmodels'
``multipletests`` over the family, the family is named in every report, and the gates use it.
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from rankeval import agree, compare
from rankeval.analysis.significance import correct_within

from .conftest import SAMPLE

TRUTH = SAMPLE / "truth.csv"
RUNS = [SAMPLE / "preds.csv", SAMPLE / "popular.csv"]
# statsmodels' names of rankeval's corrections
METHODS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}
# popular is worse than preds on map@3 (raw p 0.031) and not on precision@3 (p 0.29): alone,
# map@3 is significant; with precision@3 in its family, Holm's 2 x 0.031 is not
TWO = ["-m", "map@3", "-m", "precision@3"]


def _oracle(p: np.ndarray, method: str) -> np.ndarray:
    return multipletests(p, method=METHODS[method])[1]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_families_are_corrected_apart_as_statsmodels_does(method):
    rng = np.random.default_rng(7)
    p = rng.uniform(0, 0.2, 60) ** 2
    p[[3, 17]] = np.nan  # undefined tests stay undefined and out of their family
    families = rng.integers(0, 4, 60).tolist()
    got = np.asarray(correct_within(p.tolist(), families, method))
    assert np.isnan(got[[3, 17]]).all()
    for f in set(families):
        members = (np.asarray(families) == f) & ~np.isnan(p)
        np.testing.assert_allclose(got[members], _oracle(p[members], method), rtol=1e-12)
    one = np.asarray(correct_within(p.tolist(), [""] * 60, method))
    defined = ~np.isnan(p)
    np.testing.assert_allclose(one[defined], _oracle(p[defined], method), rtol=1e-12)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_compare_across_metrics_is_one_family(method):
    runs = {"main": SAMPLE / "preds.csv", "popular": SAMPLE / "popular.csv",
            "same": SAMPLE / "preds.parquet"}
    kw = dict(correction=method)
    per = compare(runs, TRUTH, ["ndcg", "map", "recall"], [1, 3, 10], **kw)
    joint = compare(runs, TRUTH, ["ndcg", "map", "recall"], [1, 3, 10],
                    correct_across="metrics", **kw)
    raw = np.array([c.stats.p_value for c in joint.cells])
    assert [c.stats.p_value for c in per.cells] == raw.tolist()  # the same tests
    np.testing.assert_allclose([c.p_adjusted for c in joint.cells], _oracle(raw, method),
                               rtol=1e-12)
    for metric in per.metrics:  # today's family: the runs of one metric@K
        mine = [c for c in per.cells if c.metric == metric]
        np.testing.assert_allclose([c.p_adjusted for c in mine],
                                   _oracle(np.array([c.stats.p_value for c in mine]), method),
                                   rtol=1e-12)
    assert joint.options["correct_across"] == "metrics"
    assert per.options["correct_across"] == "pairs"


def test_the_verdict_and_the_gate_change_with_the_family(run_cli):
    per = run_cli("compare", *RUNS, TRUTH, *TWO, "--fail-if-worse", "-q", "-f", "json")
    joint = run_cli("compare", *RUNS, TRUTH, *TWO, "--fail-if-worse", "-q", "-f", "json",
                    "--correct-across", "metrics")
    cells = {d["metric"]: d for d in per.json()["comparisons"]}
    joined = {d["metric"]: d for d in joint.json()["comparisons"]}
    assert cells["map@3"]["significant"] and not joined["map@3"]["significant"]
    assert joined["map@3"]["p_adjusted"] == pytest.approx(
        _oracle(np.array([cells["map@3"]["p_value"], cells["precision@3"]["p_value"]]),
                "holm")[0], rel=1e-12)
    assert per.exit_code == 1 and joint.exit_code == 0  # --fail-if-worse weighs the family
    assert per.json()["correct_across"] == "pairs"
    assert joint.json()["correct_across"] == "metrics"


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json"])
def test_every_report_names_the_family(run_cli, fmt):
    for across, words in (("pairs", "holm within each metric@K"),
                          ("metrics", "holm across every metric and K (2 tests)")):
        r = run_cli("compare", *RUNS, TRUTH, *TWO, "-q", "-f", fmt, "--correct-across", across)
        assert r.exit_code == 0, r.stderr
        if fmt == "json":
            assert r.json()["correct_across"] == across
        else:
            assert words in r.stdout


def test_segments_and_all_pairs_share_the_family():
    kw = dict(correction="bh", correct_across="metrics")
    r = compare(RUNS, TRUTH, ["map@3", "precision@3", "ndcg@10"], segments=SAMPLE / "users.csv",
                segment_by="country", all_pairs="bh", **kw)
    cells = [c for row in r.segments["country"] for c in row["cells"]]
    raw = np.array([c.stats.p_value for c in cells])
    defined = ~np.isnan(raw)
    np.testing.assert_allclose(np.array([c.p_adjusted for c in cells])[defined],
                               _oracle(raw[defined], "bh"), rtol=1e-12)
    pairs = compare(RUNS, TRUTH, ["map@3", "precision@3", "ndcg@10"], all_pairs="none",
                    ).pairs
    raw = np.array([p.p_adjusted[0][1] for p in pairs])  # two runs: one pair per metric
    np.testing.assert_allclose([p.p_adjusted[0][1] for p in r.pairs], _oracle(raw, "bh"),
                               rtol=1e-12)
    assert all(p.across == "metrics" for p in r.pairs)


def test_gold_differences_share_the_family():
    kw = dict(gold=SAMPLE / "judged_human.qrels")
    runs = [SAMPLE / "judged_bm25.run", SAMPLE / "judged_llm.run"]
    truth = SAMPLE / "judged_llm.qrels"
    joint = compare(runs, truth, ["ndcg@10", "map@10", "p@5"], correct_across="metrics", **kw)
    raw = np.array([d.p_value for d in joint.gold.differences])
    np.testing.assert_allclose([d.p_adjusted for d in joint.gold.differences],
                               _oracle(raw, "holm"), rtol=1e-12)
    assert joint.gold.to_dict()["correct_across"] == "metrics"


def test_tukey_cannot_span_metrics(run_cli):
    r = run_cli("compare", *RUNS, TRUTH, *TWO, "--all-pairs", "--correct-across", "metrics")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "--correction" in r.stderr and "Traceback" not in r.stderr
    ok = run_cli("compare", *RUNS, TRUTH, *TWO, "--all-pairs", "--correct-across", "metrics",
                 "--correction", "holm", "-q")
    assert ok.exit_code == 0 and "holm over all pairs of every metric" in ok.stdout


def test_agree_swaps_across_metrics():
    runs = {n: SAMPLE / f"agree_{n}.csv" for n in ("bm25", "dense", "llm")}
    args = (SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv", runs,
            ["ndcg@1", "ndcg@10", "map@10"])  # a swap of dense and llm at 1 and at 10
    per = agree(*args)
    joint = agree(*args, correct_across="metrics")
    swaps = [s for o in joint.orderings for s in o.swaps]
    assert len(swaps) > 1
    raw = np.array([s.p_value for s in swaps])
    np.testing.assert_allclose([s.p_adjusted for s in swaps], _oracle(raw, "holm"),
                               rtol=1e-12)
    assert [s.p_value for o in per.orderings for s in o.swaps] == raw.tolist()
    assert joint.to_dict()["test"]["correct_across"] == "metrics"


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_agree_reports_name_the_family(run_cli, fmt):
    r = run_cli("agree", SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv", "--runs",
                *(SAMPLE / f"agree_{n}.csv" for n in ("bm25", "dense", "llm")), "-m",
                "ndcg@10,map@10", "-f", fmt, "--correct-across", "metrics", "-q")
    assert r.exit_code == 0, r.stderr
    assert "holm across every metric and K" in r.stdout


@pytest.mark.parametrize("command", ["compare", "agree"])
def test_the_option_is_refused_outside_its_choices(run_cli, command):
    files = ([*RUNS, TRUTH] if command == "compare" else
             [SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv"])
    r = run_cli(command, *files, "--correct-across", "users")
    assert r.exit_code == 2 and "--correct-across" in r.stderr
