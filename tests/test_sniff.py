"""Formats told from content (#52 item 2): standard input and a name without a known extension
(``qrels.txt``, ``run``) are read by what their first lines are: every format, for the run, the
truth and an extra input, from a file and from stdin, gives what the named file gives. A
content that reads two ways (or none) is one line asking for the option: never a guess."""

from __future__ import annotations

import gzip
import json

import pytest

from .conftest import SAMPLE

# format -> the extension that names it (the reference reading)
FORMATS = {"trec": None, "csv": "csv", "tsv": "tsv", "semicolon": "csv", "pipe": "csv",
           "json": "json", "jsonl": "jsonl", "parquet": "parquet"}
EXT = {"predictions": {"trec": "run"}, "truth": {"trec": "qrels"}}


def _named(tmp_path, run_cli, role: str, fmt: str):
    """The sample's run or truth written in ``fmt`` under a name that says it."""
    source = SAMPLE / ("preds.csv" if role == "predictions" else "truth.csv")
    ext = FORMATS[fmt] or EXT[role][fmt]
    path = tmp_path / f"{role}.{fmt}.{ext}"
    if fmt in ("semicolon", "pipe"):
        sep = ";" if fmt == "semicolon" else "|"
        path.write_text(source.read_text().replace(",", sep))
    else:
        r = run_cli("convert", source, path, "--kind", role, "-q")
        assert r.exit_code == 0, r.stderr
    return path


def _anonymous(path, name: str, zipped: bool = False):
    """The same bytes under a name without a known extension."""
    out = path.with_name(name)
    data = path.read_bytes()
    out.write_bytes(gzip.compress(data) if zipped else data)
    return out


def _metrics(r):
    assert r.exit_code == 0, r.stderr
    return r.json()["metrics"]


METRICS = ["-m", "ndcg@10,ap@10,recall@5", "-f", "json", "-q"]


# Parquet compresses its own pages: it is never gzipped whole
PLACES = [(fmt, where) for fmt in FORMATS for where in ("no-extension", "txt", "gzip", "stdin")
          if not (fmt == "parquet" and where == "gzip")]


@pytest.mark.parametrize(("fmt", "where"), PLACES)
@pytest.mark.parametrize("role", ["predictions", "truth"])
def test_every_format_for_each_role_from_a_file_or_stdin(run_cli, tmp_path, fmt, role, where):
    named = _named(tmp_path, run_cli, role, fmt)
    other = SAMPLE / ("truth.csv" if role == "predictions" else "preds.csv")
    pair = (named, other) if role == "predictions" else (other, named)
    own = ([f"--{'preds' if role == 'predictions' else 'truth'}-delimiter", "|"]
           if fmt == "pipe" else [])
    expected = _metrics(run_cli("score", *pair, *METRICS, *own))
    if where == "stdin":
        given, data = "-", named.read_bytes()
    else:
        name = {"no-extension": "data", "txt": "data.txt", "gzip": "data"}[where]
        given, data = _anonymous(named, name, where == "gzip"), None
    pair = (given, other) if role == "predictions" else (other, given)
    assert _metrics(run_cli("score", *pair, *METRICS, input=data)) == expected


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
def test_an_extra_input_is_told_from_its_content(run_cli, tmp_path, fmt):
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    train = tmp_path / f"train.{fmt}"
    table = pa_csv.read_csv(SAMPLE / "train.csv")
    if fmt == "parquet":
        pq.write_table(table, train)
    elif fmt == "jsonl":
        train.write_text("".join(json.dumps(row) + "\n" for row in table.to_pylist()))
    else:
        text = (SAMPLE / "train.csv").read_text()
        train.write_text(text.replace(",", "\t") if fmt == "tsv" else text)
    args = [SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-m", "novelty@10,arp@10", "-f",
            "json", "-q"]
    expected = _metrics(run_cli("score", *args, "--train", train))
    assert _metrics(run_cli("score", *args, "--train", _anonymous(train, "train"))) == expected


def test_a_json_dict_of_dicts_on_one_line_is_json_not_json_lines(run_cli, tmp_path):
    truth = tmp_path / "qrels"
    truth.write_text('{"u1": {"a": 1, "b": 0}, "u2": {"c": 2}}\n')
    run = tmp_path / "run"
    run.write_text('{"u1": {"a": 0.9, "b": 0.5}, "u2": {"c": 0.1, "a": 0.7}}\n')
    r = run_cli("score", run, truth, "-m", "mrr@all", "-f", "json", "-q")
    assert _metrics(r) == {"mrr@all": pytest.approx(0.75)}


AMBIGUOUS = {  # content -> what the one line asks for (the input is the truth)
    "a,b;c,d\nx,y;z,w\n": "name its delimiter with --truth-delimiter (',' or ';')",
    "user_id|item_id,relevance\nu1|a,1\n": "name its delimiter with --truth-delimiter",
    "just some words\nand more words\n": "name it with --truth-format",
    "1,2,3\n4,5,6\n": "name it with --truth-format",  # no header: not a guess
    "q1 0 d1\nq2 0 d2\n": "name it with --truth-format",
}


@pytest.mark.parametrize("content", list(AMBIGUOUS))
@pytest.mark.parametrize("where", ["file", "stdin"])
def test_content_that_reads_two_ways_or_none_is_one_line(run_cli, tmp_path, content, where):
    path = tmp_path / "truth"
    path.write_text(content)
    given = "-" if where == "stdin" else path
    r = run_cli("score", SAMPLE / "preds.csv", given,
                input=content if where == "stdin" else None)
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: "), r.stderr
    assert AMBIGUOUS[content] in lines[0]
    assert ("<stdin>" if where == "stdin" else str(path)) in lines[0]


def test_the_delimiter_given_settles_a_content_that_two_delimiters_split(run_cli, tmp_path):
    path = tmp_path / "truth"
    path.write_text("user_id;item_id;relevance,note\nu001;i0077;2,x\n")
    r = run_cli("score", SAMPLE / "preds.csv", path, "--truth-delimiter", ";", *METRICS)
    assert r.exit_code == 0, r.stderr


def test_compare_tells_the_truth_last_from_content(run_cli, tmp_path):
    run = _anonymous(_named(tmp_path, run_cli, "predictions", "trec"), "run")
    qrels = _anonymous(_named(tmp_path, run_cli, "truth", "trec"), "qrels")
    r = run_cli("compare", run, run, qrels, "-m", "ndcg@10", "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("role", ["predictions", "truth"])
@pytest.mark.parametrize("where", ["no-extension", "stdin"])
def test_convert_tells_its_input_from_content(run_cli, tmp_path, fmt, role, where):
    named = _named(tmp_path, run_cli, role, fmt)
    kind = ["--kind", role] if fmt == "json" else []  # a dict of dicts: a run or qrels alike
    own = ["--delimiter", "|"] if fmt == "pipe" else []
    expected = run_cli("convert", named, "-", "--output-format", "jsonl", *kind, *own)
    assert expected.exit_code == 0, expected.stderr
    given, data = ("-", named.read_bytes()) if where == "stdin" else (
        _anonymous(named, "data"), None)
    r = run_cli("convert", given, "-", "--output-format", "jsonl", *kind, input=data)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == expected.stdout


def test_convert_of_a_json_dict_of_dicts_from_content_asks_for_the_kind(run_cli, tmp_path):
    path = tmp_path / "data"
    path.write_text('{"u1": {"a": 1}}\n')
    r = run_cli("convert", path, "-", "--output-format", "csv")
    assert r.exit_code == 2
    assert "cannot tell a run from qrels here: say which with --kind" in r.stderr
