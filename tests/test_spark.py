"""The Spark engine gives the local engine's numbers, counts, notices and errors.

Spark runs in local mode (``local[2]``), one session for the whole test run. Partitions are
few and Arrow batches tiny, so that users span batches and chunks (the carry-over path) and
partials from many chunks are merged. pyspark and Java are test requirements (``make test``
installs both): a missing one fails these tests, it never skips them.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankeval
from rankeval.engines.distributed.chunks import KEY, ROWS
from rankeval.engines.distributed.merge import merged_errors
from rankeval.engines.spark.worker import complete_users, partition_chunks
from rankeval.errors import InputError, OptionError
from rankeval.registry import REGISTRY
from rankeval.spark import evaluate as spark_evaluate

# every metric that needs no extra input (those are test_spark_items'), whole lists too
METRICS = [n for n, m in REGISTRY.items() if not m.needs] + ["ndcg@all", "map@all",
                                                             "recall@all"]
K = [1, 3, 10]
# Under pytest-xdist, every Spark test runs on one worker: one SparkSession per test run.
# Marked spark: make test-fast leaves them out (no Java needed there).
pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
# Metrics whose expectation over tie orders has no closed form (refused with ties=expected).
# without a closed form under ties="expected", or corpus metrics that refuse it
OPEN_FORM = {n for n, m in REGISTRY.items() if not m.tie_expectation}


def generated(seed: int, users: int = 120, items: int = 60, ranks: bool = False):
    """Graded truth, coarse scores (ties within and across cut-offs), users only in the
    predictions, only in the truth, without relevant items, numeric-looking ids."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        if u % 9 == 4:  # truth only
            continue
        n = int(rng.integers(1, 25))
        chosen = rng.choice(items, size=min(n, items), replace=False)
        scores = rng.integers(0, 6, size=len(chosen)) / 2  # many ties
        rows += [(f"u{u}" if u % 5 else str(u), f"i{i}" if i % 4 else f"{i:03d}", s)
                 for i, s in zip(chosen, scores, strict=True)]
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    if ranks:
        preds = preds.drop(columns="score")
        preds["rank"] = preds.groupby("user_id").cumcount() * 2 + 1  # gaps between ranks
    truth_rows = []
    for u in range(users + 5):
        if u % 13 == 6:  # predictions only
            continue
        judged = rng.choice(items, size=int(rng.integers(1, 8)), replace=False)
        grades = rng.integers(0, 4, size=len(judged)) if u % 7 else np.zeros(len(judged))
        truth_rows += [(f"u{u}" if u % 5 else str(u), f"i{i}" if i % 4 else f"{i:03d}",
                        float(g)) for i, g in zip(judged, grades, strict=True)]
    truth = pd.DataFrame(truth_rows, columns=["user_id", "item_id", "relevance"])
    return preds, truth


def frame(spark, df: pd.DataFrame):
    return spark.createDataFrame(pa.Table.from_pandas(df, preserve_index=False))


def same(local, distributed, labels: bool = True) -> None:
    """Per-user values to 1e-12, means to 1e-12, identical counts and notices (their counts
    alone when the inputs have other labels: paths against DataFrames)."""
    assert distributed.users == local.users
    if labels:
        assert [n.to_dict() for n in distributed.notices] == [n.to_dict() for n in local.notices]
    assert [(n.code, n.count) for n in distributed.notices] == [(n.code, n.count)
                                                                for n in local.notices]
    assert distributed.prediction_rows_beyond_k == local.prediction_rows_beyond_k
    assert distributed.tied_users == local.tied_users
    assert list(distributed.metrics) == list(local.metrics)
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0,
                                                          nan_ok=True), name
    for name, (low, high) in local.tie_range.items():
        assert distributed.tie_range[name] == pytest.approx((low, high), abs=1e-12, rel=0,
                                                            nan_ok=True)
    theirs = distributed.per_user.toPandas().sort_values("user_id").reset_index(drop=True)
    ours = local.per_user.sort_values("user_id").reset_index(drop=True)
    assert list(theirs.columns) == list(ours.columns)
    assert theirs["user_id"].tolist() == ours["user_id"].tolist()
    assert len(theirs) == local.users.evaluated > 0
    # NaN where a metric cannot score a user (ild, serendipity), on both sides alike
    np.testing.assert_allclose(theirs.drop(columns="user_id").to_numpy(),
                               ours.drop(columns="user_id").to_numpy(), rtol=0, atol=1e-12)


SETTINGS = [
    {},
    {"compat": "trec_eval"},
    {"gain": "exponential", "ap_denominator": "relevant", "rr_target": "most-relevant"},
    {"relevance_threshold": 2, "zero_relevant_users": "zero", "skip_missing_users": True},
    {"ties": "item-asc"}, {"ties": "input"}, {"ties": "expected"}, {"ties": "optimistic"},
    {"ties": "pessimistic"}, {"ties": "provider"},  # a rule per metric (cwl_eval: input)
    {"ties": "ranx"},  # numba's quicksort over each list in file order
    {"max_depth": 7, "judged_only": True},
    {"rbp_p": 0.5, "err_max_grade": 3},
]


def test_ranks_duplicates_and_column_names(spark):
    preds, truth = generated(2, ranks=True)
    preds = pd.concat([preds, preds.iloc[::17]])  # repeated (user, item) pairs
    preds.columns = ["qid", "docno", "position"]
    truth.columns = ["qid", "docno", "grade"]
    columns = {"user_col": "qid", "item_col": "docno", "rank_col": "position",
               "relevance_col": "grade"}
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "map", "mrr"], k=K, dedupe=True,
                              **columns)
    distributed = spark_evaluate(frame(spark, preds), frame(spark, truth),
                                 metrics=["ndcg", "map", "mrr"], k=K, dedupe=True,
                                 chunk_rows=50, **columns)
    same(local, distributed)
    assert any(n.code == "duplicates_dropped" for n in local.notices)


def test_means_do_not_depend_on_partitioning(spark):
    preds, truth = generated(3, users=300)
    runs = [spark_evaluate(frame(spark, preds), frame(spark, truth), metrics=["ndcg", "map"],
                           k=K, partitions=p, chunk_rows=c)
            for p, c in ((1, 10**9), (2, 100), (7, 13))]
    assert runs[0].metrics == runs[1].metrics == runs[2].metrics  # bit for bit
    assert runs[0].users == runs[1].users == runs[2].users


def test_input_errors_are_counted_as_locally(spark):
    preds, truth = generated(4)
    preds = preds.copy()
    preds.loc[preds.index[::40], "score"] = np.nan
    dup = pd.concat([preds, preds.iloc[[3, 50, 90]]])
    for p, t in ((preds, truth), (dup.fillna(1.0), truth)):
        with pytest.raises(InputError) as local:
            rankeval.evaluate(p, t, k=K)
        with pytest.raises(InputError) as distributed:
            spark_evaluate(frame(spark, p), frame(spark, t), k=K, chunk_rows=60)
        a, b = local.value, distributed.value
        assert (b.problem, b.count, b.column, b.path) == (a.problem, a.count, a.column, a.path)
        assert len(b.examples) == min(5, a.count)
        assert "row of user" in str(b)


