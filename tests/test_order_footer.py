"""What ordered the lists, said by every report that names the tie rule (#52 item 4): where
the file's ranks (or its row order) ordered each list, no ``--ties`` rule ordered anything, so
the settings footer and the tie sensitivity note say so instead of naming ``--ties trec``; a
run ordered by its scores, or a tie-aware rule, still names its rule."""

from __future__ import annotations

import pandas as pd
import pytest

TRUTH = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "d"], "relevance": [1, 1]})
# tied scores in both lists, the ranks putting the relevant item second in u1's: the order of
# the ties moves ndcg@2, so the tie note gives its range and says what was reported
BOTH = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"],
                     "item_id": ["b", "a", "c", "d", "e"], "rank": [1, 2, 3, 1, 2],
                     "score": [1.0, 1.0, 0.5, 0.9, 0.9]})
# (columns kept, extra options) -> what ordered the lists, in the footer's words
CASES = {
    "ranks and scores": (["rank", "score"], [], "order: the file's ranks"),
    "ranks alone": (["rank"], [], "order: the file's ranks"),
    "ranks under provider": (["rank", "score"], ["--ties", "provider"],
                             "order: the file's ranks"),
    "row order": ([], [], "order: the file's row order"),
    "scores": (["score"], [], "ties trec"),
    "scores by --order-by": (["rank", "score"], ["--order-by", "score"], "ties trec"),
    "item-asc on scores": (["score"], ["--ties", "item-asc"], "ties item-asc"),
    "tie-aware under ranks": (["rank", "score"], ["--ties", "expected"], "ties expected"),
}
ORDER = {"order: the file's ranks": "rank", "order: the file's row order": "input"}


@pytest.fixture
def files(write):
    def made(columns: list[str]):
        return (write("run.csv", BOTH[["user_id", "item_id", *columns]]),
                write("truth.csv", TRUTH))
    return made


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_report_says_what_ordered_the_lists(run_cli, files, case, fmt):
    columns, extra, words = CASES[case]
    run, truth = files(columns)
    r = run_cli("score", run, truth, "-m", "ndcg@2", "-q", "-f", fmt, *extra)
    assert r.exit_code == 0, r.stderr
    out = r.stdout.replace("&#x27;", "'")
    assert words in out
    if words.startswith("order:"):  # no tie rule ordered anything: none is named
        assert "ties trec" not in out and "--ties trec" not in out
    if "rank" in columns and "score" in columns and words == "order: the file's ranks":
        assert "reported: tied scores in the order of the file's ranks" in out


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_records_what_ordered_the_lists(run_cli, files, case):
    columns, extra, words = CASES[case]
    run, truth = files(columns)
    inputs = run_cli("score", run, truth, "-m", "ndcg@2", "-q", "-f", "json", *extra
                     ).json()["inputs"]
    expected = ORDER.get(words, "score")
    if case == "tie-aware under ranks":
        expected = "rank"  # the ranks ordered; the rule scored their tied scores fairly
    assert inputs["predictions"]["order"] == expected
    assert inputs["truth"]["order"] is None


def test_compare_html_says_it_for_every_run(run_cli, files, write):
    run, truth = files(["rank", "score"])
    scored = write("scored.csv", BOTH[["user_id", "item_id", "score"]])
    same = run_cli("compare", run, run, truth, "-m", "ndcg@2", "-q", "-f", "html",
                   "--name", "a", "--name", "b").stdout.replace("&#x27;", "'")
    assert "order: the file's ranks" in same and "ties trec" not in same
    mixed = run_cli("compare", run, scored, truth, "-m", "ndcg@2", "-q", "-f", "html",
                    "--name", "ranked", "--name", "scored").stdout.replace("&#x27;", "'")
    assert "ranked: order: the file's ranks" in mixed and "scored: ties trec" in mixed


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_sampled_says_what_ranked_the_held_out_items(run_cli, write, fmt):
    from .conftest import SAMPLE

    scores = pd.read_csv(SAMPLE / "sampled_scores.csv", dtype={"user_id": str, "item_id": str})
    ranked = write("ranked.csv", scores.assign(rank=scores.groupby("user_id")["score"].rank(
        ascending=False, method="first").astype(int)))
    args = ["--candidates", "400", "-m", "hit_rate", "-k", "10", "-q", "-f", fmt]
    by_rank = run_cli("sampled", ranked, SAMPLE / "sampled_heldout.csv", *args)
    by_score = run_cli("sampled", SAMPLE / "sampled_scores.csv", SAMPLE / "sampled_heldout.csv",
                       *args)
    assert by_rank.exit_code == 0 and by_score.exit_code == 0, by_rank.stderr
    assert "ranked by the file's ranks, ties expected" in by_rank.stdout.replace("&#x27;", "'")
    assert "ranked by score" not in by_rank.stdout
    assert "ranked by score, ties expected" in by_score.stdout
    doc = run_cli("sampled", ranked, SAMPLE / "sampled_heldout.csv", *args[:-2], "-f", "json")
    assert list(doc.json()["ordered_by"].values()) == ["rank"]
