"""Readers and validation: every format reads the same; every bad input is one clear error."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.errors import InputError, OptionError

from .conftest import SAMPLE

PREDS = pd.DataFrame(
    {"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["A", "B", "C", "A"], "rank": [1, 2, 1, 2]}
)
TRUTH = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["B", "A"], "relevance": [1, 2]})


def test_sample_data_csv_and_parquet_twins_agree():
    csv = evaluate(str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), None, [5, 10])
    pq = evaluate(str(SAMPLE / "preds.parquet"), str(SAMPLE / "truth.parquet"), None, [5, 10])
    assert csv.metrics == pq.metrics
    assert csv.to_dict()["users"] == pq.to_dict()["users"]


@pytest.mark.parametrize("name", ["p.csv", "p.tsv", "p.tab", "p.parquet", "p.pq", "p.csv.gz"])
def test_every_format_reads_the_same(write, name):
    if name.endswith(".gz"):
        path = write(name, gzip.compress(PREDS.to_csv(index=False).encode()))
    else:
        path = write(name, PREDS)
    r = evaluate(str(path), TRUTH, ["mrr"], 2)
    assert r.metrics["mrr@2"] == pytest.approx(0.5)


def test_gzip_is_detected_by_content_with_an_explicit_format(write):
    path = write("run.data", gzip.compress(PREDS.to_csv(index=False).encode()))
    r = evaluate(str(path), TRUTH, ["mrr"], 2, preds_format="csv")
    assert r.metrics["mrr@2"] == pytest.approx(0.5)


def test_unknown_extension_is_read_by_its_content(write):
    path = write("run.data", PREDS.to_csv(index=False))
    assert evaluate(str(path), TRUTH, ["mrr"], 2).metrics["mrr@2"] == pytest.approx(0.5)


def test_unknown_extension_and_content_asks_for_the_format(write):
    path = write("run.data", "nothing to read here\n")
    with pytest.raises(OptionError, match="preds_format"):
        evaluate(str(path), TRUTH, ["mrr"], 2)


@pytest.mark.parametrize(
    ("columns", "kind"),
    [
        ({"user_id": "qid", "item_id": "docno"}, "preds"),
        ({"user_id": "UserId", "item_id": "ITEM"}, "preds"),
        ({"score": "prediction"}, "preds"),
        ({"user_id": "query", "item_id": "doc", "relevance": "rating"}, "truth"),
        ({"relevance": "Grade"}, "truth"),
    ],
)
def test_column_aliases(columns, kind):
    preds = PREDS.assign(score=[0.9, 0.8, 0.9, 0.8]).drop(columns="rank")
    truth = TRUTH
    if kind == "preds":
        preds = preds.rename(columns=columns)
    else:
        truth = truth.rename(columns=columns)
    r = evaluate(preds, truth, ["mrr", "ndcg"], 2)
    assert r.metrics["mrr@2"] == pytest.approx(0.5)


def test_column_overrides_and_a_missing_override_lists_the_columns():
    preds = PREDS.rename(columns={"user_id": "session", "item_id": "sku", "rank": "pos"})
    truth = TRUTH.rename(columns={"user_id": "session", "item_id": "sku", "relevance": "clicks"})
    r = evaluate(
        preds, truth, ["mrr"], 2,
        user_col="session", item_col="sku", rank_col="pos", relevance_col="clicks",
    )
    assert r.metrics["mrr@2"] == pytest.approx(0.5)
    with pytest.raises(InputError, match=r"no column 'nope' \(from rank_col\); columns found"):
        evaluate(preds, truth, ["mrr"], 2, user_col="session", item_col="sku", rank_col="nope")


def test_ambiguous_aliases_are_an_error():
    preds = PREDS.rename(columns={"user_id": "qid"}).assign(user=PREDS.user_id)
    with pytest.raises(InputError, match="could each be the user column"):
        evaluate(preds, TRUTH, ["mrr"], 2)


def test_missing_user_column_hints_at_the_delimiter(write):
    path = write("p.csv", "user_id|item_id|rank\nu1|A|1\n")
    with pytest.raises(InputError, match=r"pipe-separated.*delimiter"):
        evaluate(str(path), TRUTH, ["mrr"], 2)


def test_semicolons_are_detected_and_any_delimiter_can_be_named(write, run_cli):
    """Spreadsheet exports in comma-decimal locales use ';'."""
    semi = write("s.csv", PREDS.to_csv(index=False, sep=";"))
    pipe = write("q.csv", PREDS.to_csv(index=False, sep="|"))
    truth = write("t.csv", TRUTH.to_csv(index=False, sep="|"))  # --delimiter is for both files
    comma = evaluate(PREDS, TRUTH, ["mrr"], 2).metrics
    assert evaluate(str(semi), TRUTH, ["mrr"], 2).metrics == comma
    r = run_cli("score", pipe, truth, "-m", "mrr@2", "--delimiter", "|", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["metrics"] == comma


def test_without_relevance_column_every_pair_is_relevant():
    r = evaluate(PREDS, TRUTH.drop(columns="relevance"), ["ndcg"], 2)
    assert r.per_user.set_index("user_id")["ndcg@2"].to_dict() == pytest.approx(
        {"u1": 0.6309297535714575, "u2": 0.6309297535714575}
    )


def test_ids_are_compared_as_text_across_files(write):
    preds = pd.DataFrame({"user_id": [7, 7], "item_id": [1, 2], "rank": [1, 2]})
    write("p.parquet", preds)
    truth = write("t.csv", "user_id,item_id,relevance\n7,2,1\n")
    r = evaluate(str(truth.parent / "p.parquet"), str(truth), ["mrr"], 2)
    assert r.metrics["mrr@2"] == pytest.approx(0.5)
    assert r.to_dict()["users"]["evaluated"] == 1


def test_leading_zeros_are_kept_in_ids(write):
    preds = write("p.csv", "user_id,item_id,rank\n007,01,1\n")
    truth = write("t.csv", "user_id,item_id\n007,1\n007,01\n")
    r = evaluate(str(preds), str(truth), ["recall"], 1)
    assert r.metrics["recall@1"] == pytest.approx(0.5)


BAD = [
    # (file, text, column, problem, count, first example)
    ("p", "user_id,item_id,rank\nu1,A,1\nu1,B,2\nu1,A,3\n", None, "more than once", 1, 3),
    ("p", "user_id,item_id,rank\nu1,A,1\nu1,B,1\n", "rank", "repeated", 1, 2),
    ("p", "user_id,item_id,rank\nu1,A,1\nu1,B,2.5\n", "rank", "whole numbers", 1, 2),
    ("p", "user_id,item_id,rank\nu1,A,0\nu1,B,-1\n", "rank", "below 1", 2, 1),
    ("p", "user_id,item_id,rank\nu1,A,1\nu1,B,\n", "rank", "empty ranks", 1, 2),
    ("p", "user_id,item_id,rank\nu1,A,one\n", "rank", "non-numeric", 1, 1),
    ("p", "user_id,item_id,score\nu1,A,nan\nu1,B,1\n", "score", "NaN", 1, 1),
    ("p", "user_id,item_id,score\nu1,A,1\nu1,B,inf\nu1,C,-inf\n", "score", "infinite", 2, 2),
    ("p", "user_id,item_id,rank\n,A,1\n", "user_id", "empty ids", 1, 1),
    ("t", "user_id,item_id,relevance\nu1,A,1\nu1,A,2\n", None, "more than once", 1, 2),
    ("t", "user_id,item_id,relevance\nu1,A,x\nu1,B,y\nu1,C,1\n", "relevance", "non-numeric", 2, 1),
    ("t", "user_id,item_id,relevance\nu1,A,NaN\n", "relevance", "NaN", 1, 1),
    ("t", "user_id,item_id,relevance\nu1,,1\n", "item_id", "empty ids", 1, 1),
]


@pytest.mark.parametrize(("which", "text", "column", "problem", "count", "row"), BAD)
def test_bad_input_is_one_error_with_file_column_count_and_rows(
    write, which, text, column, problem, count, row
):
    path = str(write(f"{which}.csv", text))
    good_preds = str(write("good_p.csv", "user_id,item_id,rank\nu1,A,1\n"))
    good_truth = str(write("good_t.csv", "user_id,item_id,relevance\nu1,A,1\n"))
    preds, truth = (path, good_truth) if which == "p" else (good_preds, path)
    with pytest.raises(InputError) as info:
        evaluate(preds, truth, ["ndcg"], 5)
    err = info.value
    assert err.path == path
    assert err.column == column
    assert problem in err.problem
    assert err.count == count
    assert err.examples[0][0] == row
    assert str(err).startswith(path + ": ")
    assert "\n" not in str(err)


def test_examples_are_capped_at_five(write):
    rows = "".join(f"u1,I{i},nan\n" for i in range(20))
    path = write("p.csv", "user_id,item_id,score\n" + rows)
    with pytest.raises(InputError) as info:
        evaluate(str(path), TRUTH, ["ndcg"], 5)
    assert info.value.count == 20
    assert len(info.value.examples) == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("user_id,item_id,rank\n", "no data rows"),
        ("user_id,item_id,rank\nu1,A,1,extra\n", "cannot parse"),
    ],
)
def test_empty_and_malformed_files(write, text, message):
    path = write("p.csv", text)
    with pytest.raises(InputError, match=message):
        evaluate(str(path), TRUTH, ["ndcg"], 5)


def test_no_evaluated_user_is_an_error():
    truth = TRUTH.assign(relevance=0)
    with pytest.raises(InputError, match="no user"):
        evaluate(PREDS, truth, ["ndcg"], 5)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        evaluate(str(tmp_path / "nope.csv"), TRUTH, ["ndcg"], 5)
    with pytest.raises(InputError):
        evaluate(str(tmp_path), TRUTH, ["ndcg"], 5, preds_format="csv")


def test_corrupt_parquet(write):
    path = write("p.parquet", b"PAR1 this is not parquet")
    with pytest.raises(InputError, match=r"p\.parquet: not a readable Parquet"):
        evaluate(str(path), TRUTH, ["ndcg"], 5)


def test_ranks_past_32_bits_keep_their_order():
    """Ranks are int32 when they fit; larger ones stay int64 and order the same."""
    import pandas as pd

    from rankeval import evaluate

    truth = pd.DataFrame({"user_id": ["u1", "u1"], "item_id": ["a", "c"], "relevance": [1, 1]})
    small = pd.DataFrame({"user_id": ["u1"] * 3, "item_id": ["a", "b", "c"], "rank": [1, 2, 3]})
    big = small.assign(rank=[2**31 - 1, 2**31, 2**40])
    assert evaluate(big, truth, "ndcg@3").metrics == evaluate(small, truth, "ndcg@3").metrics
    assert evaluate(small.assign(rank=[3, 2, 1]), truth, "map@2").metrics["map@2"] == 0.5


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_text_ranks_past_2_to_53_are_read_exactly(write, fmt):
    """Text ranks are parsed as floats (Arrow's integer parsing would take "0x2" for 2) and
    made integers; ranks past 2^53, where floats tie neighbours, are read again as integers."""
    import pandas as pd

    from rankeval import evaluate

    truth = pd.DataFrame({"user_id": ["u1"], "item_id": ["b"], "relevance": [1]})
    base = 2**53 + 1  # 2^53 + 1 and 2^53 + 2 are one float
    preds = pd.DataFrame({"user_id": ["u1", "u1"], "item_id": ["a", "b"],
                          "rank": [base + 1, base]})  # b first
    path = write(f"p.{fmt}", preds.to_csv(index=False, sep="," if fmt == "csv" else "\t"))
    ev = evaluate(str(path), truth, "mrr@2")
    assert ev.metrics["mrr@2"] == 1.0


def _rank_oracle(texts: list[str]) -> list[int] | None:
    """The ranks written ``texts`` by Python's own reading (None: refused): never
    hexadecimal or empty; whole numbers >= 1; past 2^53, where floats tie neighbours, only
    when every rank is an integer written out (a sign and digits, within 64 bits), which are
    then read exactly."""
    if any(not t or "x" in t.lower() for t in texts):
        return None
    values = [float(t) for t in texts]
    if any(v != v or abs(v) == float("inf") or v != int(v) for v in values):
        return None
    ranks = [int(v) for v in values]
    if any(abs(v) >= 2**53 for v in values):
        if not all(re.fullmatch(r"-?[0-9]+", t) and -(2**63) <= int(t) < 2**63 for t in texts):
            return None
        ranks = [int(t) for t in texts]
    return ranks if min(ranks) >= 1 else None


_WHOLE_RANKS = st.one_of(
    st.integers(1, 2**63 - 1).map(str),
    st.integers(1, 10**6).map(lambda n: f"{n}.0"),
    st.integers(1, 10**6).map(lambda n: f"00{n}"),
    st.integers(1, 10**6).map(lambda n: f"+{n}"),
    st.integers(1, 9).map(lambda n: f"{n}e2"),
)
_RANK_TEXTS = st.one_of(
    _WHOLE_RANKS,
    st.integers(-2, 2**64).map(str),
    st.integers(10, 10**6).map(lambda n: f"{n}.5"),
    st.integers(1, 10**6).map(hex),
    st.sampled_from(["", "nan", "inf", "-inf", "1e20", "0", "-0", "0.0", "2147483648",
                     "9007199254740993", "0X1F"]),
)


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@given(texts=st.one_of(st.lists(_WHOLE_RANKS, min_size=1, max_size=12),
                       st.lists(_RANK_TEXTS, min_size=1, max_size=12)))
def test_text_ranks_are_read_as_python_reads_them(tmp_path_factory, fmt, texts):
    """Every kind of rank text (integers of any size, leading zeros and signs, whole and
    fractional floats, exponents, hexadecimal, NaN, infinities, empty cells) is the number
    Python reads in it, or refused with one error; never read another way."""
    from rankeval.io.load import load_predictions
    from rankeval.io.readers import open_table

    sep = "," if fmt == "csv" else "\t"
    rows = "".join(f"u1{sep}i{k}{sep}{t}\n" for k, t in enumerate(texts))
    path = tmp_path_factory.mktemp("ranks") / f"p.{fmt}"
    path.write_text(f"user_id{sep}item_id{sep}rank\n" + rows)
    expected = _rank_oracle(texts)
    if expected is None:
        with pytest.raises(InputError):
            load_predictions(open_table(str(path), role="predictions"))
        return
    ranks = load_predictions(open_table(str(path), role="predictions")).rank
    assert ranks is not None and ranks.tolist() == expected
    assert ranks.dtype == (np.int32 if max(expected) < 2**31 else np.int64)


@given(st.lists(st.text(max_size=3), min_size=1, max_size=30), st.integers(0, 29),
       st.sampled_from(["string", "binary", "large_string"]))
def test_empty_ids_are_found_from_the_offsets_at_any_slice(values, start, kind):
    """The empty-id check reads offsets in place; it agrees with the lengths Arrow gives."""
    from rankeval.io.checked import _has_empty

    typ = {"string": pa.string(), "binary": pa.binary(), "large_string": pa.large_string()}[kind]
    array = pa.array([v.encode() if kind == "binary" else v for v in values], typ)
    part = array.slice(min(start, len(array)))
    expected = len(part) > 0 and pc.min(pc.binary_length(part)).as_py() == 0
    assert _has_empty(part) == expected


def test_an_empty_id_far_into_a_big_file_is_named(write):
    rows = [f"u{i},i{i % 7},1" for i in range(300_000)]
    rows[250_000] = ",i3,1"
    path = write("p.csv", "user_id,item_id,rank\n" + "\n".join(rows) + "\n")
    with pytest.raises(InputError, match=r"1 empty id, e.g. row 250001 "):
        evaluate(str(path), TRUTH, ["ndcg"], 5)


@pytest.mark.parametrize("groups", [1, 2, 3, 8])
@pytest.mark.parametrize("ids", ["text", "numbers"])
def test_parquet_row_groups_read_in_two_halves_equal_one_read(write, tmp_path, groups, ids,
                                                              monkeypatch):
    """A Parquet file of several row groups is read in two halves of them, each on its core,
    and the halves joined: the same columns, row for row, as one read, and the same answers
    as its CSV twin; a file of one row group is read whole."""
    import numpy as np
    import pyarrow.parquet as pq

    from rankeval.io.cast import ID
    from rankeval.io.load import open_input

    rng = np.random.default_rng(groups)
    n = 2_400
    name = (lambda i: f"{i * 7919 % 10**9:09x}-item") if ids == "text" else (lambda i: i * 7919)
    preds = pd.DataFrame({"user_id": np.arange(n) // 12,
                          "item_id": [name(i) for i in rng.permutation(n)],
                          "rank": np.tile(np.arange(1, 13), n // 12)})
    truth = preds.sample(600, random_state=1).assign(relevance=rng.integers(0, 4, 600)).drop(
        columns="rank")
    if ids == "text":
        preds["user_id"] = "u" + preds["user_id"].astype(str)
        truth["user_id"] = "u" + truth["user_id"].astype(str)
    path = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pandas(preds, preserve_index=False), path,
                   row_group_size=-(-n // groups))
    assert pq.ParquetFile(path).num_row_groups == groups
    calls = []
    real = pq.ParquetFile.read_row_groups
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups",
                        lambda self, g, **kw: calls.append(list(g)) or real(self, g, **kw))
    types = {"user_id": ID, "item_id": ID, "rank": pa.int64()}
    read = open_input(str(path), "predictions").read(types)
    assert sorted(g for call in calls for g in call) == (list(range(groups)) if groups > 1 else [])
    assert len(calls) == (2 if groups > 1 else 0)
    whole = pq.read_table(path)
    for column in types:
        assert read.column(column).cast(pa.string()).to_pylist() == \
            whole.column(column).cast(pa.string()).to_pylist()
    t = write("t.csv", truth)
    from_parquet = evaluate(str(path), str(t), ["ndcg", "map"], [5, 10])
    from_csv = evaluate(str(write("p.csv", preds)), str(t), ["ndcg", "map"], [5, 10])
    assert from_parquet.metrics == from_csv.metrics
    pd.testing.assert_frame_equal(from_parquet.per_user, from_csv.per_user)