def test_validate_finds_every_problem_as_locally(spark):
    from rankeval.engines.validation import validate_inputs
    from rankeval.spark import validate_frames

    preds, truth = generated(5)
    preds.loc[preds.index[::30], "score"] = np.inf
    truth.loc[truth.index[::25], "relevance"] = np.nan
    settings = rankeval.make_settings(None, K)
    local = validate_inputs(preds, truth, settings)
    distributed = validate_frames((frame(spark, preds), "predictions", "arrow"),
                                  (frame(spark, truth), "truth", "arrow"), settings, {},
                                  chunk_rows=40)
    assert [(e.problem, e.count) for e in distributed.errors] == [
        (e.problem, e.count) for e in local.errors]
    assert len(local.errors) == 2


def test_merged_errors_keep_the_smallest_users_examples():
    def chunk(users, count):
        fields = {"path": "p", "problem": "NaN values", "column": "score", "count": count,
                  "hint": None, "unit": "row of user", "examples": [(u, float("nan"))
                                                                     for u in users]}
        return type("R", (), {"errors": [fields]})

    merged = merged_errors([chunk(["u5", "u6"], 2), chunk(["u1", "u2", "u3", "u4", "u7"], 9)])
    assert merged[0].count == 11
    assert [u for u, _ in merged[0].examples] == ["'u1'", "'u2'", "'u3'", "'u4'", "'u5'"]


@given(st.lists(st.integers(1, 6), min_size=1, max_size=40), st.integers(1, 30),
       st.lists(st.integers(1, 15), min_size=1, max_size=10), st.randoms())
def test_chunks_hold_whole_users(sizes, rows, batch_sizes, rng):
    """A partition's rows (its users' rows in any order, in batches of any size, as a
    shuffle by user gives them) come out as chunks of complete users of about ``rows`` rows,
    every row once, in their order within each user."""
    users = [f"u{u:02d}" for u, n in enumerate(sizes) for _ in range(n)]
    rng.shuffle(users)
    table = pa.table({KEY: users, "x": list(range(len(users)))})
    batches, at, i = [], 0, 0
    while at < len(users):
        n = batch_sizes[i % len(batch_sizes)]
        batches += table.slice(at, n).to_batches()
        at, i = at + n, i + 1
    chunks = list(partition_chunks(batches, rows))
    assert sorted(pa.concat_tables(chunks).column("x").to_pylist()) == list(range(len(users)))
    seen: set[str] = set()
    for c in chunks:
        ids = c.column(KEY).to_pylist()
        assert not set(ids) & seen  # no user in two chunks
        seen |= set(ids)
        for u in set(ids):
            assert ids.count(u) == sizes[int(u[1:])]
            xs = [x for k, x in zip(ids, c.column("x").to_pylist(), strict=True) if k == u]
            assert xs == sorted(xs)
    # Bounded: a chunk closes at the user that reaches ``rows``
    assert all(0 < c.num_rows < rows + max(sizes) for c in chunks)
    assert len(chunks) == 1 or len(users) > rows


@given(st.lists(st.integers(1, 6), min_size=1, max_size=40), st.integers(1, 30),
       st.lists(st.integers(1, 15), min_size=1, max_size=10))
def test_lists_of_users_come_out_as_chunks_of_whole_users(sizes, rows, batch_sizes):
    """Batches of users with their rows as lists (as Spark's groupBy gives them) come out as
    flat chunks of about ``rows`` rows, every user whole, every row once."""
    start = np.cumsum([0, *sizes])
    lists = pa.array([[{"x": int(i)} for i in range(start[u], start[u + 1])]
                      for u in range(len(sizes))])
    table = pa.table({KEY: [f"u{u:02d}" for u in range(len(sizes))], ROWS: lists})
    batches, at, i = [], 0, 0
    while at < len(sizes):
        n = batch_sizes[i % len(batch_sizes)]
        batches.append(table.slice(at, n).to_batches()[0])
        at, i = at + n, i + 1
    chunks = list(complete_users(batches, rows))
    assert pa.concat_tables(chunks).column("x").to_pylist() == list(range(sum(sizes)))
    seen: set[str] = set()
    for c in chunks:
        users = c.column(KEY).to_pylist()
        assert not set(users) & seen  # no user in two chunks
        seen |= set(users)
        for u in set(users):
            assert users.count(u) == sizes[int(u[1:])]
    # Bounded: a chunk is cut once ``rows`` are read, at the end of a batch.
    assert all(0 < c.num_rows < rows + max(batch_sizes) * max(sizes) for c in chunks)


def test_user_ids_of_other_types_are_refused(spark):
    preds, truth = generated(6)
    p = frame(spark, preds.assign(user_id=np.arange(len(preds)) / 2))
    with pytest.raises(InputError, match="user ids of type double"):
        spark_evaluate(p, frame(spark, truth), k=10)


def test_stats_equal_the_local_engine(spark, run_cli, files):
    preds, truth = generated(10)
    preds.loc[preds.index[::7], "score"] = 0.0
    metrics = ["ndcg", "map", "precision", "recall@all"]
    stats = "mean,median,p10,p90,p37,std,min,max,zeros"
    local = rankeval.evaluate(preds, truth, metrics=metrics, k=K).with_stats(stats)
    distributed = spark_evaluate(frame(spark, preds), frame(spark, truth), metrics=metrics,
                                 k=K).with_stats(stats)
    assert list(distributed.distribution) == list(local.distribution)
    for metric, table in local.distribution.items():
        assert list(distributed.distribution[metric]) == list(table)
        for stat, value in table.items():
            exact = stat != "std"  # numpy and Spark round a standard deviation differently
            assert distributed.distribution[metric][stat] == pytest.approx(
                value, abs=0 if exact else 1e-12, rel=0), (metric, stat)
    args = ["-m", "ndcg@10,map@10", "--stats", "median,p90,zeros", "-f", "json"]
    ours = run_cli("score", "--engine", "spark", files / "preds.parquet", files / "truth.csv",
                   *args)
    theirs = run_cli("score", files / "preds.parquet", files / "truth.csv", *args)
    assert ours.exit_code == 0, ours.stderr
    assert ours.json()["distribution"] == theirs.json()["distribution"]


def test_segments_equal_the_local_engine(spark, run_cli, files, tmp_path):
    preds, truth = generated(8)  # the data of ``files``
    users = sorted(set(truth["user_id"]))[::2]  # half the users: the rest are "(missing)"
    table = pd.DataFrame({"user_id": users, "country": [("DE", "FR", "")[i % 3]
                                                         for i in range(len(users))],
                          "activity": np.arange(len(users)) % 17})
    table.to_csv(tmp_path / "users.csv", index=False)
    by = ["country", "activity:quartiles"]
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "recall"], k=K).by_segment(
        tmp_path / "users.csv", by)
    distributed = spark_evaluate(frame(spark, preds), frame(spark, truth),
                                 metrics=["ndcg", "recall"], k=K).by_segment(
        tmp_path / "users.csv", by)
    assert list(distributed.segments) == list(local.segments) == by
    for word, segments in local.segments.items():
        theirs = distributed.segments[word]
        assert [(s.value, s.users) for s in theirs] == [(s.value, s.users) for s in segments]
        assert "(missing)" in [s.value for s in segments]
        for a, b in zip(segments, theirs, strict=True):
            assert b.metrics == pytest.approx(a.metrics, abs=1e-12, rel=0)
    args = ["-m", "ndcg@10", "--segments", tmp_path / "users.csv", "--segment-by", "country",
            "--fail-under", "ndcg@10[country=DE]=0.0", "-f", "json"]
    ours = run_cli("score", "--engine", "spark", files / "preds.parquet", files / "truth.csv",
                   *args)
    theirs = run_cli("score", files / "preds.parquet", files / "truth.csv", *args)
    assert ours.exit_code == theirs.exit_code == 0, ours.stderr
    assert [(s["value"], s["users"]) for s in ours.json()["segments"]["country"]] == [
        (s["value"], s["users"]) for s in theirs.json()["segments"]["country"]]


