"""trec_eval compatibility: TREC files in, trec_eval's conventions, names and output, checked
against pytrec_eval (trec_eval's own code) on generated data, ties included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval  # a missing oracle fails these tests; it never skips them
from hypothesis import given, settings
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.compat import ORDER, translate
from rankeval.errors import InputError

from .datagen import as_dicts, generate


def translate_order(trec_name: str) -> int:
    """The place of a trec_eval output name (``P_5``, ``map``) in trec_eval's order."""
    return max((ORDER.index(root), len(root)) for root in ORDER
               if trec_name == root or trec_name.startswith(root + "_"))[0]


MEASURES = ["P.5,10", "recall.10", "map", "map_cut.10", "ndcg", "ndcg_cut.10", "recip_rank",
            "Rprec", "success.10"]
TREC_NAMES = ["P_5", "P_10", "recall_10", "map", "map_cut_10", "ndcg", "ndcg_cut_10",
              "recip_rank", "Rprec", "success_10"]


def write_run(preds: pd.DataFrame, path) -> None:
    """A TREC run with ranks in score order and a deliberately misleading rank column order."""
    frame = preds.sort_values(["user_id", "score"], ascending=[True, False])
    rank = frame.groupby("user_id").cumcount() + 1
    lines = [f"{u} Q0 {i} {r} {s!r} tag\n" for u, i, r, s in
             zip(frame.user_id, frame.item_id, rank[::-1], frame.score, strict=True)]
    path.write_text("".join(lines))


def write_qrels(truth: pd.DataFrame, path) -> None:
    rows = truth.itertuples(index=False)
    path.write_text("".join(f"{u}\t0\t{i}\t{int(r)}\n" for u, i, r in rows))


def trec_lines(text: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in text.splitlines():
        name, user, value = line.split("\t")
        out[(name.strip(), user)] = value
    return out


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("ties", [False, True], ids=["tie-free", "tied-scores"])
def test_compat_trec_eval_matches_pytrec_eval(tmp_path, run_cli, seed, ties):
    preds, truth = generate(seed, 120, 150, 25, 15)
    if ties:  # few distinct scores: the tie order decides most lists
        preds = preds.assign(score=np.round(preds.score, 0))
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES) - {"P_5", "P_10"}
                                            | {"P.5", "P.10"}).evaluate(run)
    run_path, qrels_path = tmp_path / "a.run", tmp_path / "a.qrels"
    write_run(preds, run_path)
    write_qrels(truth, qrels_path)

    ours = evaluate(str(run_path), str(qrels_path), MEASURES, compat="trec_eval-9",
                    skip_missing_users=False)  # pytrec_eval is 9.0.8; -c
    assert [str(s) for s in ours.specs] == [
        "precision@5", "precision@10", "recall@10", "map@all", "map@10", "ndcg@all", "ndcg@10",
        "mrr@all", "r_precision", "hit_rate@10"]
    n_truth_users = truth.user_id.nunique()
    assert ours.users.evaluated == n_truth_users  # trec_eval -c: every qrels user counts
    table = ours.per_user.set_index("user_id")
    assert set(theirs) <= set(table.index)
    for spec, name in zip(ours.specs, TREC_NAMES, strict=True):
        for user, values in theirs.items():
            assert table.loc[user, str(spec)] == pytest.approx(values[name], abs=1e-9), (
                name, user)
        # Users pytrec_eval does not see (no predictions) count as 0, as with trec_eval -c.
        missing = set(table.index) - set(theirs)
        assert (table.loc[sorted(missing), str(spec)] == 0).all()
        expected = sum(v[name] for v in theirs.values()) / n_truth_users
        assert ours.metrics[str(spec)] == pytest.approx(expected, abs=1e-9)

    # The command prints the same numbers in trec_eval's own layout and names.
    args = ["score", run_path, qrels_path, "--compat", "trec_eval-9", "--no-skip-missing-users",
            "-f", "trec", "--per-query"]
    for m in MEASURES:
        args += ["-m", m]
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    printed = trec_lines(r.stdout)
    for name in TREC_NAMES:
        for user, values in theirs.items():
            assert printed[(name, user)] == f"{values[name]:.4f}", (name, user)
        assert (name, "all") in printed
    # in trec_eval's order of measures, whatever the order of -m (map before P)
    first = r.stdout.splitlines()[0].split("\t")[0].strip()
    assert first == min(TREC_NAMES, key=lambda n: translate_order(n)), first


