"""One timed run for spark_bench.py; prints a JSON line: seconds per tool and their metrics.

    spark_peers.py PREDS TRUTH --tool rankeval|RankingEvaluator|both|local
"""

from __future__ import annotations

import argparse
import json
import time

METRICS = {"precision@10": "precisionAtK", "recall@10": "recallAtK",
           "map@10": "meanAveragePrecisionAtK", "ndcg@10": "ndcgAtK"}


def with_rankeval(preds: str, truth: str, spark) -> dict[str, float]:
    from rankeval.spark import evaluate

    result = evaluate(preds, truth, metrics=list(METRICS), spark=spark)
    result.store.unpersist()  # the per-user values stay cached on the cluster otherwise
    return result.metrics


def with_ranking_evaluator(preds: str, truth: str, spark) -> dict[str, float]:
    """The arrays RankingEvaluator takes (items as doubles, best first; relevant items per
    truth user), built once and cached, then one pass per metric."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    p, t = spark.read.parquet(preds), spark.read.parquet(truth)
    lists = p.groupBy("user_id").agg(
        F.sort_array(F.collect_list(F.struct("rank", "item_id"))).alias("l")).select(
        "user_id", F.expr("transform(l, x -> cast(x.item_id as double))").alias("prediction"))
    labels = t.filter("relevance > 0").groupBy("user_id").agg(
        F.collect_list(F.col("item_id").cast("double")).alias("label"))
    data = labels.join(lists, "user_id", "left").select(
        F.coalesce("prediction", F.expr("cast(array() as array<double>)")).alias("prediction"),
        "label").persist()
    out = {m: RankingEvaluator(metricName=name, k=10).evaluate(data)
           for m, name in METRICS.items()}
    data.unpersist()
    return out


def warm_up(spark, tools) -> None:
    """Both tools once on a tiny table, so that neither pays the JVM's warm-up alone."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        pq.write_table(pa.table({"user_id": [1, 1, 2], "item_id": [5, 6, 5], "rank": [1, 2, 1]}),
                       f"{tmp}/p.parquet")
        pq.write_table(pa.table({"user_id": [1, 2], "item_id": [6, 5], "relevance": [1, 1]}),
                       f"{tmp}/t.parquet")
        for tool in tools.values():
            tool(f"{tmp}/p.parquet", f"{tmp}/t.parquet", spark)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("preds")
    parser.add_argument("truth")
    parser.add_argument("--tool", required=True)
    parser.add_argument("--first", default="rankeval")
    parser.add_argument("--driver-memory", default="4g")
    args = parser.parse_args()
    if args.tool == "local":
        from rankeval import evaluate

        start = time.perf_counter()
        metrics = evaluate(args.preds, args.truth, metrics=list(METRICS)).metrics
        print(json.dumps({"seconds": {"local": time.perf_counter() - start},
                          "metrics": {"local": metrics}}))
        return
    from rankeval.spark import session

    spark = session("local[2]", [("spark.driver.memory", args.driver_memory)])
    tools = {"rankeval": with_rankeval, "RankingEvaluator": with_ranking_evaluator}
    order = [args.tool] if args.tool in tools else (
        [args.first, *[t for t in tools if t != args.first]])
    warm_up(spark, {t: tools[t] for t in order})
    seconds, metrics = {}, {}
    for tool in order:
        start = time.perf_counter()
        metrics[tool] = tools[tool](args.preds, args.truth, spark)
        seconds[tool] = time.perf_counter() - start
    spark.stop()
    print(json.dumps({"seconds": seconds, "metrics": metrics}))


if __name__ == "__main__":
    main()
