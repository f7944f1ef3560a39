"""ir_measures' measure strings against ir_measures itself (live, with its default providers:
pytrec_eval, msmarco, gdeval, judged, cwl_eval) under ``--compat ir_measures``.

Every measure of its list that rankeval computes gives its per-query values to 1e-9 (gdeval's,
printed by a Perl script with 5 decimals, to 5e-6), and ``-f ir_measures`` writes the lines
its command writes. The measures it lists that rankeval lacks are refused by name.
"""

from __future__ import annotations

import subprocess
import sys

import ir_measures
import numpy as np
import pandas as pd
import pytest

from rankeval import evaluate, irmeasures
from rankeval.errors import OptionError
from rankeval.irmeasures import MISSING, write
from rankeval.registry import REGISTRY

from .datagen import as_dicts, generate

# (measure, tolerance): gdeval's nDCG(dcg='exp-log2') and ERR print 5 decimals (half a unit
# of the 5th, inclusive: 0.109375 prints as 0.10938)
GDEVAL = 5e-6 + 1e-12
MEASURES = {
    **dict.fromkeys(
        ["P@1", "P@5", "P@10", "P(rel=2)@5", "P(judged_only=True)@5", "R@10", "R(rel=2)@10",
         "AP", "AP@10", "AP(rel=2)", "AP(judged_only=True)", "RR", "RR(rel=3)", "RR@10",
         "nDCG", "nDCG@10", "nDCG@3", "nDCG(judged_only=True)@10",
         "nDCG(gains={0:0,1:1,2:5,3:9})@10", "nDCG(gains={1:0,2:2,3:7})", "Rprec",
         "Rprec(rel=2)", "Bpref", "Bpref(rel=2)", "infAP", "NumQ", "NumRel", "NumRet",
         "NumRelRet", "NumRet(rel=2)", "SetP", "SetP(rel=2)", "SetRelP", "SetR", "SetF",
         "SetF(beta=0.5)", "SetF(beta=2.0)", "SetAP", "IPrec@0.0", "IPrec@0.3", "IPrec@1.0",
         "Success@1", "Success@5", "Success(rel=2)@10", "RBP(rel=1)", "RBP(rel=2,p=0.5)",
         "Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5,normalize=False)",
         "Compat(p=0.99)", "SDCG(max_rel=3)@10", "SDCG(max_rel=1)@5", "INST(max_rel=3)",
         "INST(T=2.0,max_rel=3)", "INST(T=0.2,max_rel=1)", "INSQ(max_rel=3)",
         "INSQ(T=3.0,max_rel=2)", "BPM(max_rel=3)@10", "BPM(T=2.5,max_rel=3)@20",
         "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@10", "NERR10(max_rel=3)",
         "NERR10(p=0.5,max_rel=2)", "NERR11(max_rel=3)", "NERR11(T=2.0,min_rel=1,max_rel=3)"],
        1e-9),
    "nDCG(dcg='exp-log2')@10": GDEVAL,
    "ERR@10": GDEVAL,
    "ERR@5": GDEVAL,
}


# Judged counts a row of the qrels with a negative grade as judged in ir_measures, as
# unjudged here (trec_eval's pooled-but-unjudged): compared on qrels without one.
JUDGED = {"Judged@5": 1e-9, "Judged@50": 1e-9, "Judged": 1e-9}


