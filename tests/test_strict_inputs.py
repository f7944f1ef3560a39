"""Every input as strict as a run: per-user files, encodings, JSON keys, scores that tie
only once parsed, policies' probabilities, the collection's size."""

from __future__ import annotations

import pytest

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "preds.csv", SAMPLE / "truth.csv"


def _one_line_error(r, *needles):
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    lines = r.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("rankeval: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])


@pytest.fixture
def per_user(run_cli, tmp_path):
    """A per-user file of the sample run, and the same with its first user 50 times."""
    path = tmp_path / "users.csv"
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10", "--per-user", path, "-q",
                "-o", tmp_path / "report.txt")
    assert r.exit_code == 0, r.stderr
    header, first, *rest = path.read_text().splitlines()
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("\n".join([header, *[first] * 50, *rest]) + "\n")
    return path, repeated


@pytest.mark.parametrize("where", ["power-a", "power-b", "baseline"])
def test_a_per_user_file_holds_each_user_once(run_cli, per_user, where):
    good, repeated = per_user
    if where == "baseline":
        r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10", "--baseline-per-user", repeated,
                    "--non-inferior", "ndcg@10=0.01")
    else:
        a, b = (repeated, good) if where == "power-a" else (good, repeated)
        r = run_cli("power", "--per-user-a", a, "--per-user-b", b)
    _one_line_error(r, "repeated.csv", "1 repeated user", "row 2")


def test_the_library_reads_per_user_files_as_strictly(per_user):
    from rankeval import power
    from rankeval.errors import InputError

    good, repeated = per_user
    with pytest.raises(InputError, match="repeated user"):
        power(per_user_a=str(good), per_user_b=str(repeated))


def _codecs() -> list[str]:
    import encodings
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(encodings.__path__) if m.name != "aliases")


@pytest.mark.parametrize("codec", _codecs())
def test_every_codec_is_read_or_refused_in_one_line(run_cli, write, codec):
    """rot13, base64, zlib_codec (bytes to bytes) were internal errors; idna, undefined and
    the like fail without a position."""
    preds = write("p.csv", "user_id,item_id,rank\nü1,A,1\nü1,B,2\nu2,C,1\n".encode())
    truth = write("t.csv", b"user_id,item_id\nu2,C\n")
    r = run_cli("score", preds, truth, "-m", "ndcg@2", "--encoding", codec, "-f", "json")
    if r.exit_code != 0:
        _one_line_error(r)


@pytest.mark.parametrize("doc", ['{"u1": {"A": 0.9}, "u1": {"B": 0.5}}',
                                 '{"u1": {"A": 0.9, "A": 0.5}}'])
def test_a_repeated_json_key_is_refused(run_cli, write, doc):
    """Merged (two objects of one user) or kept twice, where ranx and pytrec_eval keep the
    last: either way a list nobody wrote."""
    preds = write("p.json", doc)
    truth = write("t.csv", "user_id,item_id\nu1,A\nu1,B\n")
    r = run_cli("score", preds, truth, "-m", "recall@2", "--dedupe")
    _one_line_error(r, "p.json", "is repeated in one object")


# --- probabilities that cannot be probabilities, counts that cannot be negative ------------



def _sample(name):
    return SAMPLE / name


@pytest.mark.parametrize("column", ["probability", "conditional_probability"])
def test_a_policy_whose_probabilities_at_a_position_sum_past_1_is_refused(run_cli, write,
                                                                          column):
    policy = write("pol.csv", f"user_id,position,item_id,{column}\n"
                              "u00000,1,i7,0.9\nu00000,1,i5,0.9\nu00000,2,i2,0.5\n")
    r = run_cli("ope", _sample("log.csv"), policy)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "sum to more than 1" in r.stderr and "sum 1.8" in r.stderr
    fine = write("fine.csv", f"user_id,position,item_id,{column}\n"
                             "u00000,1,i7,0.5\nu00000,1,i5,0.5\nu00000,2,i2,0.5\n")
    assert run_cli("ope", _sample("log.csv"), fine).exit_code == 0


