"""The catalogue of hostile inputs: each is scored correctly or refused in one line with exit 2,
and a refused run writes nothing."""

from __future__ import annotations

import gzip
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.io.encode import padded

from .conftest import SAMPLE

TRUTH_TEXT = "user_id,item_id,relevance\nu1,A,1\nu1,B,2\nu2,C,1\n"
PREDS_TEXT = "user_id,item_id,rank\nu1,A,1\nu1,B,2\nu2,C,1\n"


def _score(run_cli, write, preds_text, truth_text=TRUTH_TEXT, *args, name="p.csv"):
    p = write(name, preds_text)
    t = write("t.csv", truth_text)
    return run_cli("score", p, t, "-m", "ndcg@2", "-f", "json", *args)


def _one_line_error(r, *needles):
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: "), r.stderr
    assert "Traceback" not in r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_bom_and_crlf_are_read_as_plain_csv(run_cli, write):
    text = "\ufeff" + PREDS_TEXT.replace("\n", "\r\n")
    r = _score(run_cli, write, text)
    assert r.exit_code == 0, r.stderr
    plain = _score(run_cli, write, PREDS_TEXT)
    assert r.json()["metrics"] == plain.json()["metrics"]


def test_quoted_commas_and_line_breaks_in_ids(run_cli, write):
    preds = 'user_id,item_id,rank\nu1,"A, the first",1\nu1,"B\nsecond",2\n'
    truth = 'user_id,item_id,relevance\nu1,"A, the first",1\nu1,"B\nsecond",1\n'
    r = _score(run_cli, write, preds, truth)
    assert r.exit_code == 0, r.stderr
    assert r.json()["metrics"]["ndcg@2"] == 1.0


def test_extra_columns_are_ignored(run_cli, write):
    r = _score(run_cli, write, "user_id,note,item_id,rank,extra\nu1,x,A,1,\nu2,y,C,1,z\n")
    assert r.exit_code == 0, r.stderr


def test_whitespace_padded_ids_are_kept_and_reported(run_cli, write):
    r = _score(run_cli, write, "user_id,item_id,rank\nu1, A,1\nu2,C,1\n")
    assert r.exit_code == 0
    assert "1 row has ids with leading or trailing whitespace" in r.stderr
    # ' A' is not 'A': u1's hit is lost, as the ids say
    assert r.json()["users"]["evaluated"] == 2


def test_unicode_ids(run_cli, write):
    r = _score(run_cli, write, "user_id,item_id,rank\nü1,日本,1\n", "user_id,item_id\nü1,日本\n")
    assert r.exit_code == 0
    assert r.json()["metrics"]["ndcg@2"] == 1.0


def test_integer_and_text_ids_meet_as_text(run_cli, write):
    """'007' and '7' are different users: files that share no user are refused, since every
    number would be 0 (the README's exit-2 case)."""
    r = _score(run_cli, write, "user_id,item_id,rank\n007,1,1\n", "user_id,item_id\n7,1\n")
    _one_line_error(r, "shares no user id")
    assert "'7' and '007' differ" in r.stderr
    skipped = _score(run_cli, write, "user_id,item_id,rank\n007,1,1\n",
                     "user_id,item_id\n7,1\n", "--skip-missing-users")
    _one_line_error(skipped, "shares no user id")
    shared = _score(run_cli, write, "user_id,item_id,rank\n7,1,1\n", "user_id,item_id\n7,1\n")
    assert shared.exit_code == 0 and shared.json()["metrics"]["ndcg@2"] == 1.0


def test_scores_that_contradict_ranks_are_a_warning(run_cli, write):
    r = _score(run_cli, write, "user_id,item_id,rank,score\nu1,A,1,0.1\nu1,B,2,0.9\n")
    assert r.exit_code == 0
    assert "scores that rise as their ranks fall" in r.stderr


