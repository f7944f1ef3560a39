"""A file's ranks can repeat (1, 1, 2), miss a rank (1, 3, 4: a gap) or both (1, 1, 3): each
mechanism has its own word (#52, wording: repeated ranks were called gaps), whatever the input
(CSV ordered by its ranks, CSV ordered by score, a TREC run whose rank field is never read), and
the order the lists get is the one they had (the values equal those of ranks 1, 2, 3)."""

from __future__ import annotations

import html
import json

import pytest

# Each user's ranks of items a, b, c (scores 3, 2, 1: the score order is a, b, c too).
CASES = {"repeated": (1, 1, 2), "gaps": (1, 3, 4), "both": (1, 1, 3)}
PLAIN = (1, 2, 3)
RANK_CODES = {"rank_gaps", "ranks_repeated", "score_orders", "scores_disagree_with_ranks"}
# The rank notices each input gets: None where the repeated ranks are an error (the ranks
# order the lists, so one rank for two items tells no order).
EXPECTED = {
    "csv": {"repeated": None, "gaps": {"rank_gaps"}, "both": None},
    "csv by score": {"repeated": {"ranks_repeated"}, "gaps": set(), "both": {"ranks_repeated"}},
    "trec": {"repeated": set(), "gaps": set(), "both": set()},
}
TRUTH = "user_id,item_id,relevance\nu,b,1\nv,c,1\n"  # b second, c third in the rank order


def _run(write, kind: str, ranks: tuple[int, int, int]):
    """Two users, u with ``ranks`` and v with 1, 2, 3, rows written last rank first (so the
    file's row order is not the ranks' order)."""
    rows = [(user, item, rank, score) for user, these in (("u", ranks), ("v", PLAIN))
            for item, rank, score in reversed(list(zip("abc", these, (3.0, 2.0, 1.0),
                                                       strict=True)))]
    if kind == "trec":
        return write("run.trec", "".join(f"{u} Q0 {i} {r} {s} tag\n" for u, i, r, s in rows))
    return write("run.csv", "user_id,item_id,rank,score\n"
                 + "".join(f"{u},{i},{r},{s}\n" for u, i, r, s in rows))


def _flags(kind: str) -> list[str]:
    return ["--order-by", "score"] if kind == "csv by score" else []


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", EXPECTED)
def test_each_rank_mechanism_has_its_word_and_keeps_the_order(run_cli, write, kind, case):
    truth = write("truth.csv", TRUTH)
    plain = run_cli("score", _run(write, kind, PLAIN), truth, "-m", "mrr@3,ndcg@3", "-f", "json",
                    *_flags(kind))
    assert plain.exit_code == 0, plain.stderr
    run = _run(write, kind, CASES[case])
    r = run_cli("score", run, truth, "-m", "mrr@3,ndcg@3", "-f", "json", *_flags(kind))
    expected = EXPECTED[kind][case]
    if expected is None:
        assert r.exit_code == 2 and "rank repeated within a user" in r.stderr, r.stderr
        assert "gap" not in r.stderr
        return
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {n["code"] for n in doc["notices"]} & RANK_CODES == expected
    # the order is the ranks' (or under score, the scores'): the values of ranks 1, 2, 3
    assert doc["metrics"] == json.loads(plain.stdout)["metrics"]
    assert doc["metrics"]["mrr@3"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    said = {n["code"]: n["message"] for n in doc["notices"]}
    for code in expected:
        assert said[code] in r.stderr
    assert ("gaps in their ranks" in r.stderr) == ("rank_gaps" in expected)
    assert ("repeated ranks" in r.stderr) == ("ranks_repeated" in expected)


@pytest.mark.parametrize("case", CASES)
def test_validate_says_repeated_and_missing_ranks_apart(run_cli, write, case):
    r = run_cli("validate", _run(write, "csv", CASES[case]), write("truth.csv", TRUTH))
    assert r.exit_code == (0 if case == "gaps" else 2), r.stdout + r.stderr
    text = r.stdout + r.stderr
    assert ("rank repeated within a user" in text) == (case != "gaps")
    assert ("gaps in their ranks" in text) == (case != "repeated")  # 1, 1, 3 misses rank 2


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html", "csv", "trec"])
@pytest.mark.parametrize("kind", ["csv", "csv by score"])
def test_every_report_format_gives_the_ranks_word(run_cli, write, fmt, kind):
    case = "gaps" if kind == "csv" else "repeated"
    word = "gaps in their ranks" if kind == "csv" else "repeated ranks (one rank given"
    r = run_cli("score", _run(write, kind, CASES[case]), write("truth.csv", TRUTH),
                "-m", "mrr@3", "-f", fmt, *_flags(kind))
    assert r.exit_code == 0, r.stderr
    assert word in r.stderr
    if fmt in ("json", "html"):  # the formats that hold their notices
        assert word in html.unescape(r.stdout)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("out", ["run.trec", "run.json", "run.jsonl", "out.csv"])
def test_convert_writes_an_order_only_the_ranks_tell(run_cli, write, tmp_path, case, out):
    """A ranked format (TREC, JSON) writes each list in one order, numbered 1, 2, 3: a
    repeated rank tells none (convert put the tied rows in file order, silently), so it is
    the error score gives; missing ranks keep their order; a row format keeps the rows."""
    run = write("ranks.csv", "user_id,item_id,rank\n"
                + "".join(f"u,{i},{r}\n" for i, r in reversed(list(zip("abc", CASES[case],
                                                                         strict=True)))))
    r = run_cli("convert", run, tmp_path / out)
    ranked = out in ("run.trec", "run.json")
    if ranked and case != "gaps":
        assert r.exit_code == 2 and "rank repeated within a user" in r.stderr, r.stderr
        assert not (tmp_path / out).exists()
        return
    assert r.exit_code == 0, r.stderr
    text = (tmp_path / out).read_text()
    if out == "run.trec":
        assert [line.split()[2] for line in text.splitlines()] == ["a", "b", "c"]
    elif out == "run.json":
        doc = json.loads(text)["u"]
        assert sorted(doc, key=doc.__getitem__, reverse=True) == ["a", "b", "c"]