def test_intervals_html_and_per_query_equal_the_local_engine(spark, run_cli, files, tmp_path):
    """What needs every user's values in one place brings them to the driver, in the local
    engine's user order: the same bootstrap intervals, seed for seed; the same page."""
    preds, truth = generated(8)
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "map"], k=K).with_intervals(
        rounds=500, seed=3)
    distributed = spark_evaluate(frame(spark, preds), frame(spark, truth),
                                 metrics=["ndcg", "map"], k=K).with_intervals(rounds=500, seed=3)
    assert distributed.intervals == local.intervals
    assert distributed.user_id_array.to_pylist() == local.user_id_array.to_pylist()
    args = ["-m", "ndcg@10,map@10", "--ci", "--rounds", "300", "-f", "json"]
    trec = ["-m", "ndcg@10", "-f", "trec", "--per-query"]
    out = {}
    for name, engine in (("local", []), ("spark", ["--engine", "spark"])):
        report = run_cli("score", *engine, files / "preds.parquet", files / "truth.csv", *args,
                         "--html", tmp_path / f"{name}.html")
        lines = run_cli("score", *engine, files / "preds.parquet", files / "truth.csv", *trec)
        assert report.exit_code == lines.exit_code == 0, report.stderr + lines.stderr
        out[name] = (report.json(), lines.stdout, (tmp_path / f"{name}.html").read_text())
    assert out["spark"][0] == out["local"][0]  # the whole JSON report, intervals included
    assert out["spark"][1] == out["local"][1]  # trec_eval's per-query lines
    assert out["spark"][2] == out["local"][2]  # the same page, byte for byte
    assert set(out["local"][0]["ci"]["intervals"]) == {"ndcg@10", "map@10"}
    assert out["local"][1].count("\n") > 50 and 'id="distributions"' in out["local"][2]


def test_per_user_values_stay_distributed(spark, tmp_path):
    preds, truth = generated(7)
    result = spark_evaluate(frame(spark, preds), frame(spark, truth), metrics=["ndcg"], k=10)
    with pytest.raises(OptionError, match="stay on the cluster"):
        result.values("ndcg@10")
    with pytest.raises(OptionError, match="stay on the cluster"):
        result.per_user_table()
    assert type(result) is rankeval.Evaluation  # one type; its store keeps the values there
    assert result.per_user is result.store.frame() and hasattr(result.per_user, "toPandas")
    here = result.collect()  # only when asked: users x metrics doubles
    assert here.store.here and not result.store.here
    assert here.per_user is result.per_user  # still the Spark DataFrame
    local_values = rankeval.evaluate(preds, truth, metrics=["ndcg"], k=10).values("ndcg@10")
    np.testing.assert_allclose(here.values("ndcg@10"), local_values, rtol=0, atol=1e-12)
    out = tmp_path / "per_user"
    result.write_per_user(str(out))
    result.write_per_user(str(out))  # an earlier dataset is replaced
    written = pq.read_table(out).to_pandas().sort_values("user_id").reset_index(drop=True)
    local = rankeval.evaluate(preds, truth, metrics=["ndcg"], k=10).per_user
    assert written["user_id"].tolist() == sorted(local["user_id"])
    assert "per-user values where they were computed" in repr(result)
    assert "per-user values" not in repr(here)
    import os
    import stat

    old = os.umask(0o027)
    try:  # Hadoop writes with its own umask: the dataset gets the process's, as every output
        result.write_per_user(str(out))
    finally:
        os.umask(old)
    modes = {stat.S_IMODE(f.stat().st_mode) for f in out.iterdir()}
    assert modes == {0o640} and stat.S_IMODE(out.stat().st_mode) == 0o750
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep")
    with pytest.raises(OptionError, match="holds other files"):
        result.write_per_user(str(tmp_path / "other"))
    assert (tmp_path / "other" / "notes.txt").read_text() == "keep"


