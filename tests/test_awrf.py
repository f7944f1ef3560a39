"""Attention-weighted rank fairness (#33) against the TREC Fair Ranking track's computation,
re-implemented here from fair-trec/trec2022-fair-public (wptrec/metrics/awrf.py at 6fd105f:
``qr_awrf``: the discount 1/log2(max(rank, 2)), the attention-weighted mean of the pages'
alignment vectors, 1 - scipy's jensenshannon(ralign, target)^2) with loops, in float64 (TREC
computes the discount in float32, a 1e-8 difference), on generated runs with multi-group
items, items outside the groups file and graded truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

import rankeval
from rankeval.errors import OptionError


def _reference(ranking: list[str], alignment: dict[str, dict[str, float]],
               target: dict[str, float], groups: list[str], k: int) -> float:
    """TREC 2022's qr_awrf for one ranking, every page with an alignment row."""
    weights, total = dict.fromkeys(groups, 0.0), 0.0
    for i, item in enumerate(ranking[:k], start=1):
        d = 1.0 / math.log2(max(i, 2))
        total += d
        for g, share in alignment[item].items():
            weights[g] += d * share
    ralign = np.array([weights[g] / total for g in groups])
    return 1.0 - jensenshannon(ralign, np.array([target[g] for g in groups])) ** 2


def _data(seed: int):
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(30)]
    providers = ["acme", "beta", "core", "dyna"]
    rows = []
    for item in items[:24]:  # i24..i29 are in no group: "(none)"
        for g in rng.choice(providers, size=int(rng.integers(1, 3)), replace=False):
            rows.append((item, g, "en" if rng.random() < 0.7 else "de"))
    groups = pd.DataFrame(rows, columns=["item_id", "provider", "language"])
    run, truth = [], []
    for u in range(25):
        ranked = rng.choice(items, size=int(rng.integers(1, 15)), replace=False)
        run += [(f"u{u}", d, r + 1) for r, d in enumerate(ranked)]
        judged = rng.choice(items, size=int(rng.integers(1, 8)), replace=False)
        truth += [(f"u{u}", d, int(rng.integers(0, 3))) for d in judged]
    return (pd.DataFrame(run, columns=["user_id", "item_id", "rank"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]), groups)


def _alignment(groups: pd.DataFrame, column: str) -> tuple[dict, list[str]]:
    """Each item's membership shares in ``column`` (1/k over its k groups; ``(none)`` for an
    item outside the file), and the group names."""
    names = [*sorted(set(groups[column])), "(none)"]
    pairs = groups[["item_id", column]].drop_duplicates()
    out: dict[str, dict[str, float]] = {}
    for item, g in pairs.itertuples(index=False):
        out.setdefault(item, {})[g] = 1.0
    for shares in out.values():
        for g in shares:
            shares[g] = 1.0 / len(shares)
    return out, names


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("column", ["provider", "language"])
@pytest.mark.parametrize("k", [3, 10])
def test_awrf_equals_trec_fair_ranking(seed, column, k):
    run, truth, groups = _data(seed)
    ev = rankeval.evaluate(run, truth, metrics=f"awrf(by='{column}')@{k},"
                           f"awrf(by='{column}', target='catalog')@{k}", item_groups=groups)
    align, names = _alignment(groups, column)
    for item in set(run.item_id) | set(truth.item_id):
        align.setdefault(item, {"(none)": 1.0})
    catalog = dict.fromkeys(names, 0.0)
    for shares in (v for i, v in align.items() if i in set(groups.item_id)):
        for g, share in shares.items():
            catalog[g] += share
    catalog = {g: v / sum(catalog.values()) for g, v in catalog.items()}
    per_user = ev.per_user.set_index("user_id")
    relevant_users = truth[truth.relevance > 0].user_id.unique()
    assert sorted(per_user.index) == sorted(relevant_users)
    for user in relevant_users:
        ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()
        rel = truth[(truth.user_id == user) & (truth.relevance > 0)].item_id
        target = dict.fromkeys(names, 0.0)
        for item in rel:
            for g, share in align[item].items():
                target[g] += share / len(rel)
        got = per_user.loc[user].to_numpy(dtype=float)
        want = [_reference(ranking, align, target, names, k),
                _reference(ranking, align, catalog, names, k)]
        assert got == pytest.approx(want, abs=1e-12), user


