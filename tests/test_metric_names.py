"""The metric-name grammar: ``name[@K]``, aliases, comma lists, did-you-mean."""

from __future__ import annotations

import pytest

from rankeval.errors import OptionError
from rankeval.names import MetricSpec, expand, from_name, parse, parse_ks
from rankeval.registry import LOOKUP, REGISTRY


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ndcg", ("ndcg", None, ())),
        ("nDCG@10", ("ndcg", 10, ())),
        ("p@5", ("precision", 5, ())),
        ("hr", ("hit_rate", None, ())),
        ("rr@3", ("mrr", 3, ())),
        ("ap", ("map", None, ())),
        (" recall @ 20 ", ("recall", 20, ())),
    ],
)
def test_parse(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("k", [7, None])
def test_canonical_names_round_trip(name, k):
    level = REGISTRY[name].levels[3] if REGISTRY[name].levels else None
    spec = MetricSpec(name, k if REGISTRY[name].cutoff else None, level)
    assert from_name(str(spec)) == spec


def test_all_and_metrics_without_cut_off():
    assert parse("nDCG@ALL") == ("ndcg", "all", ())
    assert str(MetricSpec("map", None)) == "map@all"
    assert str(MetricSpec("r_precision", None)) == "r_precision"
    specs = expand(["ndcg@all", "rprec", "p"], [5, 10])
    assert [str(s) for s in specs] == ["ndcg@all", "r_precision", "precision@5", "precision@10"]
    assert [s.column for s in specs] == ["all", "R", 5, 10]
    with pytest.raises(OptionError, match="takes no cut-off"):
        parse("r_precision@10")
    with pytest.raises(OptionError, match="needs a cut-off"):
        from_name("ndcg")


def test_every_alias_maps_to_a_registered_metric():
    assert set(LOOKUP.values()) == set(REGISTRY)
    for metric in REGISTRY.values():
        for alias in metric.aliases:
            assert LOOKUP[alias.lower()] == metric.name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndgc", "did you mean 'ndcg'"),
        ("precison@5", "did you mean 'precision'"),
        ("zzz", "known metrics: precision"),
        ("ndcg@0", "positive integer"),
        ("ndcg@x", "positive integer"),
        ("ndcg@", "positive integer"),
        ("@5", "cannot read metric"),
    ],
)
def test_bad_names(text, message):
    with pytest.raises(OptionError, match=message):
        parse(text)


def test_expand_takes_every_k_for_bare_names_and_keeps_first_mention_order():
    specs = expand(["ndcg,p@3", "ndcg@10", "mrr"], [10, 5])
    assert [str(s) for s in specs] == ["ndcg@5", "ndcg@10", "precision@3", "mrr@5", "mrr@10"]


def test_expand_needs_a_metric():
    with pytest.raises(OptionError, match="no metrics"):
        expand([" , "], [10])


@pytest.mark.parametrize(
    ("values", "expected"),
    [(["10"], [10]), (["5,10,20"], [5, 10, 20]), (["20", "5", "5"], [5, 20]), ([" 3 , 1"], [1, 3])],
)
def test_parse_ks(values, expected):
    assert parse_ks(values) == expected


@pytest.mark.parametrize("bad", ["0", "-1", "1.5", "ten", "1e3"])
def test_parse_ks_rejects(bad):
    with pytest.raises(OptionError, match="positive integer"):
        parse_ks([bad])


def test_k_ranges():
    from rankeval.names import parse_ks

    assert parse_ks(["1..5", "10..30:10", "7"]) == [1, 2, 3, 4, 5, 7, 10, 20, 30]
    assert parse_ks(["10..25:10"]) == [10, 20]  # the end only when the step reaches it
    assert parse_ks(["3..3"]) == [3]
    for bad, message in (("0..3", "1 <= FIRST <= LAST"), ("5..2", "1 <= FIRST <= LAST"),
                         ("1..3:0", "STEP >= 1"), ("1..x", "cannot be read"),
                         ("1..100000", "100,000 cut-offs")):
        with pytest.raises(OptionError, match=message):
            parse_ks([bad])


def test_k_ranges_from_the_command_line_and_config(run_cli, write):
    s = "sample_data/"
    r = run_cli("score", s + "preds.csv", s + "truth.csv", "-m", "ndcg", "--k", "1..3,10..20:5",
                "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    import json

    assert json.loads(r.stdout)["k"] == [1, 2, 3, 10, 15, 20]
    cfg = write("rankeval.toml", '[tool.rankeval]\nk = "1..3"\nmetrics = ["ndcg"]\n')
    r = run_cli("score", s + "preds.csv", s + "truth.csv", "--config", cfg, "-f", "json", "-q")
    assert json.loads(r.stdout)["k"] == [1, 2, 3]
    bad = run_cli("score", s + "preds.csv", s + "truth.csv", "--k", "0..3")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == ("rankeval: error: --k: the K range '0..3' needs "
                                  "1 <= FIRST <= LAST <= 1,000,000,000 and a STEP >= 1")