@pytest.fixture
def files(tmp_path):
    preds, truth = generated(8)
    (tmp_path / "preds").mkdir()
    half = len(preds) // 2
    pq.write_table(pa.Table.from_pandas(preds.iloc[:half], preserve_index=False),
                   tmp_path / "preds" / "part-0.parquet")
    pq.write_table(pa.Table.from_pandas(preds.iloc[half:], preserve_index=False),
                   tmp_path / "preds" / "part-1.parquet")
    preds.to_parquet(tmp_path / "preds.parquet", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    return tmp_path


def test_cli_spark_equals_local_json(spark, run_cli, files, tmp_path):
    args = ["-m", "ndcg,map,recall,mrr", "--k", "5,10", "-f", "json"]
    local = run_cli("score", files / "preds.parquet", files / "truth.csv", *args)
    for preds in (files / "preds", f"{files}/preds/part-*.parquet"):
        distributed = run_cli("score", "--engine", "spark", preds, files / "truth.csv", *args,
                              "--per-user", tmp_path / "users")
        assert distributed.exit_code == 0, distributed.stderr
        assert local.exit_code == 0, local.stderr
        assert distributed.json()["metrics"] == local.json()["metrics"]
        assert distributed.json()["users"] == local.json()["users"]
        same_notices = local.stderr.replace(str(files / "preds.parquet"), str(preds))
        assert distributed.stderr == same_notices
    written = pq.read_table(tmp_path / "users").num_rows
    assert written == local.json()["users"]["evaluated"]


def test_cli_spark_gates_and_validate(spark, run_cli, files):
    gate = run_cli("score", "--engine", "spark", files / "preds.parquet", files / "truth.csv",
                   "--fail-under", "ndcg@10=0.99", "-q")
    assert gate.exit_code == 1 and "ndcg@10" in gate.stderr
    checked = run_cli("validate", "--engine", "spark", files / "preds", files / "truth.csv",
                      "-f", "json")
    local = run_cli("validate", files / "preds.parquet", files / "truth.csv", "-f", "json")
    assert checked.exit_code == local.exit_code == 0
    a = json.loads(checked.stdout.replace(str(files / "preds"), str(files / "preds.parquet")))
    b = json.loads(local.stdout)
    assert (a["users"], a["notices"], a["rows_beyond_k"]) == (b["users"], b["notices"],
                                                              b["rows_beyond_k"])


@pytest.mark.parametrize("args, message", [
    (["-", "--preds-format", "csv"], "standard input is not one"),
    (["--per-user", "-"], "stay on the cluster"),
    (["--spark-conf", "nonsense"], "expected KEY=VALUE"),
])
def test_cli_spark_refuses_before_reading(run_cli, files, args, message):
    preds = [] if args[0] == "-" else [files / "preds.parquet"]
    out = run_cli("score", "--engine", "spark", *preds, *args[:1] if preds == [] else [],
                  files / "truth.csv", *(args[1:] if preds == [] else args))
    assert out.exit_code == 2 and message in out.stderr
    assert out.stderr.count("\n") == 1


def test_spark_options_need_the_spark_engine(run_cli, files):
    out = run_cli("score", files / "preds.parquet", files / "truth.csv", "--spark-master",
                  "local[1]")
    assert out.exit_code == 2 and "--spark-master needs --engine spark" in out.stderr


def test_cli_spark_bad_input_is_one_line(spark, run_cli, files):
    bad = files / "bad.csv"
    bad.write_text("user_id,item_id,score\nu1,i1,1.0\nu1,i2,abc\n")
    out = run_cli("score", "--engine", "spark", bad, files / "truth.csv")
    assert out.exit_code == 2
    assert "non-numeric" in out.stderr and "score" in out.stderr
    assert out.stderr.startswith("rankeval: error:") and "Traceback" not in out.stderr


def _ranking_evaluator_input(spark, preds: pd.DataFrame, truth: pd.DataFrame):
    """RankingEvaluator's form: per truth user with a relevant item, the predicted item ids
    (doubles) best first and the relevant ids."""
    relevant = truth[truth["relevance"] > 0]
    ordered = preds.sort_values(["user_id", "score"], ascending=[True, False])
    lists = ordered.groupby("user_id")["item_id"].apply(lambda s: [float(x) for x in s])
    labels = relevant.groupby("user_id")["item_id"].apply(lambda s: [float(x) for x in s])
    rows = [(lists.get(u, []), labels[u]) for u in labels.index]
    return spark.createDataFrame(rows, "prediction array<double>, label array<double>")


def test_ranking_evaluator_agrees_where_conventions_match(spark):
    """pyspark.ml's RankingEvaluator: precision@K (hits / K), recall@K, MAP@K (over
    min(R, K)) and binary NDCG@K equal rankeval's defaults to 1e-12; graded NDCG differs
    (it reads labels as a set)."""
    from pyspark.ml.evaluation import RankingEvaluator

    rng = np.random.default_rng(9)
    users, items = 200, 80
    preds = pd.DataFrame([(f"u{u}", int(i), float(s)) for u in range(users) if u % 10
                          for i, s in zip(rng.choice(items, 15, replace=False),
                                          rng.permutation(15), strict=True)],
                         columns=["user_id", "item_id", "score"])
    truth = pd.DataFrame([(f"u{u}", int(i), float(rng.integers(1, 4)))
                          for u in range(users) for i in rng.choice(items, 6, replace=False)],
                         columns=["user_id", "item_id", "relevance"])
    binary = truth.assign(relevance=1.0)
    data = _ranking_evaluator_input(spark, preds, truth)
    names = {"precision": "precisionAtK", "recall": "recallAtK", "map": "meanAveragePrecisionAtK",
             "ndcg": "ndcgAtK"}
    ours = rankeval.evaluate(preds.astype({"item_id": str}), binary.astype({"item_id": str}),
                             metrics=list(names), k=[1, 5, 10])
    graded = rankeval.evaluate(preds.astype({"item_id": str}), truth.astype({"item_id": str}),
                               metrics=["ndcg"], k=[5, 10])
    for k in (1, 5, 10):
        for metric, theirs in names.items():
            value = RankingEvaluator(metricName=theirs, k=k).evaluate(data)
            assert ours.metrics[f"{metric}@{k}"] == pytest.approx(value, abs=1e-12, rel=0)
    spark_ndcg = RankingEvaluator(metricName="ndcgAtK", k=10).evaluate(data)
    assert abs(graded.metrics["ndcg@10"] - spark_ndcg) > 1e-3


BEYOND = ["ndcg", "coverage", "item_coverage", "entropy", "norm_entropy", "gini",
          "personalization", "arp", "long_tail", "novelty", "ild", "serendipity",
          "ips_recall(gamma=2)", "ips_ndcg(gamma=1, sn=False)", "pop_recall",
          "ips_recall", "ips_dcg(sn=False)"]  # the last two: --propensity, per pair


def _extras(seed: int, preds: pd.DataFrame):
    """Training interactions (with a count column, some of them predicted pairs), a catalog
    missing a few predicted items, item vectors for most items."""
    rng = np.random.default_rng(seed)
    seen = preds.sample(frac=0.2, random_state=seed)[["user_id", "item_id"]]
    other = pd.DataFrame({"user_id": rng.choice(preds["user_id"].unique(), 400),
                          "item_id": [f"i{i}" for i in rng.integers(0, 70, 400)]})
    train = pd.concat([seen, other]).assign(count=rng.integers(1, 5, len(seen) + 400))
    items = sorted(set(preds["item_id"]) | set(train["item_id"]))
    catalog = pd.DataFrame({"item_id": [*items[3:], "i999", "i998"]})
    features = pd.DataFrame({"item_id": items[:-4], **{f"f{j}": rng.normal(size=len(items) - 4)
                                                       for j in range(4)}})
    return train, catalog, features


@pytest.mark.parametrize("options", [
    {}, {"exclude_seen": True, "exclude_seen_truth": True},
    {"popularity": "interactions", "tail_share": 0.4, "exclude_seen": True},
    {"popularity": "interactions", "tail_by": "items", "tail_share": 0.1,
     "novelty_model": "choice", "novelty_unseen": "zero", "catalog_padding": 1,
     "entropy_unit": "nats", "entropy_per_item": True},
], ids=["defaults", "exclude_seen", "interactions", "peers' conventions"])
def test_beyond_accuracy_equals_the_local_engine(spark, options):
    preds, truth = generated(11)
    train, catalog, features = _extras(11, preds)
    pairs = truth[["user_id", "item_id"]].drop_duplicates()
    propensity = pairs.assign(propensity=np.random.default_rng(11).uniform(0.05, 1, len(pairs)))
    local = rankeval.evaluate(preds, truth, metrics=BEYOND, k=K, train=train, catalog=catalog,
                              item_features=features, propensity=propensity, **options)
    distributed = spark_evaluate(frame(spark, preds), frame(spark, truth), metrics=BEYOND,
                                 k=K, train=frame(spark, train), catalog=frame(spark, catalog),
                                 item_features=features, propensity=propensity, chunk_rows=80,
                                 **options)
    same(local, distributed)
    # ild and serendipity leave out users they cannot score, from tie bounds too: NaN only
    # where no user has a value (the metric is undefined)
    assert np.isfinite([x for m, pair in local.tie_range.items() for x in pair
                        if m not in local.undefined]).all()
    assert {r: (i.path, i.rows, i.users) for r, i in distributed.inputs.items()} == {
        r: (i.path, i.rows, i.users) for r, i in local.inputs.items()}  # formats: spark, dataframe
    assert distributed.exposure is None or distributed.exposure == local.exposure
    codes = {n.code for n in local.notices}
    assert "outside_catalog" in codes
    assert {"seen_truth_dropped"} <= codes or not options.get("exclude_seen_truth")


def test_cli_spark_with_train_and_validate(spark, run_cli, files, tmp_path):
    preds, _ = generated(8)
    train, catalog, _ = _extras(8, preds)
    train.to_parquet(tmp_path / "train.parquet", index=False)
    catalog.to_csv(tmp_path / "catalog.csv", index=False)
    args = ["-m", "ndcg@10,coverage@10,novelty@10,long_tail@10", "--train",
            tmp_path / "train.parquet", "--catalog", tmp_path / "catalog.csv", "--exclude-seen",
            "-f", "json"]
    ours = run_cli("score", "--engine", "spark", files / "preds.parquet", files / "truth.csv",
                   *args)
    theirs = run_cli("score", files / "preds.parquet", files / "truth.csv", *args)
    assert ours.exit_code == theirs.exit_code == 0, ours.stderr
    assert ours.json()["metrics"] == pytest.approx(theirs.json()["metrics"], abs=1e-12)
    assert ours.json()["inputs"] == theirs.json()["inputs"]
    checked = run_cli("validate", "--engine", "spark", files / "preds.parquet",
                      files / "truth.csv", *args[2:-2])
    assert checked.exit_code == 0, checked.stderr
    bad = train.assign(count=-1.0)
    bad.to_parquet(tmp_path / "bad.parquet", index=False)
    refused = run_cli("score", "--engine", "spark", files / "preds.parquet", files / "truth.csv",
                      "-m", "arp@10", "--train", tmp_path / "bad.parquet", "--popularity",
                      "interactions")
    assert refused.exit_code == 2 and "counts below 0" in refused.stderr


def test_no_java_is_one_clear_line(tmp_path):
    """Spark that cannot start (here: no Java) is an error naming what to install, exit 2."""
    import os
    import subprocess
    import sys

    from .conftest import SAMPLE

    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    out = subprocess.run([sys.executable, "-m", "rankeval", "score", "--engine", "spark",
                          SAMPLE / "preds.parquet", SAMPLE / "truth.parquet"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and not out.stdout
    assert "rankeval: error: Spark did not start" in out.stderr and "Java 17" in out.stderr
    assert "Traceback" not in out.stderr


CONNECT = """
import json, sys
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from rankeval.spark import evaluate
# A Spark Connect server; 3 shuffle partitions, as the other tests' session (200 take 28 s)
spark = (SparkSession.builder.remote("local[2]")
         .config("spark.sql.shuffle.partitions", "3").getOrCreate())
preds, truth = (spark.createDataFrame(pq.read_table(p)) for p in sys.argv[1:3])
result = evaluate(preds, truth, metrics=["ndcg", "map", "recall"], k=[5, 10])
print(json.dumps({"kind": type(spark).__module__, "metrics": result.metrics,
                  "users": result.users.evaluated, "rows": result.per_user.count(),
                  "median": result.with_stats("median").distribution}))
spark.stop()
"""


# A process and a server of its own: it need not wait for the shared session's worker.
@pytest.mark.xdist_group("spark-connect")
def test_spark_connect_gives_the_same_numbers(tmp_path):
    """Over Spark Connect (no RDDs, no SparkContext), in a process of its own: a local
    Connect server started by pyspark."""
    import os
    import subprocess
    import sys

    preds, truth = generated(12)
    preds.to_parquet(tmp_path / "p.parquet", index=False)
    truth.to_parquet(tmp_path / "t.parquet", index=False)
    out = subprocess.run([sys.executable, "-c", CONNECT, tmp_path / "p.parquet",
                          tmp_path / "t.parquet"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "map", "recall"], k=[5, 10])
    assert got["kind"] == "pyspark.sql.connect.session"
    assert got["metrics"] == local.metrics  # bit for bit
    assert got["users"] == got["rows"] == local.users.evaluated
    assert got["median"] == local.with_stats("median").distribution


@pytest.mark.parametrize("preds_name, truth_name", [("p.run", "t.qrels"), ("p.jsonl", "t.tsv"),
                                                    ("p.csv", "t.jsonl")])
def test_text_formats_read_by_spark_as_locally(spark, run_cli, tmp_path, preds_name,
                                               truth_name):
    """Spark reads TREC (score orders, rank unread, as trec_eval), JSON Lines, CSV and TSV
    into the columns the local readers give, so the numbers are the local engine's."""
    from .conftest import SAMPLE

    for source, name in ((SAMPLE / "preds.csv", preds_name), (SAMPLE / "truth.csv", truth_name)):
        assert run_cli("convert", source, tmp_path / name, "-q").exit_code == 0
    args = [tmp_path / preds_name, tmp_path / truth_name, "-m", "ndcg@10,map@10,mrr@10",
            "-f", "json"]
    ours, theirs = run_cli("score", "--engine", "spark", *args), run_cli("score", *args)
    assert ours.exit_code == theirs.exit_code == 0, ours.stderr
    assert ours.json()["metrics"] == theirs.json()["metrics"]
    assert ours.json()["users"] == theirs.json()["users"]


def test_a_failed_spark_job_is_one_line_naming_its_cause(spark, run_cli, tmp_path):
    (tmp_path / "ragged.csv").write_text("user_id,item_id,score\nu1,i1,1.0\nu1,i2,2.0,x\n")
    (tmp_path / "t.csv").write_text("user_id,item_id,relevance\nu1,i1,1\n")
    out = run_cli("score", "--engine", "spark", tmp_path / "ragged.csv", tmp_path / "t.csv")
    assert out.exit_code == 2 and out.stderr.count("\n") == 1
    assert "the Spark job failed: [MALFORMED_CSV_RECORD]" in out.stderr
    assert "u1,i2,2.0,x" in out.stderr and "Traceback" not in out.stderr


def test_trec_lines_are_checked_as_locally(spark, run_cli, tmp_path):
    (tmp_path / "bad.run").write_text("u1 Q0 d1 1 2.0 x\n\nu1 Q0 d2 2 1.0\n")
    (tmp_path / "short.run").write_text("u1 Q0 d1 1 2.0 x\nu1 Q0 d2 2 1.0\n")
    (tmp_path / "t.qrels").write_text("u1 0 d1 1\n")
    for name, problem in (("bad.run", "1 blank line"), ("short.run", "1 line without the 6")):
        out = run_cli("score", "--engine", "spark", tmp_path / name, tmp_path / "t.qrels")
        assert out.exit_code == 2 and problem in out.stderr, out.stderr


def test_help_lists_every_setting_as_the_local_api():
    import inspect

    local = inspect.signature(rankeval.evaluate).parameters
    spark = inspect.signature(spark_evaluate).parameters
    # the same typed keywords: the settings, the column names (Unpack of one TypedDict)
    assert spark["options"].annotation == local["options"].annotation == \
        "Unpack[Options]"
    assert "rankeval.evaluate" in spark_evaluate.__doc__


def test_stochastic_runs_equal_the_local_engine(spark):
    """A run of sampled rankings (a sample column): each user's mean over its samples, the
    users counted once and the spread summary, as the local engine gives them; the per-user
    dataset holds the means, each user's number of samples and the sds, on the cluster and
    once collected, and its segment means read the metrics alone."""
    from tests.test_expected_exposure import _generated

    run, truth, _, _ = _generated(11)
    metrics = ["ndcg", "ee_l", "ee_r", "recall", "map"]
    local = rankeval.evaluate(run, truth, metrics=metrics, k=K)
    distributed = spark_evaluate(frame(spark, run), frame(spark, truth), metrics=metrics, k=K,
                                 chunk_rows=23)
    assert distributed.users == local.users
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name
    assert local.samples is not None and distributed.samples is not None
    assert (distributed.samples.rankings, distributed.samples.fewest,
            distributed.samples.most) == (local.samples.rankings, local.samples.fewest,
                                          local.samples.most)
    for name, value in local.samples.spread.items():
        assert distributed.samples.spread[name] == pytest.approx(value, abs=1e-12), name
    theirs = distributed.per_user.toPandas().sort_values("user_id").reset_index(drop=True)
    ours = local.per_user.sort_values("user_id").reset_index(drop=True)
    assert list(theirs.columns) == list(ours.columns)
    assert "samples" in ours.columns and f"{local.specs[0]} sd" in ours.columns
    assert theirs.user_id.tolist() == ours.user_id.tolist()
    np.testing.assert_allclose(theirs.iloc[:, 1:].to_numpy(dtype=float),
                               ours.iloc[:, 1:].to_numpy(dtype=float), atol=1e-12)
    here = distributed.collect().per_user_table()
    assert here.column_names == local.per_user_table().column_names
    assert here.column("samples").to_pylist() == local.per_user_table().column(
        "samples").to_pylist()
    users = pd.DataFrame({"user_id": ours.user_id, "half": ["a", "b"] * (len(ours) // 2)
                          + ["a"] * (len(ours) % 2)})
    mine, yours = (e.by_segment(users, "half", gaps=False).segments["half"]
                   for e in (local, distributed))
    for a, b in zip(mine, yours, strict=True):
        assert a.metrics.keys() == b.metrics.keys() == set(map(str, local.specs))
        assert list(a.metrics.values()) == pytest.approx(list(b.metrics.values()), abs=1e-12)


@pytest.mark.parametrize("kind", ["one value", "one per user"])
def test_a_sample_column_of_one_value_is_a_deterministic_run(spark, kind):
    """A sample column holding one value in the whole run (a TREC run's Q0) is no stochastic
    run, however the users fall into tasks; one value per user is (one sample each), as
    locally."""
    run, truth = generated(3, users=30, items=12)
    run["sample"] = "Q0" if kind == "one value" else "s" + run.user_id.astype(str)
    local = rankeval.evaluate(run, truth, metrics="ndcg,recall", k=5)
    distributed = spark_evaluate(frame(spark, run), frame(spark, truth), metrics="ndcg,recall",
                                 k=5, chunk_rows=7)
    assert (local.samples is None) == (distributed.samples is None) == (kind == "one value")
    assert distributed.per_user.columns == list(local.per_user.columns)
    assert distributed.metrics == pytest.approx(local.metrics, abs=1e-12)


def test_awrf_equals_the_local_engine(spark):
    """--item-groups travel with the item statistics to every task."""
    from tests.test_awrf import _data

    run, truth, groups = _data(6)
    metrics = ["awrf@3", "awrf(by='language', target='catalog')@10", "ndcg@10",
               "exposure_ratio(background='catalog')@5"]
    local = rankeval.evaluate(run, truth, metrics=metrics, item_groups=groups)
    distributed = spark_evaluate(frame(spark, run), frame(spark, truth), metrics=metrics,
                                 item_groups=groups, chunk_rows=31)
    assert distributed.users == local.users
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name
    for name, totals in local.group_exposure.items():
        theirs = distributed.group_exposure[name]
        assert theirs.users == totals.users
        for a, b in zip(theirs.rows(), totals.rows(), strict=True):
            assert a[:3] == pytest.approx(b[:3], abs=1e-12)


def _by_bucket(df: pd.DataFrame, root, buckets: int = 4, user: str = "user_id") -> str:
    """``df`` written as a Hive-partitioned Parquet dataset, bucket = a hash of the user,
    each bucket's rows in their order."""
    bucket = pd.util.hash_array(df[user].astype(str).to_numpy()) % buckets
    for b in range(buckets):
        part = df[bucket == b]
        if len(part):
            (root / f"bucket={b}").mkdir(parents=True)
            pq.write_table(pa.Table.from_pandas(part, preserve_index=False),
                           root / f"bucket={b}" / "part-0.parquet")
    return str(root)


@pytest.mark.parametrize("options", [{}, {"ties": "input"}, {"ties": "expected"},
                                     {"compat": "trec_eval"}],
                         ids=["defaults", "input", "expected", "trec_eval"])
def test_inputs_partitioned_by_user_skip_the_shuffle(spark, tmp_path, options):
    """Hive-style bucket directories, one task per bucket, no shuffle: the local values, a
    bucket without truth rows included."""
    preds, truth = generated(5)
    metrics = METRICS if options.get("ties") != "expected" else [m for m in METRICS if m not in
                                                                 OPEN_FORM]
    p = _by_bucket(preds, tmp_path / "preds", 5)
    t = _by_bucket(truth[truth.user_id.astype(str) != preds.user_id.astype(str).iloc[0]],
                   tmp_path / "truth", 5)
    kept = truth[truth.user_id.astype(str) != preds.user_id.astype(str).iloc[0]]
    local = rankeval.evaluate(preds, kept, metrics=metrics, k=K, **options)
    distributed = spark_evaluate(p, t, metrics=metrics, k=K, chunk_rows=50, spark=spark,
                                 partitioned_by="bucket", **options)
    same(local, distributed, labels=False)


def _seen_items_equal_local(spark, seed: int, write, **spark_options):
    """Seen-item exclusion with training interactions written by ``write`` (each input to
    its own folder): the local engine's values."""
    preds, truth = generated(seed)
    train, _, _ = _extras(seed, preds)
    options = {"exclude_seen": True, "exclude_seen_truth": True}
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "novelty"], k=K, train=train,
                              **options)
    distributed = spark_evaluate(write(preds, "p"), write(truth, "t"),
                                 metrics=["ndcg", "novelty"], k=K, train=write(train, "tr"),
                                 spark=spark, **spark_options, **options)
    same(local, distributed, labels=False)
    return preds, truth


def test_partitioned_train_for_seen_items(spark, tmp_path):
    _seen_items_equal_local(spark, 6, lambda df, name: _by_bucket(df, tmp_path / name),
                            partitioned_by="bucket")


def test_partitioned_inputs_from_the_command_line(spark, run_cli, tmp_path):
    """The claim is checked: a user under two bucket values is one line, exit 2; a
    DataFrame or a CSV file cannot be read by partition."""
    preds, truth = generated(7)
    p, t = _by_bucket(preds, tmp_path / "p"), _by_bucket(truth, tmp_path / "t")
    args = ["-m", "ndcg@10,map@10", "-f", "json"]
    ours = run_cli("score", "--engine", "spark", "--spark-partitioned-by", "bucket", p, t,
                   *args)
    assert ours.exit_code == 0, ours.stderr
    theirs = rankeval.evaluate(preds, truth, metrics="ndcg@10,map@10")
    assert ours.json()["metrics"] == pytest.approx(theirs.metrics, abs=1e-12)
    wrong = _by_bucket(truth, tmp_path / "wrong", 3)  # another number of buckets
    out = run_cli("score", "--engine", "spark", "--spark-partitioned-by", "bucket", p, wrong,
                  *args)
    assert out.exit_code == 2, out.stdout
    assert "users under more than one partition value" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    with pytest.raises(OptionError, match="reads Parquet datasets by path"):
        spark_evaluate(frame(spark, preds), t, metrics="ndcg@10", spark=spark,
                       partitioned_by="bucket")
    out = run_cli("score", "--engine", "spark", "--spark-partitioned-by", "day", p, t, *args)
    assert out.exit_code == 2 and "is not under a day=VALUE directory" in out.stderr


# Parquet inputs by path: read by pyarrow in Python tasks, shuffled as Arrow blobs (exchange)


def _in_files(df: pd.DataFrame, root, files: int = 3, row_group: int = 17, **types) -> str:
    """``df`` as a directory of ``files`` Parquet files (in input order by name) of small row
    groups, its columns cast to ``types``."""
    root.mkdir(parents=True)
    table = pa.Table.from_pandas(df, preserve_index=False)
    for name, kind in types.items():
        table = table.set_column(table.schema.get_field_index(name), name,
                                 table.column(name).cast(kind))
    for f, part in enumerate(np.array_split(np.arange(len(df)), files)):
        pq.write_table(table.take(pa.array(part)), root / f"part-{f:03d}.parquet",
                       row_group_size=row_group)
    return str(root)


def _numeric(df: pd.DataFrame) -> pd.DataFrame:
    """generated()'s ids as integers (u12 -> 12; i7 -> 7, 007 -> 1007)."""
    out = df.copy()
    out["user_id"] = out["user_id"].str.lstrip("u").astype(np.int64)
    out["item_id"] = [int(i[1:]) if i.startswith("i") else 1000 + int(i) for i in out["item_id"]]
    return out


@pytest.fixture
def units_seen(monkeypatch):
    """Units of a few row groups (many tasks, users across units and files), and the units
    each evaluation cut its inputs into: the test fails if Spark read them instead."""
    from rankeval.engines.spark import driver, exchange

    monkeypatch.setattr(exchange, "UNIT_ROWS", 40)
    seen: list = []
    found = exchange.find_units

    def spy(*args):
        seen.append(found(*args))
        return seen[-1]

    monkeypatch.setattr(driver, "find_units", spy)  # the driver's name for it
    return seen


@pytest.mark.parametrize("options, ids", [
    ({}, "text"), ({"ties": "input"}, "text"), ({"ties": "expected"}, "int64"),
    ({"compat": "trec_eval"}, "int32 and int64"), ({}, "int64 and text"),
    ({"skip_missing_users": True}, "int64"),
], ids=lambda x: x if isinstance(x, str) else ",".join(map(str, x.values())) or "defaults")
def test_parquet_paths_are_read_by_pyarrow_as_the_local_engine(spark, tmp_path, units_seen,
                                                               options, ids):
    """Every metric, setting and kind of user id (a user's rows meet whatever the type of
    each input's id column), users split over files and row groups, a run whose order is
    the file's (no score: the rows' input order across units decides)."""
    preds, truth = generated(12)
    if ids != "text":
        preds, truth = _numeric(preds), _numeric(truth)
    if ids == "int64 and text":
        truth["user_id"] = truth["user_id"].astype(str)
    if options.get("ties") == "input":
        preds = preds.drop(columns="score")
    metrics = METRICS if options.get("ties") != "expected" else [m for m in METRICS if m not in
                                                                 OPEN_FORM]
    local = rankeval.evaluate(preds, truth, metrics=metrics, k=K, **options)
    narrow = {"user_id": pa.int32()} if ids == "int32 and int64" else {}
    distributed = spark_evaluate(_in_files(preds, tmp_path / "p", **narrow),
                                 _in_files(truth, tmp_path / "t", files=2), metrics=metrics,
                                 k=K, chunk_rows=60, spark=spark, **options)
    same(local, distributed, labels=False)
    assert units_seen and len(units_seen[-1].units) > 5  # read by pyarrow, in many units


def test_parquet_paths_with_train_and_a_fallback_to_spark(spark, tmp_path, units_seen):
    """Training interactions by path go the same way; a dataset whose user column is a Hive
    partition directory (not in its files) is read by Spark, with the same numbers."""
    preds, truth = _seen_items_equal_local(spark, 13,
                                           lambda df, name: _in_files(df, tmp_path / name))
    assert units_seen[-1] is not None
    assert {u[0] for u in units_seen[-1].units} == {0, 1, 2}  # every input read by pyarrow
    by_user = tmp_path / "by_user"
    pq.write_to_dataset(pa.Table.from_pandas(truth, preserve_index=False), by_user,
                        partition_cols=["user_id"])
    distributed = spark_evaluate(_in_files(preds, tmp_path / "p2"), str(by_user),
                                 metrics=["ndcg"], k=K, spark=spark)
    local = rankeval.evaluate(preds, truth, metrics=["ndcg"], k=K)
    assert units_seen[-1] is None  # Spark read it
    assert distributed.metrics == pytest.approx(local.metrics, abs=1e-12)


def test_a_file_pyarrow_cannot_read_is_one_line(spark, run_cli, tmp_path):
    preds, truth = generated(14)
    p = _in_files(preds, tmp_path / "p")
    good = (tmp_path / "p" / "part-000.parquet").read_bytes()
    (tmp_path / "p" / "part-001.parquet").write_bytes(good[:300])  # cut short
    t = _in_files(truth, tmp_path / "t")
    out = run_cli("score", "--engine", "spark", p, t, "-m", "ndcg@10")
    assert out.exit_code == 2, out.stdout
    assert out.stderr.strip() == (f"rankeval: error: {tmp_path}/p/part-001.parquet: not a "
                                  "readable Parquet file (Parquet magic bytes not found in "
                                  "footer. Either the file is corrupted or this is not a parquet "
                                  "file.)")


@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "ffff", ""]), min_size=1,
                max_size=60), st.integers(1, 9), st.sampled_from(["text", "int64", "int32"]))
