"""``rankeval metrics NAME`` and a ``rankeval metrics`` that fits the terminal (#52 item 1):
every metric explained (definition, parameters, conventions, peers' names, an example), any of
its names found, the conventions each row changes checked on data, and the list wrapped to
any width without cutting a definition."""

from __future__ import annotations

import io

import pytest

from rankeval import evaluate
from rankeval.cli.app import console
from rankeval.conventions import TABLE
from rankeval.foreign_names import (
    CUT,
    JUDGMENT_GROUPS,
    PEERS,
    PREFERENCE_DEFINITIONS,
    PREFERENCES,
    UNCUT,
)
from rankeval.irmeasures import NAMES
from rankeval.names import parse
from rankeval.params import PARAMS
from rankeval.registry import REGISTRY
from rankeval.report.table import render_metrics
from rankeval.results.preferences import COUNTED

from .conftest import ROOT

SAMPLE = ROOT / "sample_data"


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_metric_is_explained(run_cli, name):
    m = REGISTRY[name]
    out = run_cli("metrics", name)
    assert out.exit_code == 0, out.stderr
    text = _flat(out.stdout)
    assert _flat(m.summary) in text and _flat(m.formula) in text
    for p in PARAMS.values():
        if name in p.metrics:
            assert _flat(p.help) in text
    info = run_cli("metrics", name, "-f", "json").json()
    assert info["name"] == name and info["summary"] == m.summary
    example = info["example"].split()
    spec = example[example.index("-m") + 1]
    assert parse(spec)[0] == name  # the example's metric is this one, as -m reads it
    for row in TABLE:
        if name in row.changed:
            assert f"--{row.name.replace('_', '-')}" in info["conventions"]


def _names():
    """Every name a metric goes by: rankeval's aliases, ir_measures', trec_eval's."""
    found = [(alias, m.name) for m in REGISTRY.values() for alias in (m.name, *m.aliases)]
    found += [(n, spec.ours) for n, spec in NAMES.items()]
    found += [(f"{t}.10", ours) for t, ours in CUT.items()]
    found += [(t, ours.partition("@")[0]) for t, ours in UNCUT.items()]
    return found


@pytest.mark.parametrize(("word", "name"), _names())
def test_any_name_of_a_metric_finds_it(run_cli, word, name):
    assert run_cli("metrics", word, "-f", "json").json()["name"] == name


@pytest.mark.parametrize(("tool", "names"), PEERS.items())
def test_peers_names_are_listed_under_the_metric(run_cli, tool, names):
    """Each name of the mapping table (foreign_names.PEER_TABLE), marked where it is not
    equal (ranx's bpref differs)."""
    for ours, theirs in names.items():
        assert run_cli("metrics", ours, "-f", "json").json()["peers"][tool] == theirs
    if tool == "ranx":
        assert names["bpref"] == ["bpref (differs)"]


def test_a_trec_eval_name_is_listed_under_its_metric(run_cli):
    peers = run_cli("metrics", "ndcg", "-f", "json").json()["peers"]
    assert peers["trec_eval"] == ["ndcg_cut.K", "ndcg"]
    assert peers["ir_measures"] == ["nDCG@K (nDCG: the whole list)"]


def test_an_unknown_name_is_one_line_exit_2(run_cli):
    r = run_cli("metrics", "ndgc")
    assert r.exit_code == 2 and "did you mean 'ndcg'" in r.stderr


# The rows whose applies_to is () for the footer's sake: their ``changes`` must be the
# metrics whose values move with them, on graded data (the mechanism, not a list by hand).
@pytest.mark.parametrize(("row", "value"), [("gain", "exponential"),
                                            ("ap_denominator", "relevant"),
                                            ("rr_target", "most-relevant")])
def test_a_rows_metrics_are_those_it_changes(row, value):
    metrics = [n for n, m in REGISTRY.items() if not m.needs and m.cutoff and not m.levels]
    preds, truth = SAMPLE / "preds.csv", SAMPLE / "truth.csv"
    base = evaluate(preds, truth, metrics, [10]).metrics
    other = evaluate(preds, truth, metrics, [10], **{row: value}).metrics
    moved = {k.partition("@")[0] for k in base if base[k] != other[k]
             and not (base[k] is None and other[k] is None)}
    (setting,) = [s for s in TABLE if s.name == row]
    assert moved == set(setting.changed) & set(metrics)


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_the_list_wraps_to_a_narrow_terminal_and_cuts_nothing(width):
    buffer = io.StringIO()
    render_metrics(REGISTRY, console(buffer, width=width, plain=True))
    out = buffer.getvalue()
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= width
    flat = _flat(out)
    for m in REGISTRY.values():
        assert _flat(m.summary) in flat and _flat(m.formula) in flat


def test_the_list_is_a_table_where_it_fits():
    buffer = io.StringIO()
    render_metrics(REGISTRY, console(buffer, plain=True))  # a file: no width to fit
    lines = buffer.getvalue().splitlines()
    assert lines[0].split()[:3] == ["metric", "aliases", "definition"]
    assert len(lines) == len(REGISTRY) + 1


@pytest.mark.parametrize("name", PREFERENCES)
def test_every_prefs_measure_is_explained_and_its_example_runs(run_cli, name):
    """trec_eval's prefs_* measures, which --preferences computes and the registry does not
    hold, are explained like a metric (the same JSON keys), and the example's command line
    computes the measure on trec_eval's prefs layout."""
    text = _flat(run_cli("metrics", name).stdout)
    info = run_cli("metrics", name, "-f", "json").json()
    assert set(info) == set(run_cli("metrics", "map", "-f", "json").json())
    assert info["name"] == name and _flat(PREFERENCE_DEFINITIONS[name]) in text
    assert info["overall"] == ("sum" if name in COUNTED else "mean")
    assert "--preferences" in info["conventions"]
    example = info["example"].split()
    folder = ROOT / "tests" / "data" / "trec_eval" / "preferences"
    args = [folder / "run" if a == "run.trec" else folder / "qrels" if a == "prefs.txt" else a
            for a in example[1:]]
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[-1].split("\t")[0].strip() == name


@pytest.mark.parametrize("name", list(JUDGMENT_GROUPS))
def test_a_judgment_group_measure_is_its_metric_with_a_note(run_cli, name):
    """P_avgjg and the other -R qrels_jg measures are their plain metric, averaged over the
    judgment groups: explained as that metric, with a note naming --judgment-groups."""
    info = run_cli("metrics", name, "-f", "json").json()
    base = run_cli("metrics", JUDGMENT_GROUPS[name], "-f", "json").json()
    assert info["name"] == base["name"] and "--judgment-groups" in info["note"]
    assert "--judgment-groups" in _flat(run_cli("metrics", name).stdout)
