#!/bin/bash
# The engines side by side (README "Where to run it"): whole `rankeval score` commands on the
# same Parquet inputs, local, Spark local[2] and a local Ray, interleaved rounds.
#   benchmarks/engines.sh PREDS.parquet TRUTH.parquet [ROUNDS]
# (the 10M-row inputs: benchmarks/spark_bench.py's M shape, /tmp/rankeval-bench/spark/M)
set -u
preds=$1 truth=$2 rounds=${3:-3}
for r in $(seq "$rounds"); do
  for engine in local spark ray; do
    start=$(date +%s.%N)
    rankeval score --engine "$engine" "$preds" "$truth" \
      -m precision@10,recall@10,map@10,ndcg@10 -f json -q -o "/tmp/engines-$engine.json"
    echo "round $r $engine $(echo "$(date +%s.%N) - $start" | bc) s (exit $?)"
  done
done
