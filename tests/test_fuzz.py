"""Fuzzing: any CSV, JSON or TREC text or Parquet table either scores or is refused with a
RankevalError (exit 2), never anything else, and what scores (CSV) agrees with the same rows
given as a DataFrame."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.errors import RankevalError

# Mostly plausible values, so that many cases score; now and then anything at all.
IDS = {"user_id": ["u1", "u2", "u3", "7"], "item_id": ["i1", "i2", "i3", "i4", "i5", "007"]}
NUMBERS = ["1", "2", "3", "4", "5", "0", "0.5", "-2"]
ODD = st.one_of(
    st.sampled_from(["-1", "2.5", "nan", "inf", "", " u1", "007", "7", "1e3", "x", "é", '"',
                     ",", "\n", "\r\n", "\t", "1.0", "1e300"]),
    st.text(max_size=4),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def cell(column: str):
    good = st.sampled_from(IDS.get(column, NUMBERS))
    return st.one_of(good, good, good, good, good, good, good, ODD)
HEADERS = ["user_id", "item_id", "rank", "score", "relevance", "qid", "docno", "rating", "x"]


@st.composite
def csv_text(draw, columns):
    names = draw(st.permutations(columns)) + draw(st.lists(st.sampled_from(HEADERS), max_size=1))
    row = st.tuples(*(cell(name) for name in names))
    rows = draw(st.lists(row, min_size=1, max_size=8))
    quoting = draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]))
    out = io.StringIO()
    writer = csv.writer(out, quoting=quoting, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    writer.writerow(names)
    writer.writerows(rows)
    text = out.getvalue()
    if draw(st.booleans()):  # now and then, raw damage: a cut, a stray byte
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "\x00", "\ufeff", '"', "\n"])) + text[cut:]
    return text


@pytest.mark.slow
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.function_scoped_fixture])
@given(
    preds=csv_text(["user_id", "item_id", "rank"]) | csv_text(["user_id", "item_id", "score"]),
    truth=csv_text(["user_id", "item_id", "relevance"]),
)
def test_random_csv_scores_or_is_refused(tmp_path, preds, truth):
    p, t = tmp_path / "p.csv", tmp_path / "t.csv"
    p.write_text(preds, encoding="utf-8")
    t.write_text(truth, encoding="utf-8")
    try:
        result = evaluate(str(p), str(t), ["ndcg", "map", "mrr", "precision"], [1, 3])
    except RankevalError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    for name, value in result.metrics.items():
        assert 0.0 <= value <= 1.0, name
    # The same rows as frames give the same numbers (the CSV reading is not guessing).
    frames = [pd.read_csv(f, dtype=str, keep_default_na=False) for f in (p, t)]
    try:
        again = evaluate(frames[0], frames[1], ["ndcg", "map", "mrr", "precision"], [1, 3])
    except RankevalError:
        return  # pandas reads some damaged text differently from Arrow; only numbers must agree
    assert again.metrics == pytest.approx(result.metrics)


JSON_VALUES = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False),
                        st.sampled_from([1e400, -0.0, True, None, "x", [], {}, 10**30]))
KEYS = st.sampled_from(["u1", "u2", "7", "007", "", " u1", "é", "i1", "i2"])


@st.composite
def json_text(draw):
    """A dict of dicts, written by hand so that repeated keys and odd values reach the file."""
    users = draw(st.lists(st.tuples(KEYS, st.lists(st.tuples(KEYS, JSON_VALUES), max_size=4)),
                          max_size=4))
    body = ", ".join(
        f"{json.dumps(u)}: {{" + ", ".join(f"{json.dumps(i)}: {json.dumps(v)}" for i, v in items)
        + "}" for u, items in users)
    text = "{" + body + "}"
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", "[", "}", "\x00", "\n"])) + text[cut:]
    return text


@st.composite
def trec_text(draw, fields: int):
    words = st.sampled_from(["u1", "u2", "Q0", "0", "i1", "i2", "1", "2", "0.5", "-1", "1_000",
                             "nan", "x", "é", "tag"])
    lines = draw(st.lists(st.lists(words, min_size=fields - 1, max_size=fields + 1),
                          min_size=1, max_size=6))
    sep = draw(st.sampled_from([" ", "\t", "  "]))
    return "".join(sep.join(line) + "\n" for line in lines)


def _scores_or_refuses(p, t):
    try:
        result = evaluate(str(p), str(t), ["ndcg", "map", "mrr", "precision"], [1, 3])
    except RankevalError as exc:
        assert str(exc) and "\n" not in str(exc)
        return None
    for name, value in result.metrics.items():
        assert 0.0 <= value <= 1.0, name
    return result


@pytest.mark.slow
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.function_scoped_fixture])
@given(preds=json_text(), truth=json_text())
def test_random_json_scores_or_is_refused(tmp_path, preds, truth):
    p, t = tmp_path / "p.json", tmp_path / "t.json"
    p.write_text(preds, encoding="utf-8")
    t.write_text(truth, encoding="utf-8")
    _scores_or_refuses(p, t)


@pytest.mark.slow
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.function_scoped_fixture])
@given(preds=trec_text(6), truth=trec_text(4))
def test_random_trec_scores_or_is_refused(tmp_path, preds, truth):
    p, t = tmp_path / "p.run", tmp_path / "t.qrels"
    p.write_text(preds, encoding="utf-8")
    t.write_text(truth, encoding="utf-8")
    _scores_or_refuses(p, t)


PARQUET_TYPES = {
    "user_id": st.sampled_from([pa.string(), pa.int64(), pa.binary(), pa.list_(pa.int64())]),
    "score": st.sampled_from([pa.float64(), pa.int64(), pa.string(), pa.float32()]),
}


@pytest.mark.slow
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.function_scoped_fixture])
@given(user_type=PARQUET_TYPES["user_id"], score_type=PARQUET_TYPES["score"],
       scores=st.lists(st.one_of(st.floats(allow_nan=True), st.integers(-2**62, 2**62),
                                 st.none()), min_size=1, max_size=6),
       data=st.data())
def test_random_parquet_scores_or_is_refused(tmp_path, user_type, score_type, scores, data):
    n = len(scores)
    users = [data.draw(st.sampled_from(["u1", "u2"])) for _ in range(n)]
    try:
        user_col = {pa.string(): pa.array(users), pa.int64(): pa.array([len(u) for u in users]),
                    pa.binary(): pa.array([u.encode() for u in users], pa.binary()),
                    }.get(user_type) or pa.array([[len(u)] for u in users])
        score_col = pa.array(scores).cast(score_type, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError):
        return  # not a table Arrow itself can write
    p, t = tmp_path / "p.parquet", tmp_path / "t.csv"
    pq.write_table(pa.table({"user_id": user_col, "item_id": [f"i{k}" for k in range(n)],
                             "score": score_col}), p)
    t.write_text("user_id,item_id,relevance\nu1,i0,1\nu2,i1,2\n2,i2,1\n")
    _scores_or_refuses(p, t)