def test_tied_scores_are_reported(tmp_path, run_cli):
    preds, truth = generate(5, 50, 60, 20, 10)
    preds = preds.assign(score=np.round(preds.score, 0))
    r = evaluate(preds, truth, ["ndcg_cut.5,10"], compat="trec_eval")
    assert any(n.code == "ties_at_cutoff" for n in r.notices)


def test_translate_trec_eval_measure_names():
    assert translate(["P.5,10", "map", "ndcg_cut_20", "recip_rank", "Rprec", "success.1"]) == [
        "precision@5", "precision@10", "map@all", "ndcg@20", "mrr@all", "r_precision",
        "hit_rate@1"]
    assert translate(["P"])[:3] == ["precision@5", "precision@10", "precision@15"]
    assert translate(["ndcg@10", "f1"]) == ["ndcg@10", "f1"]  # rankeval names pass through


def test_explicit_options_override_the_compat_preset_and_are_recorded(run_cli, write):
    """trec_eval itself takes -l 4 (relevance >= 4); so does --compat trec_eval."""
    run = write("a.run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    qrels = write("a.qrels", "q1 0 d1 2\nq1 0 d2 4\n")
    r = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map",
                "--relevance-threshold", "4", "-f", "json")
    assert r.exit_code == 0, r.stderr
    settings = r.json()["settings"]
    assert settings["relevance_threshold"] == 4.0
    assert settings["compat_overrides"] == ["relevance_threshold"]
    assert settings["ap_denominator"] == "relevant"  # the rest of the preset stays
    assert r.json()["metrics"]["map@all"] == 0.5  # only d2 (4) is relevant, at rank 2
    table = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map",
                    "--relevance-threshold", "4")
    assert "compat trec_eval except relevance_threshold" in table.stdout
    same = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map",
                   "--ap-denominator", "relevant", "-f", "json")
    assert same.json()["settings"]["compat_overrides"] == []  # agrees with the preset


def test_compat_settings_are_recorded(run_cli, write):
    run = write("a.run", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    qrels = write("a.qrels", "q1 0 d2 1\nq2 0 d9 0\n")
    r = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map", "-f", "json")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert report["settings"]["compat"] == "trec_eval"
    assert report["settings"]["ap_denominator"] == "relevant"
    assert report["settings"]["zero_relevant_users"] == "zero"
    assert report["settings"]["relevance_threshold"] == 1.0
    # trec_eval without -c: q2, missing from the run, is left out (10.0 stops with an error)
    assert report["settings"]["skip_missing_users"] is True
    assert report["metrics"] == {"map@all": 0.5}
    complete = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map", "-f", "json",
                       "--no-skip-missing-users")  # trec_eval -c
    assert complete.json()["metrics"] == {"map@all": 0.25}  # q1: 1/2, q2 (nothing relevant): 0
    assert complete.json()["settings"]["compat_overrides"] == ["skip_missing_users"]
    table = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "map")
    assert "compat trec_eval" in table.stdout
    assert "@all" in table.stdout


