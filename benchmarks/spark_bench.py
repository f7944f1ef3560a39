"""The Spark engine at scale: rankeval on Spark against pyspark.ml's RankingEvaluator (same
data, same SparkSession) and against the local engine.

    python benchmarks/spark_bench.py --shapes M,W          # 10M rows each, a few minutes
    python benchmarks/spark_bench.py --shapes B            # 200,000,000 rows, about an hour

Shapes: M and W as in bench.py (Parquet); B: 2,000,000 numeric users x 100 items drawn from
5,000,000 ids (200,000,000 prediction rows in 100 Parquet files, 20,000,000 truth rows),
generated deterministically into --data. Spark runs ``local[2]`` with the driver's memory
bounded (--driver-memory). Reported: wall time, peak RSS of the driver JVM, of the Python
driver and of the Python workers (sampled from /proc every 0.2 s), and the metrics of both
tools, which must agree (precision@10, recall@10, MAP@10 over min(R, 10), binary NDCG@10).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
METRICS = {"precision@10": "precisionAtK", "recall@10": "recallAtK",
           "map@10": "meanAveragePrecisionAtK", "ndcg@10": "ndcgAtK"}
BIG_USERS, BIG_LIST, BIG_JUDGED, BIG_ITEMS = 2_000_000, 100, 10, 5_000_000
BLOCK = 20_000  # users per file of the big dataset: 2,000,000 rows


def big(folder: Path, seed: int = 17) -> tuple[Path, Path]:
    """The 200M-row dataset (numeric ids, ranks; binary truth: RankingEvaluator reads
    labels as a set), one file per block of users; kept between runs."""
    preds, truth = folder / "preds", folder / "truth"
    if (folder / "_done").exists():
        return preds, truth
    preds.mkdir(parents=True, exist_ok=True)
    truth.mkdir(parents=True, exist_ok=True)
    pool = 5_000_011  # a prime: start + stride * step is distinct within a user
    for b in range(BIG_USERS // BLOCK):
        rng = np.random.default_rng([seed, b])
        users = np.arange(b * BLOCK, (b + 1) * BLOCK, dtype=np.int64)
        start = rng.integers(0, pool, BLOCK)[:, None]
        stride = rng.integers(1, pool, BLOCK)[:, None]
        steps = np.arange(BIG_LIST + BIG_JUDGED // 2)[None, :]
        cand = (start + stride * steps) % pool
        pq.write_table(pa.table({
            "user_id": np.repeat(users, BIG_LIST),
            "item_id": cand[:, :BIG_LIST].ravel(),
            "rank": np.tile(np.arange(1, BIG_LIST + 1, dtype=np.int32), BLOCK),
        }), preds / f"part-{b:05d}.parquet", row_group_size=1_000_000)
        inside = (rng.integers(0, BIG_LIST, BLOCK)[:, None]
                  + np.arange(BIG_JUDGED - BIG_JUDGED // 2)[None, :] * 7) % BIG_LIST
        judged = np.concatenate([np.take_along_axis(cand, inside, axis=1),
                                 cand[:, BIG_LIST:]], axis=1)
        pq.write_table(pa.table({
            "user_id": np.repeat(users, judged.shape[1]),
            "item_id": judged.ravel(),
            "relevance": np.ones(judged.size, np.int8),
        }), truth / f"part-{b:05d}.parquet")
    (folder / "_done").touch()
    return preds, truth


def medium(shape: str, folder: Path) -> tuple[Path, Path]:
    """bench.py's M or W as Parquet files, with binary relevance."""
    from bench import SHAPES
    from generate import generate

    preds, truth = folder / "preds.parquet", folder / "truth.parquet"
    if not preds.exists():
        folder.mkdir(parents=True, exist_ok=True)
        users, list_len, judged, items = SHAPES[shape][:4]
        p, t = generate(users, list_len, judged, items)
        numeric = [pc.cast(pc.utf8_slice_codeunits(x.column("item_id"), 1), pa.int64())
                   for x in (p, t)]  # RankingEvaluator takes item ids as numbers
        pq.write_table(p.drop_columns(["score"]).set_column(1, "item_id", numeric[0]), preds)
        pq.write_table(t.set_column(1, "item_id", numeric[1]).set_column(
            2, "relevance", pa.array(np.ones(t.num_rows, np.int8))), truth)
    return preds, truth