def _data(seed: int, pooled: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tie-free runs (``_tied`` makes ties), graded qrels with some
    pooled-but-unjudged (-1) rows, numeric query ids (gdeval reads no others)."""
    preds, truth = generate(seed, 70, 150, 30, 16)
    rng = np.random.default_rng(seed)
    rel = truth.relevance.to_numpy().copy()
    rel[rng.random(len(rel)) < (0.08 if pooled else 0)] = -1
    numeric = {f"u{u}": str(100 + u) for u in range(200)}
    return (preds.assign(user_id=preds.user_id.map(numeric)),
            truth.assign(relevance=rel, user_id=truth.user_id.map(numeric)))


@pytest.mark.parametrize("seed", [51, 52, 53])
def test_every_supported_measure_equals_ir_measures(seed):
    _check(MEASURES, *_data(seed))
    _check(JUDGED, *_data(seed, pooled=False))


def _tied(seed: int, pooled: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``_data`` with scores rounded to whole numbers (most queries tie somewhere) and each
    query's rows shuffled, so that docno descending, docno ascending and file order are
    three different orders."""
    preds, truth = _data(seed, pooled)
    preds = preds.assign(score=(preds.score * 1.2).round())
    return preds.sample(frac=1, random_state=seed).sort_values("user_id", kind="stable"), truth


@pytest.mark.parametrize("seed", [61, 62, 63])
def test_tied_runs_equal_ir_measures_each_measure_ordered_as_its_provider(seed):
    """On tied runs each measure orders ties as its ir_measures provider does (``--ties
    provider``, the preset's value): pytrec_eval's and gdeval's by docno descending,
    msmarco's RR@K, judged's and Compat by docno ascending, cwl_eval's in file order; all in
    one evaluation, per query."""
    _check(MEASURES, *_tied(seed))
    _check(JUDGED, *_tied(seed, pooled=False))


def test_ties_given_explicitly_keep_one_rule_for_every_measure_and_say_so():
    """``ties="trec"`` given under the preset orders every measure by docno descending:
    pytrec_eval's measures still equal ir_measures, the other providers' differ on tied
    queries; the report names the rule (footer, JSON ``tie_rules`` null) where the preset
    names each metric's."""
    preds, truth = _tied(64)
    qrels, run = as_dicts(preds, truth)
    words = ["AP", "RR@10", "INST(max_rel=3)", "Compat"]
    one = evaluate(preds, truth, words, compat="ir_measures", ties="trec")
    each = evaluate(preds, truth, words, compat="ir_measures")
    assert one.settings.ties == "trec" and one.settings.compat_overrides == ("ties",)
    assert one.to_dict()["settings"]["tie_rules"] is None
    assert "compat ir_measures except ties" in str(one) and "ties trec" in str(one)
    assert each.settings.ties == "provider" and not each.settings.compat_overrides
    assert each.to_dict()["settings"]["tie_rules"] == {
        "map@all": "trec", "mrr@10": "item-asc", "inst(max_rel=3)": "input",
        "compat": "item-asc"}
    assert "ties by ir_measures provider" in str(each)
    for word, spec in zip(words, one.specs, strict=True):
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc(
            [ir_measures.parse_measure(word)], qrels, run)}
        mine = one.per_user.set_index("user_id")[str(spec)]
        differ = sum(abs(mine[q] - v) > 1e-9 for q, v in theirs.items())
        assert (differ == 0) == (word == "AP"), (word, differ)
        assert each.per_user.set_index("user_id")[str(spec)].to_dict() == pytest.approx(theirs)


def _check(measures: dict[str, float], preds: pd.DataFrame, truth: pd.DataFrame,
           min_queries: int = 60) -> None:
    """Per query and overall, ours equal ir_measures' to each measure's tolerance."""
    qrels, run = as_dicts(preds, truth)
    parsed = [ir_measures.parse_measure(m) for m in measures]
    # one measure per call: ir_measures shares one pytrec_eval call between measures, where a
    # plain nDCG can take another's gains and NumRet another's judged_only (by hash seed)
    theirs = {(str(m.measure), m.query_id): m.value for measure in parsed
              for m in ir_measures.iter_calc([measure], qrels, run)}
    ev = evaluate(preds, truth, list(measures), compat="ir_measures")
    # one spec per measure, named back as ir_measures names it
    assert [write(s) for s in ev.specs] == [str(m) for m in parsed]
    table = ev.per_user.set_index("user_id")
    assert set(table.index) == {q for _, q in theirs}  # every query of the qrels
    checked = 0
    for spec, (text, tol) in zip(ev.specs, measures.items(), strict=True):
        name = write(spec)
        for user, mine in table[str(spec)].items():
            assert mine == pytest.approx(theirs[(name, user)], abs=tol), (text, user)
            checked += 1
        assert ev.metrics[str(spec)] == pytest.approx(
            np.mean([theirs[(name, u)] for u in table.index]) if spec.name not in
            ("num_q", "num_rel", "num_ret", "num_rel_ret")
            else sum(theirs[(name, u)] for u in table.index), abs=tol), text
    assert checked == len(measures) * len(table) >= len(measures) * min_queries