def test_rank_column_of_a_run_is_ignored(write):
    run = write("a.run", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 5.0 t\n")  # d2 scores higher
    qrels = write("a.qrels", "q1 0 d2 1\n")
    assert evaluate(str(run), str(qrels), ["mrr@1"]).metrics["mrr@1"] == 1.0


def test_trec_whitespace_gzip_and_stdin(write, run_cli):
    import gzip

    text = "q1  Q0\td1 1 1.0 t\r\n  q1 Q0 d2 2 0.5 t  \n"
    run = write("a.run.gz", gzip.compress(text.encode()))
    qrels = write("q.txt", "q1 0 d2 1\n")
    r = evaluate(str(run), str(qrels), ["mrr@2"], truth_format="qrels")
    assert r.metrics["mrr@2"] == 0.5
    piped = run_cli("score", "-", qrels, "--preds-format", "trec", "--truth-format", "qrels",
                    "-m", "mrr@2", "-f", "json", input=text)
    assert piped.json()["metrics"]["mrr@2"] == 0.5


_RUN = ["q1 Q0 d1 1 1.5 t", "q1 Q0 d2 2 0.5 t", "q2 Q0 d3 1 2 t"]
_QRELS = ["q1 0 d1 1", "q1 0 d2 0", "q2 0 d3 2"]
# Every way trec_eval's whitespace can be written: a separator is any run of blanks
_SPACINGS = {
    "tabs": lambda line: line.replace(" ", "\t"),
    "runs": lambda line: line.replace(" ", "  \t "),
    "leading": lambda line: "  " + line,
    "trailing": lambda line: line + " \t",
    "crlf": lambda line: line + "\r",
    "form feeds": lambda line: line.replace(" ", "\f\v"),
}


@pytest.mark.parametrize("role, lines", [("predictions", _RUN), ("truth", _QRELS)])
@pytest.mark.parametrize("spacing", sorted(_SPACINGS))
@pytest.mark.parametrize("where", ["every line", "one line", "last line, no newline"])
def test_every_spacing_reads_as_single_spaces(role, lines, spacing, where):
    """The parser takes a file written with single spaces through a quick path and any other
    spacing through the passes it needs: both read the same table."""
    from rankeval.io.formats import trec

    plain = trec.parse(("\n".join(lines) + "\n").encode(), role, "f")
    change = _SPACINGS[spacing]
    spaced = [change(x) if where == "every line" or i == 1 else x for i, x in enumerate(lines)]
    text = "\n".join(spaced) + ("" if where.endswith("no newline") else "\n")
    got = trec.parse(text.encode(), role, "f")
    assert got.equals(plain) and got.schema.metadata == plain.schema.metadata


@pytest.mark.parametrize("blank", ["", " ", "\t", " \r"])
@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_blank_line_anywhere_is_named(blank, at):
    from rankeval.errors import InputError
    from rankeval.io.formats import trec

    lines = list(_RUN)
    lines.insert(at, blank)
    with pytest.raises(InputError, match=f"1 blank line, e.g. line {at + 1}"):
        trec.parse(("\n".join(lines) + "\n").encode(), "predictions", "f")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.run", "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5\n", "line 2 ('q1 Q0 d2 2 0.5')"),
        ("a.run", "q1 0 d1 1\n", "1 of them have 4 fields, as in a qrels file"),
        ("a.run", "q1 Q0 d1 1 high t\n", "column 'score': 1 non-numeric value, e.g. line 1"),
        ("a.run", "q1 Q0 d1 1 1.0 t\n\nq1 Q0 d2 2 0.5 t\n", "1 blank line, e.g. line 2"),
        ("a.run", "q1 Q0 d1 1 nan t\n", "NaN"),
        ("a.json", '{"q1": {"d1": "x"}}', "1 value that is not a finite number, e.g. entry q1/d1"),
        ("a.json", '{"q1": [1, 2]}', "not an object of items"),
        ("a.json", '[{"q1": 1}]', "expected an object"),
        ("a.json", '{"q1": {"d1": 1}', "not valid JSON"),
        ("a.jsonl", '{"user_id": "q1", "item_id": "d1", "score": 1}\n{"user_id": \n',
         "line 2 is not valid JSON"),
    ],
)
def test_malformed_lines_are_exit_2_naming_the_line(write, run_cli, name, text, message):
    preds = write(name, text)
    truth = write("t.csv", "user_id,item_id,relevance\nq1,d1,1\n")
    r = run_cli("score", preds, truth)
    assert r.exit_code == 2
    assert message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    with pytest.raises(InputError):
        evaluate(str(preds), str(truth))


def test_qrels_in_every_layout_give_the_same_numbers(write):
    preds, truth = generate(21, 60, 80, 15, 10)
    qrels, run = as_dicts(preds, truth)
    import json

    files = {
        "csv": (write("p.csv", preds), write("t.csv", truth)),
        "parquet": (write("p.parquet", preds), write("t.parquet", truth)),
        "json": (write("p.json", json.dumps(run)), write("t.json", json.dumps(qrels))),
        "jsonl": (
            write("p.jsonl", preds.to_json(orient="records", lines=True)),
            write("t.jsonl", truth.to_json(orient="records", lines=True)),
        ),
    }
    run_path, qrels_path = write("p.run", ""), write("t.qrels", "")
    write_run(preds, run_path)
    write_qrels(truth, qrels_path)
    files["trec"] = (run_path, qrels_path)
    results = {
        fmt: evaluate(str(p), str(t), ["ndcg", "map", "r_precision", "mrr@all"], [5, 10]).metrics
        for fmt, (p, t) in files.items()
    }
    for fmt, metrics in results.items():
        assert metrics == results["csv"], fmt


