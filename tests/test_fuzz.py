"""Fuzzing: any CSV text either scores or is refused with a RankevalError (exit 2), never
anything else, and what scores agrees with the same rows given as a DataFrame."""

from __future__ import annotations

import csv
import io

import pandas as pd
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