def test_awrf_bounds_and_the_undefined():
    """A list whose groups match the target scores 1; the worst is 1 - ln 2 (disjoint
    supports); a user without a ranked item has no value (counted, never 0)."""
    groups = pd.DataFrame({"item_id": ["a", "b", "c"], "provider": ["x", "y", "x"]})
    truth = pd.DataFrame({"user_id": ["u", "v", "w"], "item_id": ["a", "a", "b"],
                          "relevance": [1, 1, 1]})
    run = pd.DataFrame({"user_id": ["u", "v"], "item_id": ["c", "b"], "rank": [1, 1]})
    ev = rankeval.evaluate(run, truth, metrics="awrf@5", item_groups=groups)
    values = ev.per_user.set_index("user_id")["awrf@5"]
    assert values["u"] == 1.0
    assert values["v"] == pytest.approx(1 - math.log(2), abs=1e-15)
    assert math.isnan(values["w"])
    assert ev.metrics["awrf@5"] == pytest.approx((1 + 1 - math.log(2)) / 2, abs=1e-15)
    assert any(n.code == "not_scored" for n in ev.notices)


def test_awrf_needs_item_groups_and_a_known_column():
    run, truth, groups = _data(4)
    with pytest.raises(OptionError, match="item_groups"):
        rankeval.evaluate(run, truth, metrics="awrf@10")
    with pytest.raises(Exception, match="no group column: give one or more"):
        rankeval.evaluate(run, truth, metrics="awrf@10", item_groups=groups[["item_id"]])
    with pytest.raises(Exception, match="no group column 'country'"):
        rankeval.evaluate(run, truth, metrics="awrf(by='country')@10", item_groups=groups)