# one pytrec_eval call's worth (no gains=, no judged_only=: see _check); gdeval's measures
# apart, whose 5 printed decimals ir_measures reads back and rounds again to 4
PYTREC_LINES = [m for m, tol in MEASURES.items() if "gains" not in m and "judged" not in m
                and tol < 1e-6]
GDEVAL_LINES = [m for m, tol in MEASURES.items() if tol == GDEVAL]


@pytest.mark.parametrize(("words", "seed"), [(PYTREC_LINES, 54), (GDEVAL_LINES, 54),
                                             (GDEVAL_LINES, 55), (GDEVAL_LINES, 56)])
def test_the_output_lines_are_ir_measures_command_lines(tmp_path, run_cli, words, seed):
    """``-f ir_measures`` (and ``--per-query``, its ``-q``) against ``ir_measures QRELS RUN
    MEASURES``: the same lines, in its order for the summary (sorted for the per-query lines,
    which it orders by provider and hash seed); gdeval's values rounded to the 5 decimals
    it prints before they are rounded to 4 and averaged, as ir_measures reads them."""
    preds, truth = _data(seed)
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.trec"
    preds = preds.sort_values(["user_id", "score"], ascending=[True, False])
    preds["rank"] = preds.groupby("user_id").cumcount() + 1
    run.write_text("".join(f"{u} Q0 {i} {r} {s!r} tag\n" for u, i, s, r in
                           preds[["user_id", "item_id", "score", "rank"]].itertuples(
                               index=False)))
    qrels.write_text("".join(f"{u} 0 {i} {r:.0f}\n" for u, i, r in
                             truth.itertuples(index=False)))
    for extra in ([], ["-q"]):
        theirs = subprocess.run([sys.executable, "-m", "ir_measures", str(qrels), str(run),
                                 " ".join(words), *extra], capture_output=True, text=True,
                                check=True).stdout
        ours = run_cli("score", run, qrels, "--compat", "ir_measures", "-m", ",".join(words),
                       "-f", "ir_measures", *(["--per-query"] if extra else []),
                       "--quiet").stdout
        if extra:
            assert sorted(ours.splitlines()) == sorted(theirs.splitlines())
        else:
            assert ours == theirs


def test_bare_names_mean_what_they_mean_in_ir_measures():
    """AP, RR, nDCG, Judged alone are the whole list in ir_measures, as here; rankeval's
    lower-case names keep their meaning (every K), and MAP/NDCG/MRR too outside compat."""
    preds, truth = _data(55)
    ev = evaluate(preds, truth, ["AP", "RR", "nDCG", "Judged", "map", "MAP"], k=[5])
    assert [str(s) for s in ev.specs] == ["map@all", "mrr@all", "ndcg@all", "judged@all",
                                          "map@5"]
    ev = evaluate(preds, truth, ["MAP", "NDCG", "MRR"], k=[5], compat="ir_measures")
    assert [str(s) for s in ev.specs] == ["map@all", "ndcg@all", "mrr@all"]


@pytest.mark.parametrize("word", sorted(MISSING))
def test_measures_not_computed_are_refused_by_name(run_cli, word):
    r = run_cli("score", "sample_data/preds.csv", "sample_data/truth.csv", "-m",
                f"{word}@10")
    assert r.exit_code == 2
    assert f"ir_measures' {word}" in r.stderr and "not computed by rankeval" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cwl_eval_measures_read_its_1000_ranks():
    """cwl_eval reads the first 1000 ranks and pads a shorter list with items that gain
    nothing: lists of 990 to 1200 items, relevant items past rank 1000 included."""
    rng = np.random.default_rng(56)
    preds, truth = [], []
    for q in range(100, 112):
        n = int(rng.integers(990, 1200))
        docs = [f"d{d}" for d in rng.permutation(1500)[:n]]
        preds += [(str(q), d, float(n - i)) for i, d in enumerate(docs)]
        judged = rng.choice(docs, 300, replace=False)
        truth += [(str(q), d, int(rng.integers(-1, 4))) for d in judged]
    measures = dict.fromkeys(["INST(max_rel=3)", "INSQ(T=2.0,max_rel=3)", "NERR10(max_rel=3)",
                              "NERR11(max_rel=2)", "SDCG(max_rel=3)@1000",
                              "BPM(T=9.0,max_rel=3)@1000", "NERR8(max_rel=3)@1000"], 1e-9)
    _check(measures, pd.DataFrame(preds, columns=["user_id", "item_id", "score"]),
           pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]), min_queries=12)


