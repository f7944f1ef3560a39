"""The Ray engine gives the local engine's numbers, counts, notices and errors.

One local Ray (2 CPUs) for the whole test run, started by the ``ray_session`` fixture; the
inputs are Ray Datasets of several blocks and the users are spread over several partitions,
so that every partition gets shards from many blocks and partials from many tasks are merged.
ray is a test requirement: a missing one fails these tests, it never skips them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankeval
from rankeval.errors import InputError, OptionError
from rankeval.ray import evaluate as ray_evaluate

from .test_spark import BEYOND, K, _extras, generated

# Under pytest-xdist, every Ray test runs on one worker: one local Ray per test run.
pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]


def dataset(df: pd.DataFrame, blocks: int = 3):
    """A Ray Dataset of ``blocks`` Arrow blocks (a user's rows across several of them)."""
    import ray.data

    table = pa.Table.from_pandas(df, preserve_index=False)
    step = -(-len(table) // blocks)
    return ray.data.from_arrow([table.slice(i, step) for i in range(0, len(table), step)])


def same(local, distributed, renamed: tuple[str, str] = ("", "")) -> None:
    """Per-user values to 1e-12, means to 1e-12, identical counts and notices (``renamed``:
    an input's label in the local notices, and in the distributed ones)."""
    assert distributed.users == local.users
    assert [json.dumps(n.to_dict()) for n in distributed.notices] == [
        json.dumps(n.to_dict()).replace(*renamed) for n in local.notices]
    assert distributed.prediction_rows_beyond_k == local.prediction_rows_beyond_k
    assert distributed.tied_users == local.tied_users
    assert list(distributed.metrics) == list(local.metrics)
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0,
                                                          nan_ok=True), name
    for name, (low, high) in local.tie_range.items():
        assert distributed.tie_range[name] == pytest.approx((low, high), abs=1e-12, rel=0,
                                                            nan_ok=True)
    theirs = distributed.per_user.to_pandas().sort_values("user_id").reset_index(drop=True)
    ours = local.per_user.sort_values("user_id").reset_index(drop=True)
    assert list(theirs.columns) == list(ours.columns)
    assert theirs["user_id"].tolist() == ours["user_id"].tolist()
    assert len(theirs) == local.users.evaluated > 0
    # NaN where a metric cannot score a user (ild, serendipity), on both sides alike
    np.testing.assert_allclose(theirs.drop(columns="user_id").to_numpy(dtype=float),
                               ours.drop(columns="user_id").to_numpy(dtype=float), rtol=0,
                               atol=1e-12)


def test_ranks_duplicates_and_column_names(ray_session):
    preds, truth = generated(2, ranks=True)
    preds = pd.concat([preds, preds.iloc[::17]])  # repeated (user, item) pairs
    preds.columns = ["qid", "docno", "position"]
    truth.columns = ["qid", "docno", "grade"]
    columns = {"user_col": "qid", "item_col": "docno", "rank_col": "position",
               "relevance_col": "grade"}
    local = rankeval.evaluate(preds, truth, metrics=["ndcg", "map", "mrr"], k=K, dedupe=True,
                              **columns)
    distributed = ray_evaluate(dataset(preds, 4), dataset(truth), metrics=["ndcg", "map", "mrr"],
                               k=K, dedupe=True, partitions=5, **columns)
    same(local, distributed)
    assert any(n.code == "duplicates_dropped" for n in local.notices)


def test_means_do_not_depend_on_partitioning(ray_session):
    preds, truth = generated(3, users=300)
    runs = [ray_evaluate(dataset(preds, b), dataset(truth, b), metrics=["ndcg", "map"], k=K,
                         partitions=p) for p, b in ((1, 1), (2, 3), (7, 5))]
    assert runs[0].metrics == runs[1].metrics == runs[2].metrics  # bit for bit
    assert runs[0].users == runs[1].users == runs[2].users


def test_input_order_decides_within_each_user(ray_session, tmp_path):
    """Without a rank or score column (and with ties="input") the rows' order in the files
    is the ranking, whichever blocks and partitions the rows go through."""
    preds, truth = generated(13)
    run = preds.drop(columns="score").sample(frac=1, random_state=1)
    third = -(-len(run) // 3)
    for i in range(3):
        run.iloc[i * third:(i + 1) * third].to_parquet(tmp_path / f"part-{i}.parquet",
                                                       index=False)
    local = rankeval.evaluate(run, truth, metrics=["ndcg", "mrr", "precision"], k=K)
    distributed = ray_evaluate(str(tmp_path), dataset(truth), metrics=["ndcg", "mrr",
                                                                       "precision"],
                               k=K, partitions=4)
    same(local, distributed, ("of predictions", f"of {tmp_path}"))
    tied = ray_evaluate(dataset(preds, 9), dataset(truth), metrics=["ndcg"], k=K,
                        ties="input", partitions=3)  # 9 blocks: runs of them per split task
    assert tied.metrics == pytest.approx(rankeval.evaluate(
        preds, truth, metrics=["ndcg"], k=K, ties="input").metrics, abs=1e-12, rel=0)


def test_input_errors_are_counted_as_locally(ray_session):
    preds, truth = generated(4)
    preds = preds.copy()
    preds.loc[preds.index[::40], "score"] = np.nan
    dup = pd.concat([preds, preds.iloc[[3, 50, 90]]])
    for p, t in ((preds, truth), (dup.fillna(1.0), truth)):
        with pytest.raises(InputError) as local:
            rankeval.evaluate(p, t, k=K)
        with pytest.raises(InputError) as distributed:
            ray_evaluate(dataset(p), dataset(t), k=K, partitions=4)
        a, b = local.value, distributed.value
        assert (b.problem, b.count, b.column, b.path) == (a.problem, a.count, a.column, a.path)
        assert len(b.examples) == min(5, a.count)
        assert "row of user" in str(b)


def test_validate_finds_every_problem_as_locally(ray_session):
    from rankeval.engines.validation import validate_inputs
    from rankeval.ray import read_inputs
    from rankeval.ray import validate_inputs as validate_on_ray

    preds, truth = generated(5)
    preds.loc[preds.index[::30], "score"] = np.inf
    truth.loc[truth.index[::25], "relevance"] = np.nan
    settings = rankeval.make_settings(None, K)
    local = validate_inputs(preds, truth, settings)
    distributed = validate_on_ray(*read_inputs(dataset(preds), dataset(truth)), settings, {},
                                  partitions=3)
    assert [(e.problem, e.count) for e in distributed.errors] == [
        (e.problem, e.count) for e in local.errors]
    assert len(local.errors) == 2


def test_partitions_are_the_same_in_every_process(ray_session):
    """Every input's rows of a user meet in one partition: the hash of the id's text is
    computed alike in the driver and in the workers (no per-process hash seed)."""
    from rankeval.engines.distributed.hashing import partition_of
    from rankeval.engines.ray.exchange import remote

    text = pa.chunked_array([[f"u{i}" for i in range(500)] + [None, "", "u7"]])
    here = partition_of(text, 7)
    there = ray_session.get(remote(partition_of).remote(text, 7))
    assert here.tolist() == there.tolist()
    assert set(here.tolist()) == set(range(7)) and here[7] == here[-1]


@pytest.mark.parametrize("options", [
    {}, {"exclude_seen": True, "exclude_seen_truth": True},
    {"popularity": "interactions", "tail_share": 0.4, "exclude_seen": True},
    {"popularity": "interactions", "tail_by": "items", "tail_share": 0.1,
     "novelty_model": "choice", "novelty_unseen": "zero", "catalog_padding": 1,
     "entropy_unit": "nats", "entropy_per_item": True},
], ids=["defaults", "exclude_seen", "interactions", "peers' conventions"])
def test_beyond_accuracy_equals_the_local_engine(ray_session, options):
    preds, truth = generated(11)
    train, catalog, features = _extras(11, preds)
    pairs = truth[["user_id", "item_id"]].drop_duplicates()
    propensity = pairs.assign(propensity=np.random.default_rng(11).uniform(0.05, 1, len(pairs)))
    local = rankeval.evaluate(preds, truth, metrics=BEYOND, k=K, train=train, catalog=catalog,
                              item_features=features, propensity=propensity, **options)
    distributed = ray_evaluate(dataset(preds), dataset(truth), metrics=BEYOND, k=K,
                               train=dataset(train, 4), catalog=dataset(catalog, 2),
                               item_features=features, propensity=propensity, partitions=3,
                               **options)
    same(local, distributed)
    assert np.isfinite([x for m, pair in local.tie_range.items() for x in pair
                        if m not in local.undefined]).all()
    assert {r: (i.rows, i.users) for r, i in distributed.inputs.items()} == {
        r: (i.rows, i.users) for r, i in local.inputs.items()}  # formats: ray, dataframe
    assert distributed.exposure is None or distributed.exposure == local.exposure
    codes = {n.code for n in local.notices}
    assert "outside_catalog" in codes
    assert {"seen_truth_dropped"} <= codes or not options.get("exclude_seen_truth")


def test_stochastic_runs_equal_the_local_engine(ray_session):
    """A run of sampled rankings: each user's mean over its samples, the users counted once
    and the spread summary, as the local engine gives them."""
    from tests.test_expected_exposure import _generated

    run, truth, _, _ = _generated(11)
    metrics = ["ndcg", "ee_l", "ee_r", "recall", "map"]
    local = rankeval.evaluate(run, truth, metrics=metrics, k=K)
    distributed = ray_evaluate(dataset(run), dataset(truth), metrics=metrics, k=K, partitions=3)
    assert distributed.users == local.users
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name
    assert local.samples is not None and distributed.samples is not None
    assert (distributed.samples.rankings, distributed.samples.fewest,
            distributed.samples.most) == (local.samples.rankings, local.samples.fewest,
                                          local.samples.most)
    for name, value in local.samples.spread.items():
        assert distributed.samples.spread[name] == pytest.approx(value, abs=1e-12), name
    theirs = distributed.per_user.to_pandas().sort_values("user_id").reset_index(drop=True)
    ours = local.per_user.sort_values("user_id").reset_index(drop=True)
    assert list(theirs.columns) == list(ours.columns) and "samples" in ours.columns
    np.testing.assert_allclose(theirs.iloc[:, 1:].to_numpy(dtype=float),
                               ours.iloc[:, 1:].to_numpy(dtype=float), atol=1e-12)
    here = distributed.collect().per_user_table()
    assert here.column_names == local.per_user_table().column_names
    assert here.column("samples").to_pylist() == local.per_user_table().column(
        "samples").to_pylist()


def test_a_sample_column_of_one_value_is_a_deterministic_run(ray_session):
    run, truth = generated(3, users=30, items=12)
    run["sample"] = "Q0"
    local = rankeval.evaluate(run, truth, metrics="ndcg,recall", k=5)
    distributed = ray_evaluate(dataset(run), dataset(truth), metrics="ndcg,recall", k=5,
                               partitions=4)
    assert local.samples is None and distributed.samples is None
    assert distributed.per_user.columns() == list(local.per_user.columns)
    assert distributed.metrics == pytest.approx(local.metrics, abs=1e-12)


def test_awrf_equals_the_local_engine(ray_session):
    """--item-groups travel with the item statistics to every task."""
    from tests.test_awrf import _data

    run, truth, groups = _data(6)
    metrics = ["awrf@3", "awrf(by='language', target='catalog')@10", "ndcg@10",
               "exposure_ratio(background='catalog')@5"]
    local = rankeval.evaluate(run, truth, metrics=metrics, item_groups=groups)
    distributed = ray_evaluate(dataset(run), dataset(truth), metrics=metrics,
                               item_groups=groups, partitions=3)
    assert distributed.users == local.users
    for name, value in local.metrics.items():
        assert distributed.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name


def test_stats_segments_and_intervals_equal_the_local_engine(ray_session, tmp_path):
    """What needs every user's values in one place collects them once, in the local
    engine's user order: the same distribution, segment means and intervals, bit for bit."""
    preds, truth = generated(8)
    metrics = ["ndcg", "map", "recall@all"]
    stats = "mean,median,p10,p90,p37,std,min,max,zeros"
    local = rankeval.evaluate(preds, truth, metrics=metrics, k=K)
    distributed = ray_evaluate(dataset(preds), dataset(truth), metrics=metrics, k=K,
                               partitions=3)
    assert distributed.with_stats(stats).distribution == local.with_stats(stats).distribution
    users = sorted(set(truth["user_id"]))[::2]
    table = pd.DataFrame({"user_id": users, "country": [("DE", "FR", "")[i % 3]
                                                         for i in range(len(users))]})
    mine, theirs = (e.by_segment(table, "country").segments["country"]
                    for e in (local, distributed))
    assert [(s.value, s.users, s.metrics) for s in theirs] == [
        (s.value, s.users, s.metrics) for s in mine]
    assert (distributed.with_intervals(rounds=300, seed=3).intervals
            == local.with_intervals(rounds=300, seed=3).intervals)


def test_per_user_values_stay_distributed(ray_session, tmp_path):
    preds, truth = generated(7)
    result = ray_evaluate(dataset(preds), dataset(truth), metrics=["ndcg"], k=10,
                          partitions=3)
    with pytest.raises(OptionError, match="stay on the cluster"):
        result.values("ndcg@10")
    with pytest.raises(OptionError, match="stay on the cluster"):
        result.per_user_table()
    assert type(result) is rankeval.Evaluation
    assert result.per_user is result.store.frame() and hasattr(result.per_user, "write_parquet")
    here = result.collect()
    assert here.store.here and not result.store.here
    local = rankeval.evaluate(preds, truth, metrics=["ndcg"], k=10)
    np.testing.assert_allclose(here.values("ndcg@10"), local.values("ndcg@10"), rtol=0,
                               atol=1e-12)
    assert here.user_id_array.to_pylist() == local.user_id_array.to_pylist()
    out = tmp_path / "per_user"
    result.write_per_user(str(out))
    result.write_per_user(str(out))  # an earlier dataset is replaced
    written = pq.read_table(out).to_pandas().sort_values("user_id").reset_index(drop=True)
    assert written["user_id"].tolist() == sorted(local.per_user["user_id"])
    assert "per-user values where they were computed" in repr(result)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("keep")
    with pytest.raises(OptionError, match="holds other files"):
        result.write_per_user(str(tmp_path / "other"))
    assert (tmp_path / "other" / "notes.txt").read_text() == "keep"


def test_subtopic_metrics_are_refused_in_one_line(ray_session):
    preds, truth = generated(9)
    with pytest.raises(OptionError, match="run on the local engine"):
        ray_evaluate(dataset(preds), dataset(truth), metrics=["alpha_ndcg"], k=10)


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


def test_cli_ray_equals_local_json(ray_session, run_cli, files, tmp_path):
    args = ["-m", "ndcg,map,recall,mrr", "--k", "5,10", "-f", "json"]
    local = run_cli("score", files / "preds.parquet", files / "truth.csv", *args)
    assert local.exit_code == 0, local.stderr
    for preds in (files / "preds", f"{files}/preds/part-*.parquet"):
        distributed = run_cli("score", "--engine", "ray", preds, files / "truth.csv", *args,
                              "--per-user", tmp_path / "users")
        assert distributed.exit_code == 0, distributed.stderr
        assert distributed.json()["metrics"] == local.json()["metrics"]
        assert distributed.json()["users"] == local.json()["users"]
        assert distributed.stderr == local.stderr.replace(str(files / "preds.parquet"),
                                                          str(preds))
    written = pq.read_table(tmp_path / "users").to_pandas()
    per_user = rankeval.evaluate(*generated(8), metrics=["ndcg", "map", "recall", "mrr"],
                                 k=[5, 10]).per_user
    theirs = written.sort_values("user_id").reset_index(drop=True)
    ours = per_user.sort_values("user_id").reset_index(drop=True)
    assert list(theirs.columns) == list(ours.columns)
    assert theirs.user_id.tolist() == ours.user_id.tolist()
    np.testing.assert_allclose(theirs.iloc[:, 1:].to_numpy(dtype=float),
                               ours.iloc[:, 1:].to_numpy(dtype=float), rtol=0, atol=1e-12)


def test_cli_ray_gates_and_validate(ray_session, run_cli, files):
    gate = run_cli("score", "--engine", "ray", files / "preds.parquet", files / "truth.csv",
                   "--fail-under", "ndcg@10=0.99", "-q")
    assert gate.exit_code == 1 and "ndcg@10" in gate.stderr
    checked = run_cli("validate", "--engine", "ray", files / "preds", files / "truth.csv",
                      "-f", "json")
    local = run_cli("validate", files / "preds.parquet", files / "truth.csv", "-f", "json")
    assert checked.exit_code == local.exit_code == 0, checked.stderr
    a = json.loads(checked.stdout.replace(str(files / "preds"), str(files / "preds.parquet")))
    b = json.loads(local.stdout)
    assert (a["users"], a["notices"], a["rows_beyond_k"]) == (b["users"], b["notices"],
                                                              b["rows_beyond_k"])


def test_cli_ray_with_train_and_catalog(ray_session, run_cli, files, tmp_path):
    preds, _ = generated(8)
    train, catalog, _ = _extras(8, preds)
    train.to_parquet(tmp_path / "train.parquet", index=False)
    catalog.to_csv(tmp_path / "catalog.csv", index=False)
    args = ["-m", "ndcg@10,coverage@10,novelty@10,long_tail@10,serendipity@10", "--train",
            tmp_path / "train.parquet", "--catalog", tmp_path / "catalog.csv",
            "--exclude-seen", "-f", "json"]
    ours = run_cli("score", "--engine", "ray", files / "preds.parquet", files / "truth.csv",
                   *args[:2], *args[4:])
    theirs = run_cli("score", files / "preds.parquet", files / "truth.csv", *args[:2],
                     *args[4:])
    assert ours.exit_code == 2 and theirs.exit_code == 2  # serendipity needs item features
    args = [a for a in args if a != "-m"][1:]
    metrics = ["-m", "ndcg@10,coverage@10,novelty@10,long_tail@10"]
    ours = run_cli("score", "--engine", "ray", files / "preds.parquet", files / "truth.csv",
                   *metrics, *args)
    theirs = run_cli("score", files / "preds.parquet", files / "truth.csv", *metrics, *args)
    assert ours.exit_code == theirs.exit_code == 0, ours.stderr
    assert ours.json()["metrics"] == pytest.approx(theirs.json()["metrics"], abs=1e-12)
    assert ours.json()["inputs"] == theirs.json()["inputs"]
    checked = run_cli("validate", "--engine", "ray", files / "preds.parquet",
                      files / "truth.csv", *metrics, *args[:-2])
    assert checked.exit_code == 0, checked.stderr
    train.assign(count=-1.0).to_parquet(tmp_path / "bad.parquet", index=False)
    refused = run_cli("score", "--engine", "ray", files / "preds.parquet", files / "truth.csv",
                      "-m", "arp@10", "--train", tmp_path / "bad.parquet", "--popularity",
                      "interactions")
    assert refused.exit_code == 2 and "counts below 0" in refused.stderr


def test_cli_ray_bad_input_is_one_line(ray_session, run_cli, files):
    bad = files / "bad.csv"
    bad.write_text("user_id,item_id,score\nu1,i1,1.0\nu1,i2,abc\n")
    out = run_cli("score", "--engine", "ray", bad, files / "truth.csv")
    assert out.exit_code == 2 and out.stderr.count("\n") == 1
    assert "non-numeric" in out.stderr and "score" in out.stderr
    assert out.stderr.startswith("rankeval: error:") and "Traceback" not in out.stderr
    (files / "ragged.csv").write_text("user_id,item_id,score\nu1,i1,1.0\nu1,i2,2.0,x\n")
    out = run_cli("score", "--engine", "ray", files / "ragged.csv", files / "truth.csv")
    assert out.exit_code == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.endswith("ragged.csv: cannot parse: CSV parse error: Expected 3 "
                               "columns, got 4: u1,i2,2.0,x\n")  # Arrow's words, as locally
    out = run_cli("score", "--engine", "ray", files / "nothing-*.parquet", files / "truth.csv")
    assert out.exit_code == 2 and "no file matches the pattern" in out.stderr


@pytest.mark.parametrize("preds_name, truth_name", [("p.csv.gz", "t.tsv"),
                                                    ("p.parquet", "t.csv")])
def test_text_formats_and_id_types_as_locally(ray_session, run_cli, tmp_path, preds_name,
                                              truth_name):
    """CSV (gzipped too) and TSV are read as text and parsed by rankeval, as Spark does;
    user ids given as integers in one input and as text in the other meet as text."""
    preds, truth = generated(14)
    numbered = {u: i for i, u in enumerate(sorted(set(preds.user_id) | set(truth.user_id)))}
    preds = preds.assign(user_id=preds.user_id.map(numbered).astype("int64"))
    truth = truth.assign(user_id=truth.user_id.map(numbered).astype("int64"))
    for df, name in ((preds, preds_name), (truth, truth_name)):
        if name.endswith(".parquet"):
            df.to_parquet(tmp_path / name, index=False)
        else:
            df.to_csv(tmp_path / name, index=False, sep="\t" if ".tsv" in name else ",")
    args = [tmp_path / preds_name, tmp_path / truth_name, "-m", "ndcg@10,map@10,mrr@10",
            "-f", "json"]
    ours, theirs = run_cli("score", "--engine", "ray", *args), run_cli("score", *args)
    assert ours.exit_code == theirs.exit_code == 0, ours.stderr
    assert ours.json()["metrics"] == theirs.json()["metrics"]
    assert ours.json()["users"] == theirs.json()["users"]
    assert ours.json()["inputs"] == theirs.json()["inputs"]


def test_an_empty_input_is_one_line_as_locally(ray_session, run_cli, files):
    (files / "empty.csv").write_text("user_id,item_id,score\n")
    for engine in ("ray", "local"):
        out = run_cli("score", "--engine", engine, files / "empty.csv", files / "truth.csv")
        assert out.exit_code == 2
        assert out.stderr == f"rankeval: error: {files / 'empty.csv'}: no data rows (only a " \
            "header)\n"


@pytest.mark.parametrize("args, message", [
    (["-", "--preds-format", "csv"], "standard input is not one"),
    (["--per-user", "-"], "stay on the cluster"),
    (["--preds-format", "jsonl"], "the Ray engine reads parquet, csv, tsv"),
])
def test_cli_ray_refuses_before_scoring(ray_session, run_cli, files, args, message):
    preds = [] if args[0] == "-" else [files / "preds.parquet"]
    out = run_cli("score", "--engine", "ray", *preds, *args[:1] if preds == [] else [],
                  files / "truth.csv", *(args[1:] if preds == [] else args))
    assert out.exit_code == 2 and message in out.stderr
    assert out.stderr.count("\n") == 1


def test_ray_options_need_the_ray_engine(run_cli, files):
    out = run_cli("score", files / "preds.parquet", files / "truth.csv", "--ray-address",
                  "auto")
    assert out.exit_code == 2 and "--ray-address needs --engine ray" in out.stderr
    with pytest.raises(OptionError, match=r"^partitions needs engine spark$"):
        rankeval.evaluate(*generated(1), engine_options={"partitions": 2})


def test_help_lists_every_setting_as_the_local_api():
    import inspect

    local = inspect.signature(rankeval.evaluate).parameters
    ours = inspect.signature(ray_evaluate).parameters
    assert ours["options"].annotation == local["options"].annotation == \
        "Unpack[Options]"
    assert "rankeval.evaluate" in ray_evaluate.__doc__


def test_an_address_where_nothing_answers_is_one_line_at_once():
    """Ray itself would retry for minutes, its C++ client warning on stderr."""
    from .conftest import SAMPLE

    out = subprocess.run([sys.executable, "-m", "rankeval", "score", "--engine", "ray",
                          "--ray-address", "127.0.0.1:9", SAMPLE / "preds.parquet",
                          SAMPLE / "truth.parquet"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and not out.stdout
    assert out.stderr.startswith("rankeval: error: Ray did not start: nothing answers at "
                                 "127.0.0.1:9 (") and out.stderr.count("\n") == 1


def test_no_ray_is_one_clear_line(tmp_path):
    """Without ray installed: one line naming the extra to install, exit 2."""
    from .conftest import SAMPLE

    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('no ray here')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "rankeval", "score", "--engine", "ray",
                          SAMPLE / "preds.parquet", SAMPLE / "truth.parquet"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and not out.stdout
    assert out.stderr == ("rankeval: error: the Ray engine needs ray: pip install -e "
                          "'.[ray]' in rankeval's checkout (the extra rankeval[ray])\n")



@pytest.mark.parametrize("extra", [[], ["--gold-strata", "topic"], ["--ppi-lambda", "1"]],
                         ids=["ppi++", "strata", "classic"])
def test_gold_equals_the_local_engine(ray_session, run_cli, tmp_path, extra):
    """score --gold (#48): the partitions' moments added up give the local engine's
    estimates, plan and counts."""
    from .test_gold import judged_csv, same_gold

    run, machine, human = judged_csv(tmp_path)
    args = [run, machine, "-m", "ndcg@10,p@5,map", "--gold", human, "--gold-plan", "0.04",
            *extra, "-f", "json"]
    local = run_cli("score", *args)
    assert local.exit_code == 0, local.stderr
    ours = run_cli("score", "--engine", "ray", *args)
    assert ours.exit_code == 0, ours.stderr
    same_gold(local.json(), ours.json())
    assert ours.json()["metrics"] == local.json()["metrics"]
    strata = local.json()["gold"]["estimates"]["ndcg@10"].get("strata", [])
    assert len(strata) == (2 if "--gold-strata" in extra else 0)


def test_gold_margins_on_ray_say_they_pair_the_machine_values(ray_session, run_cli, tmp_path):
    """score --gold --non-inferior on Ray: its per-user values hold the machine column alone,
    so the margin pairs those, and the verdict says why (never a crash on a missing column)."""
    from .test_gold import judged_csv

    run, machine, human = judged_csv(tmp_path)
    base = tmp_path / "base.csv"
    assert run_cli("score", run, machine, "-m", "ndcg@10", "--gold", human, "--per-user",
                   base).exit_code == 0
    r = run_cli("score", "--engine", "ray", run, machine, "-m", "ndcg@10", "--gold", human,
                "--baseline-per-user", base, "--non-inferior", "ndcg@10=0.02", "-f", "json")
    assert r.exit_code == 0, r.stderr
    (verdict,) = r.json()["gates"]
    assert "keeps no per-query gold:ndcg@10" in verdict["judged_by"] and verdict["passed"]
