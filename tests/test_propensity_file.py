"""Explicit propensities (``--propensity FILE``, #31): the ips_ metrics written without gamma=
weigh each relevant item by 1 / the file's probability, per item or per (user, item) pair.
Checked against the definitions with loops, against the popularity model written out as a
file, over a split of the users, in every input format, and on bad files."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.errors import InputError, OptionError

from .test_propensity import _generated

METRICS = ["ips_recall", "ips_recall(sn=False)", "ips_precision", "ips_precision(sn=False)",
           "ips_dcg", "ips_dcg(sn=False)", "ips_ndcg"]


def _per_item(seed: int, items) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"item_id": sorted(items), "propensity": rng.uniform(0.02, 1.0,
                                                                             len(items))})


def _per_pair(seed: int, truth: pd.DataFrame) -> pd.DataFrame:
    """A propensity for every judged pair, and for some pairs the truth does not hold."""
    rng = np.random.default_rng(seed)
    pairs = truth[["user_id", "item_id"]].drop_duplicates()
    extra = pd.DataFrame({"user_id": ["nobody", "u1"], "item_id": ["i0", "zz"]})
    pairs = pd.concat([pairs, extra], ignore_index=True)
    return pairs.assign(pscore=rng.uniform(0.01, 1.0, len(pairs)))


def _loops(run, truth, weight, k):
    """Per user, in the order of ``METRICS``: the definitions with one weight per relevant
    item, ``weight(user, item)`` = 1 / its propensity."""
    out = {}
    for user, listed in run.groupby("user_id"):
        ranking = listed.sort_values("rank").item_id.tolist()
        depth = k or len(ranking)
        relevant = truth[(truth.user_id == user) & (truth.relevance > 0)].item_id.tolist()
        w = {i: weight(user, i) for i in relevant}
        hits = {i: r + 1 for r, i in enumerate(ranking[:depth]) if i in w}
        total, n = sum(w.values()), len(w)
        if not n:
            out[user] = [math.nan] * len(METRICS)
            continue
        found = sum(w[i] for i in hits)
        dcg = sum(w[i] / math.log2(r + 1) for i, r in hits.items())
        ideal = sum(1 / math.log2(j + 1) for j in range(1, min(n, k or n) + 1))
        out[user] = [found / total, found / n, found * n / total / depth, found / depth,
                     dcg * n / total, dcg, dcg * n / total / ideal]
    return out


def _check(ev, want, k):
    at = f"@{k}" if k else "@all"
    per_user = ev.per_user.set_index("user_id")
    names = [m + at for m in METRICS]
    checked = 0
    for user, values in want.items():
        if user not in per_user.index:  # no relevant item: not evaluated (SPEC 2)
            assert math.isnan(values[0]), user
            continue
        got = per_user.loc[user, names].to_numpy(dtype=float)
        assert got == pytest.approx(np.array(values), abs=1e-12, nan_ok=True), user
        checked += not math.isnan(values[0])
    assert checked > 20


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("k", [5, None])
def test_per_item_file_is_the_definition(seed, k):
    run, truth, _, _ = _generated(seed)
    props = _per_item(seed, set(run.item_id) | set(truth.item_id))
    p = dict(zip(props.item_id, props.propensity, strict=True))
    at = f"@{k}" if k else "@all"
    ev = rankeval.evaluate(run, truth, metrics=[m + at for m in METRICS], propensity=props)
    _check(ev, _loops(run, truth, lambda u, i: 1 / p[i], k), k)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("k", [5, None])
def test_per_pair_file_is_the_definition(seed, k):
    run, truth, _, _ = _generated(seed)
    props = _per_pair(seed, truth)
    p = {(u, i): x for u, i, x in props.itertuples(index=False)}
    at = f"@{k}" if k else "@all"
    ev = rankeval.evaluate(run, truth, metrics=[m + at for m in METRICS], propensity=props)
    _check(ev, _loops(run, truth, lambda u, i: 1 / p[u, i], k), k)


def test_the_popularity_model_written_as_a_file():
    """gamma= from training popularity, and the same propensities given per item: the same
    values (the popularity model's items unseen in training left out of both)."""
    run, truth, train, popularity = _generated(5)
    truth = truth[truth.item_id.isin(list(popularity))]
    top = max(popularity.values())
    gamma = 1.5
    props = pd.DataFrame({"item_id": list(popularity),
                          "propensity": [(n / top) ** ((gamma + 1) / 2)
                                         for n in popularity.values()]})
    names = [f"{m}@5" for m in METRICS]
    with_gamma = [n.replace("(", f"(gamma={gamma}, ") if "(" in n else
                  n.replace("@", f"(gamma={gamma})@") for n in names]
    model = rankeval.evaluate(run, truth, metrics=with_gamma, train=train)
    given = rankeval.evaluate(run, truth, metrics=names, propensity=props)
    assert list(given.metrics.values()) == pytest.approx(list(model.metrics.values()),
                                                         abs=1e-12)
    both = rankeval.evaluate(run, truth, metrics=[with_gamma[0], names[0]], train=train,
                             propensity=props)  # both sources in one run, each its own
    assert list(both.metrics.values()) == pytest.approx(
        [model.metrics[with_gamma[0]], given.metrics[names[0]]], abs=1e-12)


def test_a_split_of_the_users_gives_the_same_values():
    """Per-pair weights follow a chunk cut into ranges of users (a partition's view)."""
    from rankeval.build.items import item_stats
    from rankeval.build.stages import build
    from rankeval.io.extras import load_extras
    from rankeval.io.frames import MemoryTable
    from rankeval.io.load import load_predictions, load_truth
    from rankeval.kernels.metrics import compute
    from rankeval.settings import make_settings

    run, truth, _, _ = _generated(6)
    settings = make_settings(METRICS, [3, 10])
    preds = load_predictions(MemoryTable(run, "p"))
    extras = load_extras({"propensity": _per_pair(6, truth)})
    built = build(preds, load_truth(MemoryTable(truth, "t")), settings, extras,
                  item_stats(extras, preds, settings))
    whole = compute(built.chunk, settings.specs, settings)
    n = built.chunk.n_users
    parts = [compute(built.chunk.users(a, b), settings.specs, settings)
             for a, b in itertools.pairwise([0, 1, n // 3, n // 2, n])]
    for spec in settings.specs:
        np.testing.assert_array_equal(np.concatenate([p[spec] for p in parts]), whole[spec])


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "jsonl"])
def test_every_format_from_the_command_line(run_cli, tmp_path, fmt):
    run, truth, _, _ = _generated(7)
    props = _per_pair(7, truth)
    run.to_csv(tmp_path / "run.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    path = tmp_path / f"p.{fmt}"
    if fmt == "parquet":
        props.to_parquet(path, index=False)
    elif fmt == "jsonl":
        props.to_json(path, orient="records", lines=True, double_precision=15)
    else:
        props.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
    out = run_cli("score", tmp_path / "run.csv", tmp_path / "truth.csv", "-m",
                  "ips_recall@5,ips_ndcg@5", "--propensity", path, "-f", "json")
    assert out.exit_code == 0, out.stderr
    want = rankeval.evaluate(run, truth, metrics="ips_recall@5,ips_ndcg@5", propensity=props)
    assert json.loads(out.stdout)["metrics"] == pytest.approx(want.metrics, abs=1e-12)


def _bad(run_cli, tmp_path, props: pd.DataFrame, *extra: str):
    run, truth, _, _ = _generated(8)
    run.to_csv(tmp_path / "run.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    props.to_csv(tmp_path / "p.csv", index=False)
    return run_cli("score", tmp_path / "run.csv", tmp_path / "truth.csv", "-m",
                   "ips_recall@5", "--propensity", tmp_path / "p.csv", *extra)


@pytest.mark.parametrize("case, expected", [
    ("missing_item", "relevant items of the truth have no propensity here"),
    ("missing_pair", "relevant (user, item) pairs of the truth have no propensity here"),
    ("zero", "propensity outside (0, 1]"),
    ("above_one", "propensity outside (0, 1]"),
    ("nan", "empty value"),
    ("repeat_item", "items given more than once"),
    ("repeat_pair", "(user, item) pair given more than once"),
    ("no_column", "no propensity column"),
])
def test_bad_files_are_one_line(run_cli, tmp_path, case, expected):
    run, truth, _, _ = _generated(8)
    items = _per_item(8, set(run.item_id) | set(truth.item_id))
    pairs = _per_pair(8, truth).rename(columns={"pscore": "propensity"})
    relevant = truth[truth.relevance > 0]
    props = {
        "missing_item": items[items.item_id != relevant.item_id.iloc[0]],
        "missing_pair": pairs.drop(index=0) if truth.relevance.iloc[0] > 0 else pairs[
            ~((pairs.user_id == relevant.user_id.iloc[0])
              & (pairs.item_id == relevant.item_id.iloc[0]))],
        "zero": items.assign(propensity=np.where(items.index == 3, 0.0, items.propensity)),
        "above_one": items.assign(propensity=np.where(items.index == 2, 1.5, items.propensity)),
        "nan": items.assign(propensity=np.where(items.index == 1, np.nan, items.propensity)),
        "repeat_item": pd.concat([items, items.iloc[:2]]),
        "repeat_pair": pd.concat([pairs, pairs.iloc[:1]]),
        "no_column": items.rename(columns={"propensity": "chance"}),
    }[case]
    out = _bad(run_cli, tmp_path, props)
    assert out.exit_code == 2, out.stdout
    assert expected in out.stderr and "p.csv" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    if case == "no_column":  # the column named by its option
        fixed = _bad(run_cli, tmp_path, props, "--propensity-col", "chance")
        assert fixed.exit_code == 0, fixed.stderr


def test_without_a_source_of_weights():
    run, truth, _, _ = _generated(9)
    with pytest.raises(OptionError, match=r"ips_recall@5 needs propensity FILE .*gamma="):
        rankeval.evaluate(run, truth, metrics="ips_recall@5")
    with pytest.raises(OptionError, match="ips_recall needs train"):
        rankeval.evaluate(run, truth, metrics="ips_recall(gamma=1)@5",
                          propensity=_per_item(9, set(run.item_id) | set(truth.item_id)))


def test_library_error_names_the_pairs():
    run, truth, _, _ = _generated(10)
    relevant = truth[truth.relevance > 0].iloc[0]
    props = _per_pair(10, truth)
    props = props[~((props.user_id == relevant.user_id) & (props.item_id == relevant.item_id))]
    with pytest.raises(InputError, match=f"{relevant.user_id} / {relevant.item_id}"):
        rankeval.evaluate(run, truth, metrics="ips_recall@5", propensity=props)


def test_validate_reads_the_file(run_cli, tmp_path):
    out = _bad(run_cli, tmp_path, _per_item(8, [f"i{j}" for j in range(40)]))
    assert out.exit_code == 0, out.stderr
    checked = run_cli("validate", tmp_path / "run.csv", tmp_path / "truth.csv", "-m",
                      "ips_recall@5", "--propensity", tmp_path / "p.csv", "-f", "json")
    assert checked.exit_code == 0, checked.stderr
    assert json.loads(checked.stdout)["inputs"]["propensity"]["rows"] == 40