def test_inst_tail_trigamma_equals_scipy():
    from scipy.special import polygamma

    from rankeval.kernels.cwl import trigamma

    x = np.concatenate([np.linspace(1e-3, 12, 500), np.geomspace(12, 1e6, 200)])
    np.testing.assert_allclose(trigamma(x), polygamma(1, x), rtol=1e-12)


def test_every_measure_ir_measures_registers_is_read_or_refused_by_name():
    """Each name of ir_measures' registry, with the parameters it requires, is read as the
    metric ir_measures computes (written back as ir_measures writes it), or refused with a
    message naming it."""
    from rankeval.errors import OptionError
    from rankeval.names import from_name

    registry = ir_measures.measures.registry
    assert len(registry) >= 50
    for word, measure in registry.items():
        required = {name for name, info in measure.SUPPORTED_PARAMS.items() if info.required}
        params = ",".join(f"{p}={0.5 if p == 'recall' else 3}"
                          for p in sorted(required - {"cutoff"}))
        text = word + (f"({params})" if params else "") + ("@10" if "cutoff" in required
                                                            else "")
        if word in MISSING:
            with pytest.raises(OptionError, match=f"ir_measures' {word} "):
                from_name(text, ir_measures=True)
            continue
        try:
            spec = from_name(text, ir_measures=True)
        except OptionError as e:
            if "ir_measures refuses" in str(e):  # its provider needs the parameter (RBP's rel=)
                missing = irmeasures.NAMES[word].requires
                assert missing and all(m in measure.SUPPORTED_PARAMS for m in missing), text
                params = ",".join(filter(None, [params, *(f"{m}=1" for m in missing)]))
                text = word + f"({params})" + ("@10" if "cutoff" in required else "")
            else:  # a bare name rankeval takes at every K (P, ERR_IA): one metric at a K
                assert "needs a cut-off" in str(e) and "cutoff" in measure.SUPPORTED_PARAMS, text
                text += "@10"
            spec = from_name(text, ir_measures=True)
        assert write(spec) == str(ir_measures.parse_measure(text)), text


def _ir_measures_takes(measure: str) -> bool:
    """Whether ir_measures itself computes ``measure`` (its default providers)."""
    try:
        parsed = ir_measures.parse_measure(measure)
        list(ir_measures.iter_calc([parsed], {"1": {"a": 1, "b": 0}}, {"1": {"a": 1.0, "b": 0.5}}))
    except (ValueError, AssertionError, NameError):
        return False
    return True


# The intent-aware measures read subtopic qrels (tests/test_diversity.py): left out here.
REFUSABLE = [w for w, n in irmeasures.NAMES.items()
             if "subtopics" not in REGISTRY[n.ours].needs]


@pytest.mark.parametrize("measure", [m for w in REFUSABLE for m in (w, f"{w}@5")])
def test_what_ir_measures_refuses_is_refused(measure):
    """Under --compat ir_measures a measure string reads as ir_measures reads it, and one it
    refuses (RBP without rel=, the C/W/L measures without max_rel=, P or ERR without a
    cut-off) is refused, not computed with rankeval's defaults: ir_measures itself decides."""
    preds = pd.DataFrame({"user_id": ["1"] * 2, "item_id": ["a", "b"], "score": [1.0, 0.5]})
    truth = pd.DataFrame({"user_id": ["1", "1"], "item_id": ["a", "b"], "relevance": [1, 0]})
    try:
        evaluate(preds, truth, [measure], compat="ir_measures")
        ours = True
    except OptionError:
        ours = False
    assert ours == _ir_measures_takes(measure), measure