def test_awrf_from_the_command_line_and_every_format(tmp_path, run_cli):
    """--item-groups from a file (CSV, Parquet) gives the library's numbers; bad group files
    are one line naming the file."""
    run, truth, groups = _data(5)
    paths = {}
    for name, frame in (("run", run), ("truth", truth)):
        paths[name] = str(tmp_path / f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    groups.to_parquet(tmp_path / "groups.parquet")
    ev = rankeval.evaluate(run, truth, metrics="awrf@10,awrf(by='language')@10",
                           item_groups=groups)
    r = run_cli("score", paths["run"], paths["truth"], "-m", "awrf@10,awrf(by='language')@10",
                "--item-groups", str(tmp_path / "groups.parquet"), "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    import json
    got = json.loads(r.stdout)["metrics"]
    assert got == pytest.approx(ev.metrics, abs=1e-15)
    (tmp_path / "empty.csv").write_text("item_id,provider\ni1,\n")
    r = run_cli("score", paths["run"], paths["truth"], "-m", "awrf@10", "--item-groups",
                str(tmp_path / "empty.csv"))
    assert r.exit_code == 2 and "empty.csv" in r.stderr and "without any group" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["relevant", "catalog"])
def test_exposure_by_group_is_the_mean_of_the_users_distributions(target):
    """The report's exposure and target shares are the means over users of the attention
    each list gives each group and of its target, as the reference computes them; they add
    up over partitions of users."""
    from rankeval.build.items import item_stats
    from rankeval.engines.finish import finish
    from rankeval.engines.partial import merge
    from rankeval.engines.partition import evaluate_partition
    from rankeval.io.extras import load_extras
    from rankeval.io.frames import MemoryTable
    from rankeval.io.load import load_predictions, load_truth
    from rankeval.settings import make_settings

    run, truth, groups = _data(7)
    metric = f"awrf(target='{target}')@5"
    ev = rankeval.evaluate(run, truth, metrics=metric, item_groups=groups)
    align, names = _alignment(groups, "provider")
    for item in set(run.item_id) | set(truth.item_id):
        align.setdefault(item, {"(none)": 1.0})
    exposure = dict.fromkeys(names, 0.0)
    users = ev.per_user.user_id.tolist()
    for user in users:
        ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()[:5]
        weights = [1.0 / math.log2(max(i, 2)) for i in range(1, len(ranking) + 1)]
        for item, w in zip(ranking, weights, strict=True):
            for g, share in align[item].items():
                exposure[g] += w * share / sum(weights) / len(users)
    metric = str(ev.specs[0])  # target='relevant' is the default: named awrf@5
    rows = ev.group_exposure[metric].rows()
    assert [r[0] for r in rows] == names
    assert [r[1] for r in rows] == pytest.approx([exposure[g] for g in names], abs=1e-12)
    assert sum(r[2] for r in rows) == pytest.approx(1.0, abs=1e-12)
    settings = make_settings([metric], [5])
    extras = load_extras({"item_groups": groups})
    whole_p = load_predictions(MemoryTable(run, "predictions"))
    stats = item_stats(extras, whole_p, settings)
    half = set(users[::2])
    parts = [evaluate_partition(load_predictions(MemoryTable(run[run.user_id.isin(half) == h],
                                                             "predictions")),
                                load_truth(MemoryTable(truth[truth.user_id.isin(half) == h],
                                                       "truth")), settings, extras, stats)
             for h in (True, False)]
    merged = finish(merge(parts), settings, whole_p, load_truth(MemoryTable(truth, "truth")),
                    extras, stats)
    assert merged.group_exposure[metric].users == ev.group_exposure[metric].users
    for a, b in zip(merged.group_exposure[metric].rows(), rows, strict=True):
        assert a[:3] == pytest.approx(b[:3], abs=1e-12)


def test_the_html_report_draws_group_exposure_and_gaps(tmp_path, run_cli):
    """The HTML report's fairness section: a bar chart of each group's exposure against its
    target, the exposure table, and the largest gaps between user segments."""
    out = tmp_path / "r.html"
    r = run_cli("score", "sample_data/preds.csv", "sample_data/truth.csv", "-m",
                "awrf@10,ndcg@10", "--item-groups", "sample_data/item_groups.csv",
                "--segments", "sample_data/users.csv", "--segment-by", "country", "--html",
                str(out), "-q")
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    fairness = page[page.index('id="fairness"'):]
    assert '<figure id="chart-exposure-awrf-10">' in fairness and "<svg" in fairness
    for text in ("Exposure by group (awrf@10)", "umbrella", "exposure / target",
                 "Largest gap between the segments of country"):
        assert text in fairness, text


def test_a_given_target_distribution():
    """target='GROUP=SHARE,...': the shares scaled to sum to 1 (groups not named: 0), as the
    reference computes AWRF against them; an unknown group or a bad share is refused."""
    run, truth, groups = _data(8)
    ev = rankeval.evaluate(run, truth, metrics="awrf(target='acme=2, beta=1, (none)=1')@10",
                           item_groups=groups)
    align, names = _alignment(groups, "provider")
    for item in set(run.item_id) | set(truth.item_id):
        align.setdefault(item, {"(none)": 1.0})
    target = dict.fromkeys(names, 0.0) | {"acme": 0.5, "beta": 0.25, "(none)": 0.25}
    values = ev.per_user.set_index("user_id").iloc[:, 0]
    for user, got in values.items():
        ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()
        assert got == pytest.approx(_reference(ranking, align, target, names, 10), abs=1e-12)
    with pytest.raises(Exception, match="no group 'zeta'"):
        rankeval.evaluate(run, truth, metrics="awrf(target='zeta=1')@10", item_groups=groups)
    with pytest.raises(OptionError, match="target="):
        rankeval.evaluate(run, truth, metrics="awrf(target='acme=x')@10", item_groups=groups)


def _trec_2022_target(relevant: list[str], align: dict, names: list[str],
                      background: dict[str, float], mix: float) -> dict[str, float]:
    """TREC 2022's per-dimension target with a background (trec2022-fair-public,
    Task1Alignment.py at 6fd105f, lines 129-132): t = the mean of the relevant pages'
    alignments; fk = the known levels' part of t; each known level becomes
    (1 - mix) t + mix fk bg (TREC's mix: 0.5), the unknown level keeps t."""
    t = dict.fromkeys(names, 0.0)
    for item in relevant:
        for g, share in align[item].items():
            t[g] += share / len(relevant)
    fk = sum(v for g, v in t.items() if g != "(none)")
    total = sum(background.values())
    return {g: v if g == "(none)" else (1 - mix) * v + mix * fk * background.get(g, 0) / total
            for g, v in t.items()}


@pytest.mark.parametrize("mix", [0.5, 0.2])
@pytest.mark.parametrize("seed", [9, 10])
def test_a_background_mixed_into_the_target_as_trec_2022(seed, mix):
    """background= (catalog, or given shares) mixed into each user's relevant-item target as
    TREC 2022 does, both for awrf and for exposure_ratio."""
    run, truth, groups = _data(seed)
    given = {"acme": 3, "beta": 1, "core": 1, "dyna": 5}
    text = ",".join(f"{g}={v}" for g, v in given.items())
    metrics = (f"awrf(background='catalog', mix={mix})@10,"
               f"awrf(background='{text}', mix={mix})@10")
    ev = rankeval.evaluate(run, truth, metrics=metrics, item_groups=groups)
    align, names = _alignment(groups, "provider")
    catalog = dict.fromkeys(names[:-1], 0.0)
    for shares in align.values():
        for g, share in shares.items():
            catalog[g] += share
    for item in set(run.item_id) | set(truth.item_id):
        align.setdefault(item, {"(none)": 1.0})
    per_user = ev.per_user.set_index("user_id")
    for user in per_user.index:
        ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()
        rel = truth[(truth.user_id == user) & (truth.relevance > 0)].item_id.tolist()
        want = [_reference(ranking, align, _trec_2022_target(rel, align, names, bg, mix),
                           names, 10) for bg in (catalog, given)]
        assert per_user.loc[user].to_numpy(dtype=float) == pytest.approx(want, abs=1e-12)
    with pytest.raises(OptionError, match="background= must be 'catalog'"):
        rankeval.evaluate(run, truth, metrics="awrf(background='relevant')@10",
                          item_groups=groups)
    with pytest.raises(Exception, match=r"no group '\(none\)' in column 'provider' for "
                       "background="):
        rankeval.evaluate(run, truth, metrics="awrf(background='(none)=1')@10",
                          item_groups=groups)
    with pytest.raises(OptionError, match="mix="):
        rankeval.evaluate(run, truth, metrics="awrf(background='catalog', mix=2)@10",
                          item_groups=groups)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_exposure_ratio_is_the_worst_over_the_best_group(seed):
    """exposure_ratio per user by its definition, with loops: the list's attention share of
    each group over its target share, among the groups with a target; the smallest of those
    ratios over the largest; undefined with fewer than two such groups or none exposed."""
    run, truth, groups = _data(seed)
    metrics = "exposure_ratio@5,exposure_ratio(target='catalog', by='language')@10"
    ev = rankeval.evaluate(run, truth, metrics=metrics, item_groups=groups)
    per_user = ev.per_user.set_index("user_id")
    checked = {"defined": 0, "zero": 0, "undefined": 0}
    for column, k, kind, metric in (("provider", 5, "relevant", ev.specs[0]),
                                    ("language", 10, "catalog", ev.specs[1])):
        align, names = _alignment(groups, column)
        catalog = dict.fromkeys(names, 0.0)
        for shares in align.values():
            for g, share in shares.items():
                catalog[g] += share / len(set(groups.item_id))
        for item in set(run.item_id) | set(truth.item_id):
            align.setdefault(item, {"(none)": 1.0})
        for user in per_user.index:
            ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()[:k]
            rel = truth[(truth.user_id == user) & (truth.relevance > 0)].item_id.tolist()
            target = dict.fromkeys(names, 0.0)
            for item in rel:
                for g, share in align[item].items():
                    target[g] += share / len(rel)
            if kind == "catalog":
                target = catalog
            seen = dict.fromkeys(names, 0.0)
            weights = [1.0 / math.log2(max(i, 2)) for i in range(1, len(ranking) + 1)]
            for item, w in zip(ranking, weights, strict=True):
                for g, share in align[item].items():
                    seen[g] += w * share / sum(weights)
            ratios = [seen[g] / target[g] for g in names if target[g] > 0]
            got = per_user.loc[user, str(metric)]
            if len(ratios) < 2 or max(ratios) == 0:
                assert math.isnan(got), user
                checked["undefined"] += 1
            else:
                assert got == pytest.approx(min(ratios) / max(ratios), abs=1e-12), user
                checked["zero" if min(ratios) == 0 else "defined"] += 1
    assert checked["defined"] and checked["zero"] and checked["undefined"], checked


def test_awrf_and_exposure_ratio_share_one_exposure_table(run_cli):
    """awrf@10 and exposure_ratio@10 with the same groups and target read one exposure
    table; a different target is a table of its own."""
    ev = rankeval.evaluate("sample_data/preds.csv", "sample_data/truth.csv",
                           metrics="awrf@10,exposure_ratio@10,exposure_ratio(target='catalog')"
                           "@10", item_groups="sample_data/item_groups.csv")
    assert list(ev.group_exposure) == ["awrf@10", "exposure_ratio(target='catalog')@10"]
    assert 0 < ev.metrics["exposure_ratio@10"] < 1


@pytest.mark.parametrize("seed", [4, 5])
def test_awrf_on_a_stochastic_run_with_ties_is_the_mean_over_samples(seed):
    """A stochastic run given by tied scores, unjudged items and items outside the groups
    file: each user's awrf is the mean over its samples of TREC's qr_awrf on each sample
    ordered by the tie rule (score, then item id), its sd their standard deviation; the
    exposure table is the mean over users of their samples' mean distributions."""
    from tests.test_expected_exposure import _generated

    run, truth, runs, qrels = _generated(seed)
    run = run.assign(score=-(run["rank"] // 3)).drop(columns="rank")  # ties in threes
    ordered = {u: {s: [d for _, d in sorted(((i + 1) // 3, d) for i, d in enumerate(items))]
                   for s, items in samples.items()} for u, samples in runs.items()}
    rng = np.random.default_rng(seed)
    rows = [(f"d{j}", g) for j in range(11)  # d11..d13: "(none)"
            for g in rng.choice(["acme", "beta", "core"], size=int(rng.integers(1, 3)),
                                replace=False)]
    groups = pd.DataFrame(rows, columns=["item_id", "provider"])
    ev = rankeval.evaluate(run, truth, metrics="awrf@5", item_groups=groups, ties="item-asc")
    assert ev.tied_users > 0 and ev.samples is not None
    align, names = _alignment(groups, "provider")
    for j in range(14):
        align.setdefault(f"d{j}", {"(none)": 1.0})
    per_user = ev.per_user.set_index("user_id")
    assert sorted(per_user.index) == sorted(u for u in qrels if max(qrels[u].values()) > 0)
    exposure = dict.fromkeys(names, 0.0)
    for user in per_user.index:
        for order in ordered[user].values():
            weights = [1.0 / math.log2(max(i, 2)) for i in range(1, min(len(order), 5) + 1)]
            for item, w in zip(order[:5], weights, strict=True):
                for g, share in align[item].items():
                    exposure[g] += w * share / sum(weights) / len(ordered[user]) / len(per_user)
    rows = ev.group_exposure["awrf@5"].rows()
    assert [r[1] for r in rows] == pytest.approx([exposure[g] for g in names], abs=1e-12)
    for user in per_user.index:
        rel = [d for d, g in qrels[user].items() if g > 0]
        target = dict.fromkeys(names, 0.0)
        for item in rel:
            for g, share in align[item].items():
                target[g] += share / len(rel)
        values = [_reference(order, align, target, names, 5)
                  for order in ordered[user].values()]
        assert per_user.loc[user, "awrf@5"] == pytest.approx(np.mean(values), abs=1e-12)
        assert per_user.loc[user, "awrf@5 sd"] == pytest.approx(np.std(values), abs=1e-12)


def test_worked_example_by_hand():
    """The fairness page's worked example, derived by hand: attention 1, 1, 1/log2(3) on
    acme, acme, globex against a half-and-half target."""
    groups = pd.DataFrame({"item_id": list("abcd"), "provider": ["acme", "globex"] * 2})
    truth = pd.DataFrame({"user_id": "u", "item_id": list("abc"), "relevance": [1, 1, 0]})
    run = pd.DataFrame({"user_id": "u", "item_id": list("acb"), "rank": [1, 2, 3]})
    ev = rankeval.evaluate(run, truth, metrics="awrf@3,exposure_ratio@3", item_groups=groups)
    third = 1 / math.log2(3)
    p = np.array([2, third]) / (2 + third)
    m = (p + 0.5) / 2
    jsd = 0.5 * np.sum(p * np.log(p / m)) + 0.5 * np.sum(0.5 * np.log(0.5 / m))
    assert ev.metrics["awrf@3"] == pytest.approx(1 - jsd, abs=1e-15)
    assert ev.metrics["exposure_ratio@3"] == pytest.approx(third / 2, abs=1e-15)
    assert round(ev.metrics["awrf@3"], 4) == 0.9631