def test_blobs_carry_each_partitions_rows_in_their_order(users, parts, kind):
    """Each row once, in the blob of its user's partition, the rows of a partition in their
    order; a user's partition is the same for every integer type of its id."""
    from rankeval.engines.distributed.chunks import Layout
    from rankeval.engines.spark.exchange import _blobs, partition_of, unpacked

    key: pa.Array = pa.array(users)
    if kind != "text":
        key = pa.array([len(u) * 7919 - 3 for u in users], pa.int64() if kind == "int64"
                       else pa.int32())
    table = pa.table({KEY: key, "x": np.arange(len(users))})
    part = partition_of(table.column(KEY), parts)
    assert ((part >= 0) & (part < parts)).all()
    if kind != "text":
        wide = partition_of(pa.chunked_array([key.cast(pa.int64())]), parts)
        assert (wide == part).all()
    targets = np.arange(100, 100 + parts)
    batch = _blobs(table, part, targets)
    layout = Layout(("p",), ("parquet",), ({"user": (KEY, "u"), "x": ("x", "x")},))
    got = []
    for target, blob in zip(batch.column(0).to_pylist(), batch.column(1), strict=True):
        one = pa.RecordBatch.from_arrays([pa.array([target]), pa.array([blob.as_py()])],
                                         names=["t", "b"])
        xs = pa.Table.from_batches(unpacked([one], layout)).column("x").to_pylist()
        assert xs == sorted(xs) and len(set(part[xs])) == 1  # one partition, in order
        assert target == targets[part[xs[0]]]
        got += xs
    assert sorted(got) == list(range(len(users)))
    by_user: dict = {}
    for u, p in zip(key.to_pylist(), part, strict=True):
        assert by_user.setdefault(u, p) == p