class Peaks:
    """Peak RSS (MiB) of a process tree by kind, sampled from /proc."""

    def __init__(self, root: int):
        self.root, self.peak, self._stop = root, {}, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            use: dict[str, float] = {}
            for pid, name in _tree(self.root):
                use[name] = use.get(name, 0) + _rss(pid)
            use["total"] = sum(use.values())
            for name, mib in use.items():
                self.peak[name] = max(self.peak.get(name, 0), mib)
            time.sleep(0.2)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return self.peak


def _tree(root: int) -> list[tuple[int, str]]:
    children: dict[int, list[int]] = {}
    names = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
        names[int(entry)] = ("jvm" if b"java" in cmd.split(b"\0")[0] else
                             "python workers" if b"pyspark.daemon" in cmd or b"pyspark.worker"
                             in cmd else "python driver")
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append((pid, names.get(pid, "python driver")))
        todo += children.get(pid, [])
    return out


def _rss(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(cmd: list[str], timeout: float) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peaks = Peaks(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    wall = time.perf_counter() - start
    result = {"wall": wall, "peak_mib": peaks.stop(), "exit": proc.returncode}
    if proc.returncode:
        result["error"] = err[-800:]
    else:
        result.update(json.loads(out.strip().splitlines()[-1]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="M,W")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--data", type=Path, default=Path("/tmp/rankeval-bench/spark"))
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--timeout", type=float, default=4 * 3600)
    args = parser.parse_args()
    results = {}
    for shape in args.shapes.split(","):
        folder = args.data / shape
        t0 = time.perf_counter()
        preds, truth = big(folder) if shape == "B" else medium(shape, folder)
        print(f"{shape}: data ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        base = [sys.executable, str(HERE / "peers" / "spark_peers.py"), str(preds), str(truth),
                "--driver-memory", args.driver_memory]
        runs: dict[str, list] = {}
        for r in range(args.rounds):
            # "both": rankeval and RankingEvaluator timed in one SparkSession (alternating
            # which goes first); "rankeval" alone for its memory; "local": the local engine.
            tools = ["both", "rankeval"]
            if shape != "B":  # 200M rows do not fit one process: the local engine sits out
                tools.append("local")
            for tool in tools[r % len(tools):] + tools[:r % len(tools)]:  # interleaved
                runs.setdefault(tool, []).append(measure(
                    [*base, "--tool", tool, "--first", "rankeval" if r % 2 == 0 else
                     "RankingEvaluator"], args.timeout))
                print(f"{shape} {tool}: {json.dumps(runs[tool][-1])}", file=sys.stderr)
        results[shape] = runs
    (HERE / "spark_results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(markdown(results))


def markdown(results: dict) -> str:
    """Medians per shape: in-session seconds of both Spark tools, the local engine, peaks."""
    def med(runs, key):
        values = [r["seconds"][key] for r in runs if not r["exit"]]
        return float(np.median(values)) if values else float("nan")

    def peak(runs, kind):
        return max((r["peak_mib"].get(kind, 0) for r in runs), default=0)

    lines = ["| shape | rankeval on Spark (s) | RankingEvaluator (s) | RankingEvaluator / "
             "rankeval | local engine (s) | rankeval alone: wall (s), peak MiB JVM / Python "
             "workers / Python driver | metrics agree (1e-9) |",
             "|---|---:|---:|---:|---:|---|---|"]
    for shape, runs in results.items():
        ours, theirs = med(runs["both"], "rankeval"), med(runs["both"], "RankingEvaluator")
        local = f"{med(runs['local'], 'local'):.1f}" if "local" in runs else "-"
        alone = runs["rankeval"]
        wall = float(np.median([r["wall"] for r in alone]))
        agree = all(abs(r["metrics"]["rankeval"][m] - r["metrics"]["RankingEvaluator"][m])
                    < 1e-9 for r in runs["both"] if not r["exit"] for m in METRICS)
        lines.append(f"| {shape} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2f}x | "
                     f"{local} | {wall:.0f}, {peak(alone, 'jvm'):,.0f} / "
                     f"{peak(alone, 'python workers'):,.0f} / "
                     f"{peak(alone, 'python driver'):,.0f} | {'yes' if agree else 'NO'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