def test_per_query_needs_the_trec_format(run_cli, write):
    run = write("a.run", "q1 Q0 d1 1 2.0 t\n")
    qrels = write("a.qrels", "q1 0 d1 1\n")
    r = run_cli("score", run, qrels, "--per-query")
    assert r.exit_code == 2
    assert "--per-user FILE" in r.stderr
    plain = run_cli("score", run, qrels, "-f", "trec", "-m", "ndcg@5")
    assert plain.stdout == f"{'ndcg@5':<22}\tall\t1.0000\n"  # rankeval names without --compat


SET_MEASURES = {"num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
                "set_P": "set_precision", "set_recall": "set_recall", "set_F": "set_f1"}


@pytest.mark.parametrize("seed", [21, 22])
def test_whole_list_measures_match_pytrec_eval(tmp_path, run_cli, seed):
    """trec_eval's num_ret, num_rel, num_rel_ret (summed over users) and set_P/recall/F."""
    preds, truth = generate(seed, 80, 120, 30, 12)
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(SET_MEASURES)).evaluate(run)
    run_path, qrels_path = tmp_path / "a.run", tmp_path / "a.qrels"
    write_run(preds, run_path)
    write_qrels(truth, qrels_path)
    ours = evaluate(str(run_path), str(qrels_path), list(SET_MEASURES), compat="trec_eval-9",
                    skip_missing_users=False)
    table = ours.per_user.set_index("user_id")
    assert len(theirs) > 40
    for trec, mine in SET_MEASURES.items():
        for user, values in theirs.items():
            assert table.loc[user, mine] == pytest.approx(values[trec], abs=1e-12), (trec, user)
    # trec_eval -c: users without predictions retrieve nothing but keep their relevant items.
    missing = sorted(set(table.index) - set(theirs))
    assert missing and (table.loc[missing, "num_ret"] == 0).all()
    relevant = truth[truth.relevance >= 1].groupby("user_id").size()
    assert (table.loc[missing, "num_rel"] == relevant.reindex(missing, fill_value=0)).all()
    # num_* overall are sums, as trec_eval's 'all' lines; set_* are means.
    assert ours.metrics["num_ret"] == sum(v["num_ret"] for v in theirs.values())
    assert ours.metrics["num_rel"] == relevant.reindex(table.index, fill_value=0).sum()
    assert ours.metrics["set_recall"] == pytest.approx(
        sum(v["set_recall"] for v in theirs.values()) / len(table), abs=1e-12)
    r = run_cli("score", run_path, qrels_path, "--compat", "trec_eval", "-f", "trec",
                *[f"-m{m}" for m in SET_MEASURES])
    printed = trec_lines(r.stdout)
    assert printed[("num_ret", "all")] == str(sum(int(v["num_ret"]) for v in theirs.values()))
    assert ("set_F", "all") in printed


