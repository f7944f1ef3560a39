"""trec_eval's parameter syntax (-m NAME.PARAMS) under --compat: bad parameters exit 2 with one
line, and the parameters it maps to (levels=, coefficients=) agree with brute force from the
library. trec_eval's own outputs on these parameters are in test_trec_eval_versions.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.compat import measure_name, translate
from rankeval.foreign_names import JUDGMENT_GROUPS, OTHER_FORMATS
from rankeval.names import from_name

from .test_trec_eval_versions import DATA

BAD = {
    "P.0": "cut-offs are whole numbers > 0",
    "P.5,5": "named twice",
    "P.abc": "not a number",
    "iprec_at_recall.0.5,.5": "named twice",
    "ndcg.p=2": "GRADE=GAIN",
    "ndcg.1": "NAME=VALUE",
    "G.1=2,,2=3": "NAME=VALUE",
    "rbp.1=2": "p= alone",
    "set_F.1,2": "one parameter",
    "utility.1,2": "4 numbers",
    "11pt_avg.0.5,0.2": "ascending",
    "11pt_avg.0.5,1.5": "[0, 1]",
    "utility.1,-1,0,1": "--collection-size",
    "ndcg.1=-3": "gain",
}


@pytest.mark.parametrize("measure", BAD)
def test_a_bad_parameter_exits_2_with_one_line(run_cli, measure):
    folder = DATA / "complete"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", "trec_eval",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec", "-m", measure)
    assert r.exit_code == 2, r.stdout
    assert BAD[measure] in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_parameters_are_read_as_trec_eval_reads_them():
    notes: list[str] = []
    assert translate(["P.10,5", "ndcg_cut.20,3.9"], notes=notes) == [
        "precision@5", "precision@10", "ndcg@3", "ndcg@20"]
    assert notes == ["-m ndcg_cut.20,3.9: '3.9' is read as 3, as trec_eval reads it"]
    assert translate(["rbp.p=0.5", "rbp"]) == ["rbp(p=0.5)"]  # the first parameters win
    assert translate(["rbp", "rbp.p=0.5"]) == ["rbp(p=0.5)"]  # a bare name gives way
    assert translate(["11pt_avg..25, .5"]) == ["iprec_11pt(levels='.25,.5')"]  # as typed
    spec = from_name(translate(["ndcg.2=9,1=3"])[0])
    assert str(spec) == "ndcg(gains={1:3,2:9})@all" and measure_name(spec) == "ndcg_1=3,2=9"
    assert measure_name(from_name("set_f1(beta=0.5)")) == "set_F_0.5"
    assert measure_name(from_name("rbp(p=0.8)")) == "rbp_p=0.8"
    # a parameter trec_eval has no spelling for keeps rankeval's name
    assert measure_name(from_name("precision(rel=2)@5")) == "precision(rel=2)@5"


def _frames(seed: int):
    rng = np.random.default_rng(seed)
    preds, truth = [], []
    for u in range(40):
        items = rng.choice(200, size=int(rng.integers(1, 30)), replace=False)
        preds += [(u, int(i), r) for r, i in enumerate(items, 1)]
        judged = rng.choice(200, size=int(rng.integers(1, 25)), replace=False)
        truth += [(u, int(i), int(g)) for i, g in zip(judged, rng.integers(0, 3, len(judged)),
                                                       strict=True)]
    return (pd.DataFrame(preds, columns=["user_id", "item_id", "rank"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


def _brute(preds: pd.DataFrame, truth: pd.DataFrame, levels, coefficients, size):
    """Per user: iprec at each level (trec_eval 10.0's lround), their mean, and utility."""
    rel = {(u, i) for u, i, g in truth.itertuples(index=False) if g >= 1}
    out_levels, out_utility = {}, {}
    for u in truth.user_id.unique():
        ranked = preds[preds.user_id == u].sort_values("rank").item_id.tolist()
        hits = [(u, i) in rel for i in ranked]
        R = sum(1 for (uu, _) in rel if uu == u)
        found = sum(hits)
        precisions = [sum(hits[:n]) / n for n in range(1, len(ranked) + 1)]
        values = []
        for level in levels:
            need = int(np.floor(level * R + 0.5))
            ranks = [n for n in range(1, len(ranked) + 1) if sum(hits[:n]) >= max(need, 1)]
            values.append(max(precisions[ranks[0] - 1:]) if ranks and need <= found else 0.0)
        out_levels[u] = float(np.mean(values))
        a, b, c, d = coefficients
        ret = len(ranked)
        out_utility[u] = a * found + b * (ret - found) + c * (R - found) + d * (
            size + found - ret - R)
    return out_levels, out_utility


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_levels_and_coefficients_agree_with_brute_force(seed):
    preds, truth = _frames(seed)
    levels, coefficients, size = (0.0, 0.3, 0.35, 0.8), (2.0, -0.5, -1.0, 0.25), 500
    ev = rankeval.evaluate(
        preds, truth, ["iprec_11pt(levels='0,0.3,0.35,0.8')",
                       "utility(coefficients='2,-0.5,-1,0.25')"],
        compat="trec_eval", collection_size=size)
    want_levels, want_utility = _brute(preds, truth, levels, coefficients, size)
    per_user = ev.per_user.set_index("user_id")
    got_levels = per_user["iprec_11pt(levels='0,0.3,0.35,0.8')"]
    got_utility = per_user["utility(coefficients='2,-0.5,-1,0.25')"]
    assert len(per_user) == len(want_levels) == 40
    for u in want_levels:  # trec_eval's ids are text
        assert got_levels[str(u)] == pytest.approx(want_levels[u], abs=1e-12)
        assert got_utility[str(u)] == pytest.approx(want_utility[u], abs=1e-9)


def test_the_library_refuses_a_fourth_coefficient_without_the_collection_size():
    preds, truth = _frames(4)
    with pytest.raises(rankeval.OptionError, match="collection_size"):
        rankeval.evaluate(preds, truth, ["utility(coefficients='1,-1,0,1')"])
    ev = rankeval.evaluate(preds, truth, ["utility(coefficients='1,-1,0,0')", "utility"])
    assert list(ev.metrics) == ["utility"]  # the default coefficients: one metric


@pytest.mark.parametrize("ties", ["trec", "expected"])
def test_a_threshold_of_0_makes_every_judged_item_relevant_and_no_other(ties):
    """trec_eval's -l 0: a judged item of grade 0 is relevant, an item missing from the truth
    (or in the pool with a negative grade) is not; the same numbers as the grades moved up one
    at threshold 1, for the measures that read relevance alone."""
    preds, truth = _frames(5)
    truth.loc[truth.index[::7], "relevance"] = -1  # in the pool, unjudged
    moved = truth.assign(relevance=np.where(truth.relevance >= 0, truth.relevance + 1, -1))
    names = ["precision@5", "recall@10", "map@all", "mrr@all", "r_precision", "bpref",
             "num_rel", "num_rel_ret", "hit_rate@3"]
    zero = rankeval.evaluate(preds, truth, names, relevance_threshold=0, ties=ties)
    one = rankeval.evaluate(preds, moved, names, relevance_threshold=1, ties=ties)
    assert len(zero.per_user) == len(one.per_user) == 40
    for name in names:
        assert zero.metrics[name] == pytest.approx(one.metrics[name], abs=1e-12), name
    # and the grade 0 items did not count at threshold 1 on the same truth
    plain = rankeval.evaluate(preds, truth, ["num_rel"], relevance_threshold=1)
    assert plain.metrics["num_rel"] < zero.metrics["num_rel"]
    # every judged item relevant is what was asked for: no warning that it is so (grades
    # 0 to 2, none negative: at threshold 1 the grades differ and some are 0, no warning either)
    graded = _frames(5)[1]
    assert graded.relevance.min() == 0 and graded.relevance.max() == 2
    warned = rankeval.evaluate(preds, graded, ["num_rel"], relevance_threshold=0)
    assert "all_judged_relevant" not in {n.code for n in warned.notices}
    shifted = graded.assign(relevance=graded.relevance + 1)  # all >= 1, differing: warned
    assert "all_judged_relevant" in {n.code for n in rankeval.evaluate(
        preds, shifted, ["num_rel"], relevance_threshold=1).notices}


@pytest.mark.parametrize("compat", ["trec_eval", "trec_eval-9", None])
@pytest.mark.parametrize("measure", sorted(OTHER_FORMATS))
def test_measures_of_other_relevance_formats_are_refused_naming_the_format(
        run_cli, compat, measure):
    """The measures (and groups) of -R qrels_jg, prefs and qrels_prefs: one line, exit 2,
    naming the format, with or without a parameter, under both versions and without one."""
    folder = DATA / "complete"
    preset = ["--compat", compat] if compat else []
    for word in (measure, f"{measure}.5"):
        r = run_cli("score", folder / "run", folder / "qrels", *preset, "--preds-format",
                    "trec", "--truth-format", "qrels", "-f", "trec", "-m", word)
        assert r.exit_code == 2 and r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert f"-R {OTHER_FORMATS[measure]}" in r.stderr, r.stderr


@pytest.mark.parametrize("compat", ["trec_eval", "trec_eval-9", None])
@pytest.mark.parametrize("measure", [*JUDGMENT_GROUPS, "qrels_jg"])
def test_judgment_group_measures_without_the_setting_are_refused_naming_it(
        run_cli, compat, measure):
    """-R qrels_jg's measures (and group) read the judgment groups, which --judgment-groups
    asks for: without it, one line naming it, exit 2, with or without a parameter."""
    folder = DATA / "complete"
    preset = ["--compat", compat] if compat else []
    for word in (measure, f"{measure}.5"):
        r = run_cli("score", folder / "run", folder / "qrels", *preset, "--preds-format",
                    "trec", "--truth-format", "qrels", "-f", "trec", "-m", word)
        assert r.exit_code == 2 and r.stdout == ""
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert "--judgment-groups" in r.stderr and "-R qrels_jg" in r.stderr, r.stderr