@pytest.mark.parametrize("p", ["1e-300", "5e-324", "1e-101"])
def test_a_propensity_too_small_to_weigh_is_refused(run_cli, write, p):
    rows = _sample("log.csv").read_text().splitlines()
    cut = [",".join(line.split(",")[:5]) for line in rows]  # no cascade or slate columns
    first = cut[1].split(",")
    cut[1] = ",".join([*first[:4], p])
    log = write("log.csv", "\n".join(cut) + "\n")
    r = run_cli("ope", log, _sample("log_candidate.csv"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "propensity below 1e-100" in r.stderr and "Traceback" not in r.stderr


def test_a_collection_smaller_than_what_users_retrieved_is_refused(run_cli):
    args = ("score", _sample("preds.csv"), _sample("truth.csv"), "--compat", "trec_eval", "-m",
            "utility.1,-1,0,1", "-f", "trec")
    small = run_cli(*args, "--collection-size", "1")
    assert small.exit_code == 2 and small.stderr.count("\n") == 1
    assert "--collection-size 1 is smaller than the items a user retrieved" in small.stderr
    big = run_cli(*args, "--collection-size", "5000")
    assert big.exit_code == 0 and float(big.stdout.split()[-1]) > 0


def test_a_deeply_nested_baseline_is_one_line(run_cli, write):
    baseline = write("deep.json", "[" * 100_000 + "]" * 100_000)
    r = run_cli("score", _sample("preds.csv"), _sample("truth.csv"), "--baseline", baseline,
                "--max-drop", "1%", "-q")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "nested too deeply" in r.stderr


@pytest.mark.parametrize("line", [
    '{"user_id": "u1", "item_id": "A", "item_id": "B", "rank": 1}',
    '{"user_id": "u1", "item_id": "A", "rank": 1, "rank": 3}',
    '{"user_id": "u1", "user_id": "u2", "item_id": "A", "rank": 1}',
])
def test_a_json_lines_key_given_twice_is_refused(run_cli, write, line):
    run = write("run.jsonl", line + '\n{"user_id": "u1", "item_id": "C", "rank": 2}\n')
    truth = write("t.csv", "user_id,item_id,relevance\nu1,A,1\n")
    r = run_cli("score", run, truth, "-m", "recall@2")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "line 1: the key" in r.stderr and "given twice in one object" in r.stderr


def test_a_value_spelled_like_a_key_is_not_a_repeat(run_cli, write):
    run = write("run.jsonl", '{"user_id": "u1", "item_id": "item_id", "rank": 1}\n'
                             '{"user_id": "u1", "item_id": "A", "rank": 2}\n')
    truth = write("t.csv", "user_id,item_id,relevance\nu1,A,1\n")
    r = run_cli("score", run, truth, "-m", "recall@2", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["metrics"]["recall@2"] == 1.0


# --- scores that tie only once parsed ---------------------------------------------------------

def _spurious(write, fmt: str):
    """A run whose first two scores differ past a double's precision, in ``fmt``."""
    import decimal

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    scores = ["0.10000000000000000001", "0.1", "0.05"]
    if fmt == "csv":
        return write("run.csv", "user_id,item_id,score\n" + "".join(
            f"u1,{i},{s}\n" for i, s in zip("ABC", scores, strict=True)))
    if fmt == "tsv":
        return write("run.tsv", "user_id\titem_id\tscore\n" + "".join(
            f"u1\t{i}\t{s}\n" for i, s in zip("ABC", scores, strict=True)))
    if fmt == "trec":
        return write("run.run", "".join(f"u1 Q0 {i} {n} {s} tag\n" for n, (i, s) in
                                        enumerate(zip("ABC", scores, strict=True), 1)))
    if fmt == "jsonl":
        return write("run.jsonl", "".join(f'{{"user_id": "u1", "item_id": "{i}", "score": {s}}}\n'
                                          for i, s in zip("ABC", scores, strict=True)))
    path = write("run.parquet", pd.DataFrame({"user_id": ["u1"] * 3, "item_id": list("ABC")}))
    table = pa.table({"user_id": ["u1"] * 3, "item_id": list("ABC"),
                      "score": pa.array([decimal.Decimal(s) for s in scores],
                                        pa.decimal128(38, 20))})
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("fmt", ["csv", "tsv", "trec", "jsonl", "parquet"])
def test_scores_that_tie_only_once_parsed_are_refused(run_cli, write, fmt):
    run = _spurious(write, fmt)
    truth = write("t.csv", "user_id,item_id,relevance\nu1,B,1\n")
    r = run_cli("score", run, truth, "-m", "ndcg@1")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "tied as 64-bit floats with another of their user's but not as written" in r.stderr
    assert "0.10000000000000000001" in r.stderr


def test_ties_written_alike_and_equal_decimals_are_ties(run_cli, write):
    run = write("run.csv", "user_id,item_id,score\nu1,A,0.10\nu1,B,0.1\nu1,C,1e-1\nu1,D,0.5\n"
                           "u2,A,3\nu2,B,3\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,B,1\nu2,A,1\n")
    r = run_cli("score", run, truth, "-m", "ndcg@2", "-f", "json")
    assert r.exit_code == 0, r.stderr