def test_fields_past_the_layout_are_read_as_trec_eval_reads_them(run_cli, write):
    """trec_eval's own test/results.trunc has words after the 6th field: trec_eval reads the
    first 6, and so does rankeval, with a warning counting the lines. A run given as the
    truth (every line 6 fields) is still refused, never read as qrels of ranks."""
    run = write("a.run", "q1 Q0 d1 1 2.0 run more junk\nq1 Q0 d2 2 1.0 run\n")
    qrels = write("a.qrels", "q1 0 d1 1 extra\n")
    r = run_cli("score", run, qrels, "-m", "mrr@10", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["metrics"] == {"mrr@10": 1.0}
    assert "1 line of " in r.stderr and "a.run has fields past the TREC layout's" in r.stderr
    assert "a.qrels has fields past" in r.stderr
    assert r.json()["inputs"]["predictions"]["tag"] == "run"  # the last line's: runid
    swapped = run_cli("score", run, run, "--truth-format", "qrels")
    assert swapped.exit_code == 2 and "as in a run: give it as PREDS" in swapped.stderr
    short = write("b.run", "q1 Q0 d1 1 2.0\n")
    bad = run_cli("score", short, qrels)
    assert bad.exit_code == 2 and "without the 6 fields" in bad.stderr
    assert "as in a qrels file" not in bad.stderr  # it has 5


def test_comment_lines_are_skipped_as_trec_eval_10_does(run_cli, write):
    """A line whose first field starts with # is a comment (trec_eval 10.0); a # inside an id
    is data; errors still name the file's own line numbers."""
    run = write("a.run", "# a run\nq1 Q0 d#1 1 2.0 t\n  # indented\nq1 Q0 d2 2 1.0 t\n")
    qrels = write("a.qrels", "#qid iter docno rel\nq1 0 d#1 1\n")
    r = run_cli("score", run, qrels, "-m", "mrr@10,precision@2", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["metrics"] == {"mrr@10": 1.0, "precision@2": 0.5}
    assert r.json()["inputs"]["predictions"]["rows"] == 2
    bad = write("b.run", "# head\n# more\nq1 Q0 d1 1 2.0 t\nq1 Q0 d2\n")
    err = run_cli("score", bad, qrels)
    assert err.exit_code == 2 and "line 4" in err.stderr, err.stderr


_FIELD = st.text(alphabet="ab#7.-é", min_size=1, max_size=3)
_GAPS = st.sampled_from([" ", " ", " ", "  ", "\t", " \t", "\r"])
_EDGES_OF_LINES = st.sampled_from(["", "", "", " ", "\t", "\r"])


@st.composite
def _trec_texts(draw, n_fields: int) -> tuple[str, bool]:
    """A TREC text of 1-6 lines, each of ``n_fields`` fields (sometimes one fewer or more,
    a comment, or blank), fields written from a few characters among them ``#``, separated
    by any blanks; and whether it is as trec_eval's own tools write it (one space, nothing
    else)."""
    lines, plain = [], []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["line"] * 6 + ["short", "long", "comment", "blank"]))
        count = n_fields + {"short": -1, "long": 1}.get(kind, 0)
        fields = draw(st.lists(_FIELD, min_size=count, max_size=count))
        if kind == "line" and fields[0].startswith("#"):
            kind = "comment"
        if kind == "comment" and not fields[0].startswith("#"):
            fields[0] = "#" + fields[0]
        gaps = [draw(_GAPS) for _ in fields[1:]]
        line = fields[0] + "".join(g + f for g, f in zip(gaps, fields[1:], strict=True))
        left, right = draw(_EDGES_OF_LINES), draw(_EDGES_OF_LINES)
        line = "" if kind == "blank" else left + line + right
        plain.append(kind == "line" and not left and not right and all(g == " " for g in gaps))
        lines.append(line)
    ending = draw(st.sampled_from(["\n", "", "\n\n"]))
    while lines and not lines[-1]:  # blank lines at the end are newlines at the end: no lines
        lines.pop()
        plain.pop()
    return "\n".join(lines) + ending, bool(plain) and all(plain)


@pytest.mark.parametrize("role", ["predictions", "truth"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_one_pass_read_is_the_spaced_read(role, data):
    """Every TREC text, written with single spaces or any other way (blanks, comments, blank
    lines, fields too few or too many, ``#`` inside ids), reads the same through ``parse``
    as through the passes for spaced text, or fails with the same message; and a text as
    trec_eval's tools write it takes the one pass."""
    from rankeval.io.formats import trec

    n_fields = trec.LAYOUTS[role][0]
    text, plain = data.draw(_trec_texts(n_fields))
    raw = text.encode()

    def outcome(read):
        try:
            table = read(raw, role, "f")
        except InputError as exc:
            return str(exc)
        return table.to_pydict(), table.schema, table.schema.metadata

    assert outcome(trec.parse) == outcome(trec.spaced)
    assert (trec._as_written(raw, n_fields) is not None) == plain, text


def test_a_blank_line_before_closing_comments_is_named():
    """Comments dropped from the end leave the blank line before them the text's last line:
    named as any blank line (it was read as a line with no tag, an IndexError)."""
    from rankeval.io.formats import trec

    with pytest.raises(InputError, match=r"1 blank line, e\.g\. line 2"):
        trec.parse(b"q1 Q0 d1 1 1.0 t\n\n# closing note\n", "predictions", "f")