@pytest.mark.parametrize("pack_bytes", [1 << 30, 2000])
def test_units_read_every_row_once_in_input_order(tmp_path, monkeypatch, pack_bytes):
    """read_pack in this process: every row of every file once, in small pieces (units of a
    few row groups; blobs cut to PACK_BYTES), each partition's rows in input order, the input
    order (SEQ) counted across files and units."""
    from rankeval.engines.distributed.chunks import SEQ, Layout
    from rankeval.engines.spark import exchange

    monkeypatch.setattr(exchange, "UNIT_ROWS", 30)
    monkeypatch.setattr(exchange, "PACK_BYTES", pack_bytes)
    preds, _ = generated(15)
    path = _in_files(preds, tmp_path / "p", files=4, row_group=11)
    columns = ["user_id", "item_id", "score"]

    class Listed:  # what find_units asks of a DataFrame: Spark's listing of its files
        def inputFiles(self):
            return [f"file://{f}" for f in (tmp_path / "p").glob("*.parquet")]
    layout = Layout((path,), ("parquet",), ({"user": (KEY, "user_id"),
                                             "item": ("p_item", "item_id"),
                                             "score": ("p_score", "score")},))
    key_text = False
    units = exchange.find_units([Listed()], [set(columns)], ["user_id"])
    assert units is not None and len(units.units) > 4
    targets = np.arange(5)
    index = pa.RecordBatch.from_arrays([pa.array(range(len(units.units)))], names=["id"])
    out = list(exchange.read_pack([index], units, layout, key_text, True, targets))
    assert len(out) > len(units.units) or pack_bytes > 1 << 20
    rows = pa.Table.from_batches(exchange.unpacked(out, layout))
    assert sorted(rows.column(SEQ).to_pylist()) == list(range(len(preds)))
    back = preds.iloc[rows.column(SEQ).to_numpy()]
    assert rows.column(KEY).to_pylist() == back["user_id"].tolist()
    assert rows.column(layout.preds["item"][0]).to_pylist() == back["item_id"].tolist()
    for blob in out:
        for target, one in zip(blob.column(0).to_pylist(), blob.column(1), strict=True):
            seq = [b.column(SEQ).to_pylist() for b in pa.ipc.open_stream(one.as_buffer())]
            flat = [x for s in seq for x in s]
            assert flat == sorted(flat)
            assert {int(p) for p in exchange.partition_of(
                pa.chunked_array([preds["user_id"].iloc[flat].tolist()]), 5)} == {target}


