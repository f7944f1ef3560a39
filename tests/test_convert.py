"""rankeval convert: every row survives, and every format scores the same."""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest

from rankeval import evaluate
from rankeval.api.convert import convert

from .conftest import SAMPLE
from .datagen import generate


def _rows(path, kind: str) -> pd.DataFrame:
    """A file's rows as a sorted frame of (user, item, value), read back through rankeval."""
    from rankeval.io.load import load_predictions, load_truth
    from rankeval.io.readers import open_table

    table = open_table(str(path), role=kind)
    if kind == "predictions":
        p = load_predictions(table)
        frame = pd.DataFrame({"u": p.user.to_pylist(), "i": p.item.to_pylist(), "v": p.score})
    else:
        t = load_truth(table)
        frame = pd.DataFrame({"u": t.user.to_pylist(), "i": t.item.to_pylist(), "v": t.relevance})
    return frame.sort_values(["u", "i"]).reset_index(drop=True)


def test_round_trip_csv_trec_parquet_csv_keeps_every_row(tmp_path, write):
    preds, truth = generate(31, 80, 100, 20, 12)
    start_p, start_t = write("p.csv", preds), write("t.csv", truth)
    chain_p = [start_p, tmp_path / "p.run", tmp_path / "p.parquet", tmp_path / "p2.csv"]
    chain_t = [start_t, tmp_path / "t.qrels", tmp_path / "t.parquet", tmp_path / "t2.csv"]
    for chain, kind in ((chain_p, "predictions"), (chain_t, "truth")):
        for a, b in itertools.pairwise(chain):
            done = convert(str(a), str(b))
            assert done.kind == kind
            assert done.rows == (len(preds) if kind == "predictions" else len(truth))
        pd.testing.assert_frame_equal(_rows(chain[0], kind), _rows(chain[-1], kind))
    metrics = ["ndcg", "map", "recall", "mrr@all", "r_precision"]
    results = [evaluate(str(p), str(t), metrics, [5, 10]).to_dict()["metrics"]
               for p, t in zip(chain_p, chain_t, strict=True)]
    assert all(r == results[0] for r in results)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "tsv", "parquet", "trec"])
def test_every_format_scores_identically(tmp_path, fmt):
    preds, truth = str(SAMPLE / "preds.parquet"), str(SAMPLE / "truth.parquet")
    ext = {"trec": ("run", "qrels")}.get(fmt, (fmt, fmt))
    p_out, t_out = tmp_path / f"p.{ext[0]}", tmp_path / f"t.{ext[1]}"
    convert(preds, str(p_out), kind="predictions")
    convert(truth, str(t_out), kind="truth")
    names = ["ndcg", "precision", "map"]
    # TREC and JSON runs carry no rank, only scores: compare with the source ordered by score.
    source = pd.read_parquet(preds)
    if fmt in ("trec", "json"):
        source = source.drop(columns="rank")
    expected = evaluate(source, truth, names, [5, 10]).metrics
    kind = {"json": {"truth_format": "json"}}.get(fmt, {})
    got = evaluate(str(p_out), str(t_out), names, [5, 10], **kind).metrics
    assert got == expected


def test_rank_only_input_gets_order_keeping_scores_in_a_trec_run(write, tmp_path):
    src = write("p.csv", "user_id,item_id,rank\nu,b,2\nu,a,1\nu,c,3\n")
    convert(str(src), str(tmp_path / "p.run"))
    lines = (tmp_path / "p.run").read_text().splitlines()
    assert lines == ["u Q0 a 1 1.0 rankeval", "u Q0 b 2 0.5 rankeval",
                     "u Q0 c 3 0.3333333333333333 rankeval"]


def test_scores_that_disagree_with_ranks_are_reported(write, tmp_path):
    src = write("p.csv", "user_id,item_id,rank,score\nu,a,1,0.5\nu,b,2,0.9\n")
    done = convert(str(src), str(tmp_path / "p.run"))
    assert [n.code for n in done.notices] == ["scores_disagree_with_ranks"]


def test_json_output_is_the_dict_of_dicts(write, tmp_path):
    src = write("t.csv", "user_id,item_id,relevance\nq1,d1,2\nq1,d2,0\nq2,d1,1.5\n")
    convert(str(src), str(tmp_path / "t.json"))
    assert json.loads((tmp_path / "t.json").read_text()) == {
        "q1": {"d1": 2, "d2": 0}, "q2": {"d1": 1.5}}


def test_cli_convert_stdin_to_stdout_and_errors(run_cli, write):
    text = (SAMPLE / "truth.csv").read_text()
    r = run_cli("convert", "-", "-", "--input-format", "csv", "--output-format", "qrels",
                input=text)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == "u001 0 i0077 2"
    assert "wrote 2,609 rows of truth" in r.stderr
    old = run_cli("convert", "-", "-", "--from", "csv", "--to", "qrels", input=text)
    assert old.exit_code == 0 and old.stdout == r.stdout  # the old spellings still work...
    assert "--from is now --input-format" in old.stderr  # ...and say what replaced them
    no_to = run_cli("convert", SAMPLE / "truth.csv", "-")
    assert no_to.exit_code == 2
    assert "--output-format is required" in no_to.stderr
    ambiguous = run_cli("convert", write("x.json", '{"q": {"d": 1}}'), write("y.csv", ""))
    assert ambiguous.exit_code == 2
    assert "--kind" in ambiguous.stderr
    bad = run_cli("convert", write("bad.run", "q1 Q0 d1 1\n"), write("z.csv", ""))
    assert bad.exit_code == 2
    assert "line 1" in bad.stderr
    # from stdin, the format's name for a role says which it is (qrels: the truth)
    qrels = run_cli("convert", "-", "-", "--input-format", "qrels", "--output-format", "csv",
                    input="q1 0 d1 2\n")
    assert qrels.exit_code == 0, qrels.stderr
    assert qrels.stdout.splitlines() == ["user_id,item_id,relevance", "q1,d1,2"]
    assert "wrote 1 row of truth" in qrels.stderr  # one row, not "1 rows"
    run = run_cli("convert", "-", "-", "--input-format", "run", "--output-format", "csv",
                  input="q1 Q0 d1 1 0.5 t\n")
    assert run.exit_code == 0 and "of predictions" in run.stderr, run.stderr
    either = run_cli("convert", "-", "-", "--input-format", "trec", "--output-format", "csv",
                     input="q1 0 d1 2\n")
    assert either.exit_code == 2 and "--kind" in either.stderr  # trec alone cannot say


def test_gzip_output(tmp_path):
    import gzip

    convert(str(SAMPLE / "truth.csv"), str(tmp_path / "t.qrels.gz"))
    text = gzip.decompress((tmp_path / "t.qrels.gz").read_bytes()).decode()
    assert text.startswith("u001 0 i0077 2\n")
