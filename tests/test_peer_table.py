"""Every row of the mapping table (``foreign_names.PEER_TABLE``) that says a tool's measure
equals rankeval's is checked here against that tool, with the tool's preset alone:
ranx, pytrec_eval and ir_measures run live; trec_eval 10.0 by its outputs committed under
tests/data/trec_eval/; RecBole and Microsoft Recommenders by their formulas written out in
tests/test_peer_presets.py. A row marked equal whose tool has no oracle here fails: a claim of
equality is a tested row, and the docs' tables (generated from the table) say "not checked"
or "differs" for the others."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rankeval import evaluate
from rankeval.foreign_names import DIFFERS, EQUAL, PEER_TABLE, TOOLS, UNCHECKED
from rankeval.names import expand, from_name

from .datagen import as_dicts, generate

EQUAL_ROWS = [p for p in PEER_TABLE if p.status == EQUAL]
KS = (5, 10)  # both among trec_eval's default cut-offs (its all_trec output)


def _at(text: str, k: int) -> str:
    return text.replace("{k}", str(k))


def _ks(p) -> tuple[int, ...]:
    return KS if "{k}" in p.name + p.ours else (0,)


def _id(p) -> str:
    return f"{p.tool}-{p.name}".replace("{k}", "K")


def test_rows_are_well_formed():
    """Each row's tool has a preset, its status is one of three, a difference says how, a
    name is given once per tool, and rankeval reads each of its metrics."""
    seen = set()
    for p in PEER_TABLE:
        assert p.tool in TOOLS and p.status in (EQUAL, DIFFERS, UNCHECKED), p
        assert p.status != DIFFERS or p.note, p
        assert (p.tool, p.name) not in seen, p
        seen.add((p.tool, p.name))
        assert expand([_at(p.ours, 10)], [10]), p


def _close(mine, theirs, tol: float, what: str) -> None:
    np.testing.assert_allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=0, atol=tol, err_msg=what)


# -- the oracles, one per tool: each checks one row at one K --------------------------------


# trec_eval 10.0's recorded per-query outputs (test_trec_eval_versions.MEASURES) that hold
# every measure of the table: all_trec, and the two that name the measures all_trec leaves out
# (trec_eval's flags, rankeval's flags but -m)
_RECORDED = [(["-q", "-m", "all_trec"], ["--per-query"]),
             (["-q", "-m", "binG", "-m", "G", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "infAP",
               "-m", "utility", "-m", "num_q", "-m", "runid", "-m", "yaap"], ["--per-query"]),
             (["-q", "-l", "2", "-m", "dcg", "-m", "ideal_dcg", "-m", "yaap"],
              ["--per-query", "--relevance-threshold", "2"])]


def _trec_eval(p, k, run_cli):
    """trec_eval 10.0's output on the committed dataset, from the first recorded case that
    prints the measure: its lines, and rankeval's metric name printing the same lines."""
    from rankeval.foreign_names import JUDGMENT_GROUPS

    from .test_trec_eval_versions import DATA, slug
    folder = DATA / "complete"
    recorded, words = _RECORDED, (_at(p.name, k), _at(p.ours, k))
    if p.name.partition(".")[0] in JUDGMENT_GROUPS:  # -R qrels_jg: its names alone
        folder = DATA / "judgment_groups"
        recorded = [(["-q", "-m", "qrels_jg"], ["--per-query", "--judgment-groups"])]
        words = (_at(p.name, k),)
    for flags, given in recorded:
        theirs = (folder / f"trec_eval-10{slug(flags)}.txt").read_text().splitlines()
        outs = []
        for word in words:
            r = run_cli("score", folder / "run", folder / "qrels", "--compat", "trec_eval",
                        "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec",
                        *given, "-m", word)
            assert r.exit_code == 0, r.stderr
            outs.append(r.stdout.splitlines())
        assert outs[0] == outs[-1], "trec_eval's name and rankeval's print different lines"
        names = {line.split("\t")[0].strip() for line in outs[0]}
        expected = [line for line in theirs if line.split("\t")[0].strip() in names]
        if expected:
            assert outs[0] == expected
            return
    pytest.fail(f"no recorded trec_eval output holds {p.name}")


def _tied_run(seed: int):
    """Graded qrels, scores rounded so that most queries tie, rows shuffled."""
    preds, truth = generate(seed, 80, 150, 30, 16)
    preds = preds.assign(score=(preds.score * 1.2).round())
    return preds.sample(frac=1, random_state=seed).sort_values("user_id", kind="stable"), truth


def _pytrec_eval(p, k, run_cli):
    import pytrec_eval

    preds, truth = _tied_run(71)
    qrels, run = as_dicts(preds, truth)
    name = _at(p.name, k)
    family = max((m for m in pytrec_eval.supported_measures if name.startswith(m)), key=len)
    ask = f"{family}.{k}" if "{k}" in p.name else family
    theirs = {q: v[name] for q, v in pytrec_eval.RelevanceEvaluator(qrels, {ask}).evaluate(
        run).items()}
    ours = evaluate(preds, truth, [_at(p.ours, k)], compat="trec_eval-9")
    table = ours.per_user.set_index("user_id")[str(ours.specs[0])]
    assert len(theirs) > 50
    _close(table.loc[list(theirs)], list(theirs.values()), 1e-9, name)