def test_parquet_paths_as_spark_and_pandas_write_them(spark, run_cli, tmp_path, units_seen):
    """A category (dictionary) user column beside a plain one, a directory whose name Spark
    lists escaped (a space: %20), a single file, a _SUCCESS marker, an empty file, one
    partition: the local numbers; validate reads the same way."""
    preds, truth = generated(16)
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "map"], k=K)
    (tmp_path / "p dir").mkdir()
    as_category = preds.assign(user_id=preds["user_id"].astype("category"),
                               item_id=preds["item_id"].astype("category"))
    pq.write_table(pa.Table.from_pandas(as_category, preserve_index=False),
                   tmp_path / "p dir" / "part-0.parquet", row_group_size=50)
    (tmp_path / "p dir" / "_SUCCESS").write_bytes(b"")
    (tmp_path / "p dir" / "part-1.parquet").write_bytes(b"")  # Spark skips an empty file
    truth.to_parquet(tmp_path / str(tmp_path / "truth.parquet"), index=False)
    for partitions in (None, 1):
        distributed = spark_evaluate(str(tmp_path / "p dir"), str(tmp_path / "truth.parquet"),
                                     metrics=["ndcg", "map"], k=K, spark=spark,
                                     partitions=partitions)
        assert units_seen[-1] is not None and len(units_seen[-1].units) > 3
        same(local, distributed, labels=False)
    folder, file, t = tmp_path / "p dir", tmp_path / "p dir" / "part-0.parquet", tmp_path / "t"
    (tmp_path / "truth.parquet").rename(t)
    out = run_cli("validate", "--engine", "spark", str(folder), str(t))
    assert out.exit_code == 0, out.stderr
    assert units_seen[-1] is not None
    mine = run_cli("validate", str(file), str(t), "--preds-format", "parquet",
                   "--truth-format", "parquet")
    assert out.stdout.replace(str(folder), "P") == mine.stdout.replace(str(file), "P")