@pytest.mark.parametrize(
    ("make", "needles"),
    [
        (lambda w: w("p.csv.gz", gzip.compress(PREDS_TEXT.encode())[:-12]), ["p.csv.gz"]),
        (lambda w: w("p.parquet", b"PAR1\x00\x00garbage"), ["not a readable Parquet file"]),
        (lambda w: w("p.parquet", (SAMPLE / "preds.parquet").read_bytes()[:500]),
         ["not a readable Parquet file"]),
        (lambda w: w("p.csv", "user_id|item_id|rank\nu1|A|1\n"), ["pipe-separated",
                                                                   "--delimiter"]),
        (lambda w: w("p.csv", ""), ["file is empty"]),
        (lambda w: w("p.csv", "user_id,item_id,rank\n"), ["no data rows"]),
        (lambda w: w("p.run", "u1 Q0 A 1\n"), ["line 1"]),
    ],
    ids=["truncated-gzip", "not-parquet", "truncated-parquet", "wrong-delimiter", "empty",
         "header-only", "trec-too-few-fields"],
)
def test_damaged_files(run_cli, write, make, needles):
    p = make(write)
    t = write("t.csv", TRUTH_TEXT)
    r = run_cli("score", p, t)
    _one_line_error(r, *needles)


def test_a_directory_and_a_missing_path(run_cli, write, tmp_path):
    t = write("t.csv", TRUTH_TEXT)
    _one_line_error(run_cli("score", tmp_path, t, "--preds-format", "csv"), "is a directory")
    _one_line_error(run_cli("score", tmp_path / "nope.csv", t), "no such file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file(run_cli, write):
    p = write("p.csv", PREDS_TEXT)
    p.chmod(0)
    _one_line_error(run_cli("score", p, write("t.csv", TRUTH_TEXT)), "permission denied")


def test_outputs_under_a_file_are_refused_before_reading(run_cli, write, tmp_path):
    (tmp_path / "no").write_text("")
    r = _score(run_cli, write, PREDS_TEXT, TRUTH_TEXT, "-o", str(tmp_path / "no" / "r.json"))
    _one_line_error(r, "is not a directory")
    r = _score(run_cli, write, PREDS_TEXT, TRUTH_TEXT, "--per-user", str(tmp_path / "no/u.csv"))
    _one_line_error(r, "is not a directory")


def test_a_refused_run_writes_no_output(run_cli, write, tmp_path):
    out, users = tmp_path / "report.json", tmp_path / "users.csv"
    r = _score(run_cli, write, "user_id,item_id,rank\nu1,A,1\nu1,A,2\n", TRUTH_TEXT,
               "-o", str(out), "--per-user", str(users))
    assert r.exit_code == 2
    assert not out.exists() and not users.exists()
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".tmp")]


def test_an_interrupted_write_leaves_the_old_report(tmp_path):
    from rankeval.io.output import write_atomic

    target = tmp_path / "report.json"
    target.write_text("old")

    def crash(tmp: str) -> None:
        with open(tmp, "w") as fh:
            fh.write("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(target), crash)
    assert target.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["report.json"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--k", "0"], "positive integer"),
        (["--k", "-3"], "positive integer"),
        (["--k", "x"], "positive integer"),
        (["-m", "nope"], "unknown metric"),
        (["--gain", "cubic"], "--gain"),
        (["--per-user", "-", "-f", "json"], "-o FILE"),
    ],
)
def test_bad_options(run_cli, write, args, needle):
    p, t = write("p.csv", PREDS_TEXT), write("t.csv", TRUTH_TEXT)
    _one_line_error(run_cli("score", p, t, *args), needle)


def test_library_sees_the_same_errors(write):
    from rankeval.errors import InputError

    p = write("p.csv", "user_id,item_id,rank\nu1,A,1\nu1,A,2\n")
    with pytest.raises(InputError, match="more than once"):
        evaluate(str(p), str(write("t.csv", TRUTH_TEXT)))


_EDGES = st.sampled_from([" ", "\t", "\n", "\x0b", "\x0c", "\r", "\x01", "\x1f", "\x7f",
                          "\u00a0", "\u2003", "\u3000", "\u200b", "é", "日", "a", "7", ""])


@given(st.lists(st.tuples(_EDGES, st.text(max_size=4), _EDGES), max_size=30),
       st.integers(0, 3))
def test_padded_ids_are_found_as_unicode_trims_them(parts, start):
    """The byte-level screen (first and last bytes) finds exactly the ids Arrow's Unicode
    whitespace trim changes, at any slice offset."""
    ids = pa.array([a + b + c for a, b, c in parts], pa.string()).slice(start)
    expected = pc.not_equal(ids, pc.utf8_trim_whitespace(ids)).to_pylist()
    found = padded(ids)
    assert (found.tolist() if found is not None else [False] * len(ids)) == expected
