"""Rank-biased overlap (``rankeval.rbo``, ``compare --rbo``) and Clarke et al.'s compatibility
against their definitions, computed by brute force: the lists completed item by item to a
depth where p^d is below 1e-40 and the overlap counted with sets at every depth. (The ``rbo``
package on PyPI pins numpy < 2, so it cannot be installed beside rankeval.)"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankeval
from rankeval.analysis.overlap import rbo_values

DEPTH = 3000  # p <= 0.95: p^3000 < 1e-66


def _rbo_of(a: list, b: list, p: float, depth: int = DEPTH) -> float:
    """sum_d (1 - p) p^(d-1) |a_d & b_d| / d over two lists of ``depth`` items."""
    seen_a, seen_b, common, total = set(), set(), 0, 0.0
    for d in range(1, depth + 1):
        x, y = a[d - 1], b[d - 1]
        common += (x == y) + (x != y) * ((x in seen_b) + (y in seen_a))
        seen_a.add(x)
        seen_b.add(y)
        total += (1 - p) * p ** (d - 1) * common / d
    return total


def _brute(short: list, long: list, p: float) -> tuple[float, float, float]:
    """(ext, min, max) by their definitions in Webber et al. 2010 (lists of length s <= l)."""
    if len(short) > len(long):
        short, long = long, short
    s, n = len(short), len(long)
    fresh = [("fresh", i) for i in range(DEPTH)]
    low = _rbo_of(short + [("a", i) for i in range(DEPTH)], long + fresh, p)
    # max: the shorter list goes on with the longer one's unmatched items, in its order; then
    # each list takes the other's remaining unmatched items, then items new to both
    a = short + [x for x in long if x not in short][: n - s]
    b = list(long)
    wanted_by_a = [x for x in b if x not in a]
    wanted_by_b = [x for x in a if x not in b]
    k = 0
    while len(a) < DEPTH:
        a.append(wanted_by_a.pop(0) if wanted_by_a else ("both", k))
        b.append(wanted_by_b.pop(0) if wanted_by_b else ("both", k))
        k += 1
    high = _rbo_of(a, b, p)
    # ext: agreement as seen to depth s; between s and l the shorter list's unseen items agree
    # at its rate X_s / s; past l the agreement stays at A_l
    x_s = len(set(short) & set(long[:s]))
    rate = x_s / s if s else 0.0
    agreement = []
    for d in range(1, n + 1):
        x = len(set(short[:d]) & set(long[:d])) + max(d - s, 0) * rate
        agreement.append(x / d)
    ext = sum((1 - p) * p ** (d - 1) * agreement[d - 1] for d in range(1, n + 1))
    ext += (agreement[-1] if n else 0.0) * p ** n
    return ext, low, high


def _one_user(items: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(items)
    return np.zeros(n, np.int64), np.arange(1, n + 1), np.array(items, dtype=np.int64)


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95])
def test_rbo_equals_its_definition_by_brute_force(p):
    rng = np.random.default_rng(int(p * 100))
    for _ in range(40):
        la, lb = (int(x) for x in rng.integers(0, 14, 2))
        if la == lb == 0:
            continue
        a = [int(x) for x in rng.choice(24, la, replace=False)]
        b = [int(x) for x in rng.choice(24, lb, replace=False)]
        got = rbo_values(_one_user(a), _one_user(b), 1, p)
        ext, low, high = _brute(a, b, p)
        assert got["ext"][0] == pytest.approx(ext, abs=1e-12), (a, b)
        assert got["min"][0] == pytest.approx(low, abs=1e-12), (a, b)
        assert got["max"][0] == pytest.approx(high, abs=1e-12), (a, b)
        assert got["residual"][0] == pytest.approx(high - low, abs=1e-12)


def test_rbo_of_the_paper_cases():
    """Identical lists: ext and max are 1, min is what depth k guarantees; disjoint lists:
    ext and min 0; one empty list: min and ext 0, max 1; two empty lists: undefined."""
    same = rbo_values(_one_user([1, 2, 3]), _one_user([1, 2, 3]), 1, 0.9)
    assert same["ext"][0] == pytest.approx(1.0, abs=1e-15)
    assert same["max"][0] == pytest.approx(1.0, abs=1e-15)
    # RBO_min of identical lists of length k: 1 - p^k ... less the tail's unseen agreement
    k, p = 3, 0.9
    low = (1 - p) / p * (sum((d - k) * p ** d / d for d in range(1, k + 1)) - k * math.log(1 - p))
    assert same["min"][0] == pytest.approx(low, abs=1e-15)
    apart = rbo_values(_one_user([1, 2]), _one_user([3, 4]), 1, 0.9)
    assert apart["ext"][0] == 0 and apart["min"][0] == 0 and 0 < apart["max"][0] < 1
    empty = rbo_values(_one_user([]), _one_user([5, 6]), 1, 0.9)
    assert (empty["ext"][0], empty["min"][0]) == (0, 0)
    assert empty["max"][0] == pytest.approx(1.0, abs=1e-15)
    none = rbo_values(_one_user([]), _one_user([]), 1, 0.9)
    assert all(math.isnan(v[0]) for v in none.values())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=7, unique=True),
       st.lists(st.integers(0, 9), max_size=7, unique=True),
       st.lists(st.integers(0, 12), min_size=30, max_size=30),
       st.lists(st.integers(0, 12), min_size=30, max_size=30),
       st.sampled_from([0.3, 0.6, 0.9]))
def test_every_completion_lies_between_min_and_max(a, b, more_a, more_b, p):
    """Whatever the untruncated lists hold past what was seen, their RBO is within [min,
    max] (the completions drawn from a small alphabet, so that they overlap a lot)."""
    if not a and not b:
        return
    got = rbo_values(_one_user(a), _one_user(b), 1, p)

    def completed(seen: list[int], more: list[int]) -> list:
        out = list(seen)
        out += [x for x in dict.fromkeys(more) if x not in out]
        return out + [("tail", id(seen), i) for i in range(200 - len(out))]

    full = _rbo_of(completed(a, more_a), completed(b, more_b), p, 200) + p ** 200
    assert got["min"][0] - 1e-12 <= full <= got["max"][0] + 1e-12


def test_many_users_at_once_equal_each_alone():
    rng = np.random.default_rng(5)
    lists = [([int(x) for x in rng.choice(30, rng.integers(0, 12), replace=False)],
              [int(x) for x in rng.choice(30, rng.integers(0, 12), replace=False)])
             for _ in range(50)]

    def flat(which: int):
        user = np.concatenate([np.full(len(pair[which]), u) for u, pair in enumerate(lists)])
        pos = np.concatenate([np.arange(1, len(pair[which]) + 1) for pair in lists])
        item = np.concatenate([np.array(pair[which], dtype=np.int64) for pair in lists])
        return user.astype(np.int64), pos, item

    together = rbo_values(flat(0), flat(1), len(lists), 0.8)
    for u, (a, b) in enumerate(lists):
        alone = rbo_values(_one_user(a), _one_user(b), 1, 0.8)
        for kind, values in together.items():
            np.testing.assert_allclose(values[u], alone[kind][0], atol=1e-14, equal_nan=True)


def _runs() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    a = pd.DataFrame({"user_id": ["u1"] * 4 + ["u2"] * 2,
                      "item_id": ["x", "y", "z", "w", "x", "q"],
                      "score": [4.0, 3.0, 3.0, 1.0, 2.0, 1.0]})
    b = pd.DataFrame({"user_id": ["u1"] * 3 + ["u3"],
                      "item_id": ["z", "x", "v", "x"], "rank": [1, 2, 3, 1]})
    truth = pd.DataFrame({"user_id": ["u1", "u2", "u3", "u4"], "item_id": ["x", "q", "x", "x"],
                          "relevance": [1, 1, 1, 1]})
    return a, b, truth


def test_the_library_orders_lists_as_the_metrics_do():
    """Tied scores follow --ties (trec: item id descending, so z before y); users of either
    run are reported; max_depth cuts the lists first."""
    a, b, _ = _runs()
    r = rankeval.rbo(a, b, p=0.9, names=("a", "b"))
    assert list(r.users) == ["u1", "u2", "u3"]
    for ties, order in (("trec", ["x", "z", "y", "w"]), ("item-asc", ["x", "y", "z", "w"])):
        got = rankeval.rbo(a, b, p=0.9, ties=ties).values
        want = rbo_values(_one_user([0, 1, 2, 3]), _one_user([
            order.index("z"), order.index("x"), 9]), 1, 0.9)
        for kind in want:
            assert got[kind][0] == pytest.approx(want[kind][0], abs=1e-14)
    cut = rankeval.rbo(a, b, p=0.9, max_depth=1).values
    want = rbo_values(_one_user([0]), _one_user([1]), 1, 0.9)
    assert cut["min"][0] == want["min"][0] == 0
    assert cut["max"][0] == pytest.approx(want["max"][0])
    assert r.mean("ext") == pytest.approx(np.mean(r.values["ext"]))
    assert "a vs b" in repr(r) and list(r.per_user.columns) == [
        "user_id", "rbo_ext", "rbo_min", "rbo_max", "rbo_residual"]


def test_the_library_refuses_what_it_cannot_read():
    a, b, _ = _runs()
    with pytest.raises(rankeval.OptionError, match=r"^p is RBO's persistence"):
        rankeval.rbo(a, b, p=1.0)
    with pytest.raises(TypeError, match="gain"):
        rankeval.rbo(a, b, gain="exponential")
    twice = pd.concat([a, a.iloc[:1]])
    with pytest.raises(rankeval.InputError, match="listed more than once"):
        rankeval.rbo(twice, b)
    kept = rankeval.rbo(twice, b, dedupe=True).values
    np.testing.assert_array_equal(kept["ext"], rankeval.rbo(a, b).values["ext"])


def test_compare_reports_rbo_in_every_format(run_cli, write):
    a, b, truth = _runs()
    files = [write("a.csv", a), write("b.csv", b), write("truth.csv", truth)]
    expected = rankeval.rbo(a, b, p=0.8, names=("a", "b"))
    per_user = files[0].parent / "users.csv"
    run = run_cli("compare", *files, "--baseline-run", "b", "--rbo", "0.8", "-m", "ndcg@10",
                  "-f", "json", "--per-user", per_user)
    assert run.exit_code == 0, run.stderr
    [doc] = run.json()["rbo"]
    assert (doc["run"], doc["baseline"], doc["p"]) == ("a", "b", 0.8)
    # over the users compared: u1..u4; u4 has no list in either run, so no value
    assert doc["users"] == 4 and doc["users_with_lists"] == 3
    for kind in ("ext", "min", "max", "residual"):
        assert doc[kind] == pytest.approx(expected.mean(kind), abs=1e-15)
    table = pd.read_csv(per_user).set_index("user_id")
    assert table["a/rbo_ext[vs b]"].isna().tolist() == [False, False, False, True]
    np.testing.assert_allclose(table["a/rbo_min[vs b]"].iloc[:3], expected.values["min"])
    csv = run_cli("compare", *files, "--rbo", "0.8", "-m", "ndcg@10", "-f", "csv").stdout
    assert "b,rbo_ext(p=0.8)," in csv and csv.strip().endswith(",a")
    for fmt in ("table", "markdown", "html"):
        out = run_cli("compare", *files, "--rbo", "0.8", "-m", "ndcg@10", "-f", fmt)
        assert out.exit_code == 0 and "Rank-biased overlap (p = 0.8)" in out.stdout
    plain = run_cli("compare", *files, "-m", "ndcg@10", "-f", "json").json()
    assert plain["rbo"] is None


@pytest.mark.parametrize("bad", ["1", "0", "-0.5", "1.5"])
def test_compare_refuses_a_persistence_outside_0_1(run_cli, write, bad):
    a, b, truth = _runs()
    files = [write("a.csv", a), write("b.csv", b), write("truth.csv", truth)]
    run = run_cli("compare", *files, "--rbo", bad)
    assert run.exit_code == 2
    # refused when the option is read, before any file is: its range is the option's
    (line,) = run.stderr.strip().splitlines()
    assert f"'--rbo': {float(bad)!r} is not in the range 0<x<1" in line


# -- compatibility (Clarke et al. 2020): ir_measures' Compat is the live oracle in
# test_ir_measures.py on tie-free runs; here the ideal ranking's tie rule and bounds

def _compat_brute(ranked: list[str], grades: dict[str, int], p: float, normalize: bool
                  ) -> float:
    relevant = [d for d in grades if grades[d] >= 1]
    place = {d: i for i, d in enumerate(ranked)}
    # equal grades in the list's order, retrieved ones first
    ideal = sorted(relevant, key=lambda d: (-grades[d], place.get(d, len(ranked))))
    depth = max(len(ranked), len(ideal))
    if not depth:
        return 0.0

    def rbo(a: list[str], b: list[str]) -> float:
        return sum(p ** (d - 1) * len(set(a[:d]) & set(b[:d])) / d
                   for d in range(1, depth + 1))

    if normalize:
        best = rbo(ideal, ideal)
        return rbo(ranked, ideal) / best if best else 0.0
    return rbo(ranked, ideal) / sum(p ** (d - 1) for d in range(1, depth + 1))


@pytest.mark.parametrize("params", ["", "(p=0.8)", "(normalize=False)", "(p=0.5,rel=2)"])
def test_compat_with_ties_and_graded_truth_equals_brute_force(params):
    rng = np.random.default_rng(11)
    rows, truth = [], []
    for u in range(30):
        items = [f"d{i:02d}" for i in rng.choice(40, int(rng.integers(0, 15)), replace=False)]
        scores = rng.integers(0, 4, len(items)).astype(float)  # many ties
        rows += [(f"u{u}", d, s) for d, s in zip(items, scores, strict=True)]
        judged = rng.choice(40, int(rng.integers(1, 12)), replace=False)
        truth += [(f"u{u}", f"d{i:02d}", int(rng.integers(0, 4))) for i in judged]
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    name = f"compat{params}"
    ev = rankeval.evaluate(preds, qrels, metrics=[name], zero_relevant_users="zero")
    got = dict(zip(ev.user_ids, ev.values(ev.specs[0]), strict=True))
    kw = dict(item.split("=") for item in params.strip("()").split(",") if item)
    p, threshold = float(kw.get("p", 0.95)), int(kw.get("rel", 1))
    for user, group in qrels.groupby("user_id"):
        mine = preds[preds.user_id == user]
        ranked = mine.sort_values(["score", "item_id"], ascending=[False, False]).item_id
        grades = {d: g if g >= threshold else 0 for d, g in zip(group.item_id, group.relevance,
                                                                  strict=True)}
        want = _compat_brute(list(ranked), grades, p, kw.get("normalize") != "False")
        assert got[user] == pytest.approx(want, abs=1e-12), user


def test_compat_of_the_ideal_ranking_is_1():
    truth = pd.DataFrame({"user_id": ["u"] * 4, "item_id": list("abcd"),
                          "relevance": [3, 1, 2, 0]})
    ideal = pd.DataFrame({"user_id": ["u"] * 3, "item_id": list("acb"), "rank": [1, 2, 3]})
    ev = rankeval.evaluate(ideal, truth, metrics=["compat", "compat(p=0.5)"])
    assert ev.metrics["compat"] == pytest.approx(1.0, abs=1e-15)
    assert ev.metrics["compat(p=0.5)"] == pytest.approx(1.0, abs=1e-15)