def test_parquet_paths_with_bad_rows_are_refused_as_locally(spark, run_cli, tmp_path,
                                                            units_seen):
    """Empty user ids and a run without rows: one line, exit 2, the local engine's problem."""
    preds, truth = generated(17)
    holes = preds.assign(user_id=preds["user_id"].where(preds.index % 7 != 3, None))
    _in_files(holes, tmp_path / "p")
    truth.to_parquet(tmp_path / "t.parquet", index=False)
    out = run_cli("score", "--engine", "spark", str(tmp_path / "p"), str(tmp_path / "t.parquet"))
    assert units_seen[-1] is not None
    assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    holes.to_parquet(tmp_path / "p.parquet", index=False)
    mine = run_cli("score", str(tmp_path / "p.parquet"), str(tmp_path / "t.parquet"))
    problem = mine.stderr.split(": ", 3)[3].split(", e.g.")[0]  # column 'user_id': N empty ids
    assert mine.exit_code == 2 and problem in out.stderr, (mine.stderr, out.stderr)
    preds.iloc[:0].to_parquet(tmp_path / "none.parquet", index=False)
    out = run_cli("score", "--engine", "spark", str(tmp_path / "none.parquet"),
                  str(tmp_path / "t.parquet"))
    assert out.exit_code == 2 and "no data rows" in out.stderr, out.stderr



@pytest.mark.parametrize("extra", [[], ["--gold-strata", "topic"], ["--ppi-lambda", "1"]],
                         ids=["ppi++", "strata", "classic"])
def test_gold_equals_the_local_engine(spark, run_cli, tmp_path, extra):
    """score --gold (#48): the partitions' moments added up give the local engine's
    estimates, plan and counts."""
    from .test_gold import judged_csv, same_gold

    run, machine, human = judged_csv(tmp_path)
    args = [run, machine, "-m", "ndcg@10,p@5,map", "--gold", human, "--gold-plan", "0.04",
            *extra, "-f", "json"]
    local = run_cli("score", *args)
    assert local.exit_code == 0, local.stderr
    ours = run_cli("score", "--engine", "spark", *args)
    assert ours.exit_code == 0, ours.stderr
    same_gold(local.json(), ours.json())
    assert ours.json()["metrics"] == local.json()["metrics"]
    strata = local.json()["gold"]["estimates"]["ndcg@10"].get("strata", [])
    assert len(strata) == (2 if "--gold-strata" in extra else 0)