def _ir_measures(p, k, run_cli):
    import ir_measures

    from . import test_diversity, test_ir_measures

    name = _at(p.name, k)
    measure = ir_measures.parse_measure(name)
    ours_word = _at(p.ours, k)
    if from_name(ours_word).name in ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "nrbp",
                                     "nnrbp", "p_ia", "map_ia", "subtopic_recall"):
        preds, truth = test_diversity._data(4, ties=True)
        preds = preds.sample(frac=1, random_state=4).sort_values("user_id", kind="stable")
        theirs = test_diversity._theirs(measure, preds, truth)
    else:
        preds, truth = test_ir_measures._tied(61, pooled=not name.startswith("Judged"))
        qrels, run = as_dicts(preds, truth)
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    theirs = {q: v for q, v in theirs.items() if not np.isnan(v)}  # ndeval's 0/0
    ours = evaluate(preds, truth, [ours_word], compat="ir_measures")
    table = ours.per_user.set_index("user_id")[str(ours.specs[0])]
    tol = test_ir_measures.GDEVAL if "gdeval" in p.note else 1e-9
    assert len(theirs) > 30
    _close(table.loc[list(theirs)], list(theirs.values()), tol, name)


def _ranx(p, k, run_cli):
    import ranx

    preds, truth = generate(5, 150, 300, 30, 10)  # untied: ranx's sort is unstable
    qrels, run = as_dicts(preds, truth)
    name = _at(p.name, k)
    r = ranx.Run.from_dict(run)
    ranx.evaluate(ranx.Qrels.from_dict(qrels), r, name, make_comparable=True,
                  return_mean=False)
    theirs = r.scores[name]
    ours = evaluate(preds, truth, [_at(p.ours, k)], compat="ranx")
    table = ours.per_user.set_index("user_id")[str(ours.specs[0])]
    assert set(table.index) == set(qrels)
    _close(table.loc[list(theirs)], list(theirs.values()), 1e-12, name)


@pytest.fixture(scope="module")
def world():
    from .test_peer_presets import _world
    return _world(20261128)


def _recbole(p, k, run_cli, world):
    from .test_peer_presets import recbole_oracle
    preds, truth, train, catalog = world
    users, oracle = recbole_oracle(world, k)
    theirs = oracle[_at(p.name, k)]
    ours = evaluate(preds, truth, [_at(p.ours, k)], compat="recbole", train=train,
                    catalog=catalog)
    spec = str(ours.specs[0])
    if isinstance(theirs, float):
        assert ours.metrics[spec] == pytest.approx(theirs, abs=1e-12)
    else:
        _close(ours.per_user.set_index("user_id").loc[users, spec], theirs, 1e-9, p.name)


def _recommenders(p, k, run_cli, world):
    from .test_peer_presets import recommenders_oracle
    preds, truth, train, _ = world
    theirs = recommenders_oracle(world, k)[p.name]
    ours = evaluate(preds, truth, [_at(p.ours, k)], compat="recommenders", train=train)
    assert ours.metrics[str(ours.specs[0])] == pytest.approx(theirs, abs=1e-12)


ORACLES = {"trec_eval": _trec_eval, "pytrec_eval": _pytrec_eval, "ir_measures": _ir_measures,
           "ranx": _ranx, "RecBole": _recbole, "Recommenders": _recommenders}


# ranx compiles its numba kernels once per worker: its rows are slow, and kept on one worker
_MARKS = {"ranx": (pytest.mark.slow, pytest.mark.xdist_group("ranx"))}


@pytest.mark.parametrize(("p", "k"), [pytest.param(p, k, marks=_MARKS.get(p.tool, ()),
                                                   id=f"{_id(p)}@{k}")
                                      for p in EQUAL_ROWS for k in _ks(p)])
def test_a_row_marked_equal_equals_its_tool(p, k, run_cli, request):
    assert p.tool in ORACLES, f"{p} is marked equal but no test checks {p.tool}"
    needs_world = p.tool in ("RecBole", "Recommenders")
    extra = (request.getfixturevalue("world"),) if needs_world else ()
    ORACLES[p.tool](p, k, run_cli, *extra)


@pytest.mark.slow
@pytest.mark.xdist_group("ranx")
def test_ranx_bpref_differs_as_the_table_says():
    """The row marked differs is so: ranx's bpref gives some queries NaN or a value other
    than trec_eval's, which the ranx preset keeps (docs/trec-eval.md used to call them
    equal)."""
    import ranx

    row = next(p for p in PEER_TABLE if (p.tool, p.name) == ("ranx", "bpref"))
    assert row.status == DIFFERS and re.search("NaN", row.note)
    preds, truth = generate(5, 150, 300, 30, 10)
    qrels, run = as_dicts(preds, truth)
    r = ranx.Run.from_dict(run)
    ranx.evaluate(ranx.Qrels.from_dict(qrels), r, "bpref", make_comparable=True,
                  return_mean=False)
    theirs = np.array(list(r.scores["bpref"].values()), dtype=float)
    ours = evaluate(preds, truth, ["bpref"], compat="ranx").per_user.set_index("user_id")
    mine = ours.loc[list(r.scores["bpref"]), "bpref"].to_numpy()
    assert np.isnan(theirs).any() and not np.isnan(mine).any()
