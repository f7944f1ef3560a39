"""rankeval against its peers, whole processes from files to final means.

    python benchmarks/bench.py --shapes S,M,W,N,Z,U --rounds 3

Shapes (users x predictions per user, judged per user, graded 0..3): S = 10,000 x 100, 20
judged; M = 100,000 x 100, 20 judged; W = 1,000,000 x 10, 5 judged, items from a pool of
100,000 string ids; and real catalogs, numeric ids with list lengths that vary around their
mean: N = 10,000 x ~100 with Zipf popularity over 1,000,000 items; Z = 1,000,000 x ~10, Zipf
over 5,000,000 items; U = 100,000 x ~100 drawn uniformly from 5,000,000 ids; the ids people
have, each 450,000 users x ~33 (about 10M distinct pairs) with Zipf popularity over 2,000,000
items: SP numbers spread over a space 20x wider than their count, H random 64-bit integers
(negatives included), UU 36-character UUIDs, A 10-character ASIN-like strings; and L, 2,250,000
x ~33 (50M rows) of dense numbers, the long mode (BENCH=L); and the held-out shapes of
issue #49: I1 = 388,000 x ~40 (geometric lengths, at most 200), Zipf over 3,000,000 numeric
ids; I2, I3, I4 = 193,000 x ~33 (4.2M distinct pairs), Zipf over 1,000,000 items, of random
64-bit ids, 20x sparse numbers, UUIDs; and UH, 193,000 x ~33 random 64-bit ids drawn uniformly
from 5,000,000 items (millions of distinct ids, found after the held-out table). Data is generated
once per shape (fixed seed) under --data. Every tool runs as its own process, interleaved
round by round so that machine noise hits all alike; the table gives the median wall time, the
peak RSS and each tool's time as a multiple of rankeval's (CSV). Every tool's means must agree
with rankeval's to 1e-9, or the run fails.

Two floors: `floor` reads both files with ids as strings and sorts the run once; the typed
floor lets ids keep the type they read as (numbers stay int64), the least any evaluator must
do. `--random N` adds N shapes drawn at run time from realistic ranges (users, catalog size,
Zipf exponent or uniform popularity, list-length distribution, judged per user, id kind, and
how the Parquet twins store text: string as pyarrow writes it, large_string as pandas 3 does), from
a seed printed first (`--seed` draws them again), and ends with each ratio's range over the
drawn shapes: a table that no single tuned shape can make look good. `--trec-eval PATH` adds
trec_eval (built from github.com/usnistgov/trec_eval) on the same data as TREC files, against
`rankeval score --compat trec_eval -f trec` on them; their outputs must be the same text.
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import platform
import random
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SHAPES = {  # users, predictions per user, judged per user, catalog, popularity, id kind
    "S": (10_000, 100, 20, 100_000, "pool", ""),
    "M": (100_000, 100, 20, 100_000, "pool", ""),
    "W": (1_000_000, 10, 5, 100_000, "pool", ""),
    # Real catalogs: numeric ids, variable list lengths (mean as given), millions of items.
    "N": (10_000, 100, 20, 1_000_000, "zipf", "dense"),  # 1M rows from 1M numeric ids
    "Z": (1_000_000, 10, 5, 5_000_000, "zipf", "dense"),  # Zipf popularity over 5M items
    "U": (100_000, 100, 20, 5_000_000, "uniform", "dense"),  # uniform over 5M ids
    # The ids people have, 10M rows each, Zipf over 2M items, lists of 1 to 65 items.
    "SP": (450_000, 33, 10, 2_000_000, "zipf", "sparse"),  # numbers over a 20x wider space
    "H": (450_000, 33, 10, 2_000_000, "zipf", "hashed"),  # random int64, negatives included
    "UU": (450_000, 33, 10, 2_000_000, "zipf", "uuid"),  # 36-character UUID strings
    "A": (450_000, 33, 10, 2_000_000, "zipf", "asin"),  # 10-character ASIN-like strings
    "L": (2_250_000, 33, 10, 5_000_000, "zipf", "dense"),  # 50M rows: the long mode
    # Issue #49's held-out table: shapes rankeval was not tuned on (Zipf 1.1, as above).
    "I1": (388_000, 40, 10, 3_000_000, "zipf", "dense", 1.1, "geometric"),  # 10M rows, 3M items
    "I2": (193_000, 33, 10, 1_000_000, "zipf", "hashed"),  # 4.2M rows of random 64-bit ids
    "I3": (193_000, 33, 10, 1_000_000, "zipf", "sparse"),  # 4.2M rows, numbers 20x sparse
    "I4": (193_000, 33, 10, 1_000_000, "zipf", "uuid"),  # 4.2M rows of UUID strings
    # Found after: 64-bit hashes drawn uniformly from 5M items, millions of distinct ids
    "UH": (193_000, 33, 10, 5_000_000, "uniform", "hashed"),  # 6.4M rows
    # trec_eval's own ground: 5,000 queries x about 1,000 documents of 5M (ASIN-like docnos)
    "T": (5_000, 1_000, 200, 5_000_000, "uniform", "asin"),  # 5M run lines, 953k qrels
}
# How a Parquet file stores text: pyarrow's and Spark's writers as string, pandas 3's
# to_parquet as large_string (64-bit offsets)
PARQUET_TEXT = ["string", "large_string"]
METRICS = "ndcg@10,map@10,mrr@10,precision@10,recall@10,hit_rate@10"


def tools(csv: tuple[Path, Path], parquet: tuple[Path, Path], out: Path) -> dict[str, list[str]]:
    py = sys.executable
    # This checkout through PYTHONPATH, as --against runs the other one: through the editable
    # install the same code took 2.71 s against 2.63 on W in alternation (cause not found),
    # which an A/B would read as a regression.
    score = [f"PYTHONPATH={HERE.parent}", py, "-m", "rankeval", "score", "-m", METRICS,
             "--compat", "trec_eval", "-f", "json", "--quiet", "-o"]
    peer = HERE / "peers"
    return {
        "rankeval (CSV)": [*score, str(out / "rankeval_csv.json"), *map(str, csv)],
        "rankeval (Parquet)": [*score, str(out / "rankeval_parquet.json"), *map(str, parquet)],
        "pytrec_eval": [py, str(peer / "pytrec.py"), *map(str, csv), str(out / "pytrec.json")],
        "ranx": [py, str(peer / "ranx_eval.py"), *map(str, csv), str(out / "ranx.json")],
        "pandas loop": [py, str(peer / "pandas_loop.py"), *map(str, csv), str(out / "pandas.json")],
        "floor: pyarrow read + sort (CSV)": [py, str(peer / "floor.py"), *map(str, csv),
                                             str(out / "floor.json")],
        "typed floor (CSV)": [py, str(peer / "typed_floor.py"), *map(str, csv),
                              str(out / "typed_floor.json")],
        "typed floor (Parquet)": [py, str(peer / "typed_floor.py"), *map(str, parquet),
                                  str(out / "typed_floor_parquet.json")],
    }


def trec_tools(trec_eval: Path, folder: Path, out: Path) -> dict[str, list[str]]:
    """trec_eval and rankeval on the shape's TREC files, trec_eval's default measures."""
    run, qrels = folder / "preds.run", folder / "truth.qrels"
    return {
        "rankeval (TREC, --compat trec_eval)": [
            f"PYTHONPATH={HERE.parent}", sys.executable, "-m", "rankeval", "score", str(run),
            str(qrels), "--compat", "trec_eval", "-f", "trec", "--quiet", "-o",
            str(out / "rankeval.trec.txt")],
        "trec_eval (TREC)": ["sh", "-c", 'exec "$0" "$1" "$2" > "$3"', str(trec_eval),
                             str(qrels), str(run), str(out / "trec_eval.txt")],
    }


def drawn(seed: int, count: int, max_rows: int) -> dict[str, tuple]:
    """``count`` shapes drawn from realistic ranges: the same seed, the same shapes."""
    rng = random.Random(seed)
    # The Parquet writer's text type from a draw of its own, so that a seed printed before
    # it was drawn gives the same shapes still
    writers = random.Random(seed ^ 0x5EED)
    out = {}
    for i in range(count):
        per_user = round(math.exp(rng.uniform(math.log(5), math.log(100))))
        users = round(math.exp(rng.uniform(math.log(20_000), math.log(500_000))))
        users = min(users, max_rows // per_user)
        catalog = round(math.exp(rng.uniform(math.log(100_000), math.log(5_000_000))))
        popularity = "zipf" if rng.random() < 0.8 else "uniform"
        zipf = round(rng.uniform(0.9, 1.4), 2)
        out[f"R{i + 1}"] = (users, per_user, rng.randint(5, 30), catalog, popularity,
                            rng.choice(["dense", "sparse", "hashed", "uuid", "asin"]), zipf,
                            rng.choice(["uniform", "geometric"]),
                            writers.choice(PARQUET_TEXT))
    return out


def _whole(shape: tuple) -> tuple:
    """A fixed shape with the parameters it leaves out: Zipf 1.1, uniform lengths, Parquet
    text as string."""
    return (*shape, *(1.1, "uniform", "string")[len(shape) - 6:])


def _order(names: list[str], r: int) -> list[str]:
    """The tools' order in round ``r``: rotated one further each round, and reversed every
    other round, so that each tool runs after each other about equally often. In a fixed
    order (or rotated only) a tool is timed after the same neighbour every time, and an A/B
    of one checkout against itself differed by 4-10% on W."""
    shift = (r // 2) % len(names)
    names = names[shift:] + names[:shift]
    return names[::-1] if r % 2 else names


def run(cmd: list[str], timeout: float) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB, and an error text ('' when it succeeded).

    A command may start with ``PYTHONPATH=DIR`` (another checkout of rankeval)."""
    env = None
    if cmd[0].startswith("PYTHONPATH="):
        env = {**os.environ, "PYTHONPATH": cmd[0].split("=", 1)[1]}
        cmd = cmd[1:]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            return timeout, 0.0, f"timed out after {timeout:.0f} s"
        time.sleep(0.01)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, "" if code == 0 else f"exit {code}: {err[-300:]}"


def agree(out: Path, names: dict[str, str]) -> dict[str, str]:
    """Each tool's largest difference from rankeval's means ('-' for tools without means)."""
    ours = json.loads((out / "rankeval_csv.json").read_text())["metrics"]
    verdicts = {}
    for tool, file in names.items():
        path = out / file
        if not path.exists():
            verdicts[tool] = "no output"
            continue
        doc = json.loads(path.read_text())
        means = doc.get("metrics", doc)
        if "rows" in means:
            verdicts[tool] = "-"
            continue
        worst = max(abs(means[m] - ours[m]) for m in ours)
        verdicts[tool] = f"{worst:.1e}"
        if worst > 1e-9:
            raise SystemExit(f"{tool} disagrees with rankeval by {worst:g}: {means} vs {ours}")
    return verdicts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", default="S")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) /
                    "rankeval-bench")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per process")
    ap.add_argument("--skip", default="", help="comma list of tools to leave out")
    ap.add_argument("--json", type=Path, default=HERE / "results.json")
    ap.add_argument("--against", type=Path, metavar="CHECKOUT",
                    help="also time rankeval from another checkout (e.g. a git worktree of "
                    "main), interleaved: an A/B of a change")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="also N shapes drawn at run time from realistic ranges")
    ap.add_argument("--seed", type=int, help="the draw's seed (default: a new one, printed)")
    ap.add_argument("--max-rows", type=int, default=10_000_000,
                    help="prediction rows at most in a drawn shape")
    ap.add_argument("--trec-eval", type=Path, metavar="PATH",
                    help="a trec_eval binary: also time it against rankeval on TREC files")
    a = ap.parse_args()
    # `python -m rankeval` looks in the working directory first: run from elsewhere, so that
    # --against really times the other checkout.
    a.data, a.json = a.data.resolve(), a.json.resolve()
    a.against = a.against.resolve() if a.against else None
    os.chdir(a.data.parent if a.data.parent.exists() else Path("/"))
    # Bytecode compiled first, as pip compiles an installed package (and the peers): otherwise
    # an edited checkout, or PYTHONDONTWRITEBYTECODE, recompiles every module in every timed
    # run (0.1 s, a third of a 1M-row run).
    for checkout in (HERE.parent, a.against):
        if checkout is not None:
            compileall.compile_dir(checkout / "rankeval", quiet=1)
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    shapes = {name: _whole(SHAPES[name]) for name in a.shapes.split(",") if name}
    seed = a.seed if a.seed is not None else secrets.randbits(32)
    if a.random:
        print(f"drawn shapes: --random {a.random} --seed {seed}", file=sys.stderr)
        shapes.update(drawn(seed, a.random, a.max_rows))
    results: dict = {"machine": _machine(), "rounds": a.rounds, "seed": seed, "shapes": {}}
    for shape, (users, per_user, judged, catalog, popularity, ids, zipf, lengths, text) in \
            shapes.items():
        folder = a.data / (shape if shape in SHAPES else "-".join(map(str, (
            users, per_user, judged, catalog, popularity, ids, zipf, lengths,
            *([text] if text != "string" else [])))))
        if not (folder / "truth.parquet").exists() or (
                a.trec_eval and not (folder / "truth.qrels").exists()):
            # In a child process: this process must stay small, since every tool it starts
            # inherits its memory size into the peak RSS measured by wait4.
            subprocess.run(
                [sys.executable, str(HERE / "generate.py"), "--users", str(users), "--list",
                 str(per_user), "--judged", str(judged), "--items", str(catalog),
                 "--popularity", popularity, *(["--ids", ids] if ids else []), "--seed", "2026",
                 "--zipf", str(zipf), "--lengths", lengths, *(["--trec"] if a.trec_eval else []),
                 "--parquet", "--parquet-text", text, "--out", str(folder)],
                check=True,
            )
        csv = (folder / "preds.csv", folder / "truth.csv")
        parquet = (folder / "preds.parquet", folder / "truth.parquet")
        out = folder / "out"
        out.mkdir(exist_ok=True)
        commands = {k: v for k, v in tools(csv, parquet, out).items() if k not in skip}
        if a.trec_eval:
            commands.update(trec_tools(a.trec_eval.resolve(), folder, out))
        if a.against:
            commands[f"rankeval {a.against.name} (CSV)"] = [
                f"PYTHONPATH={a.against}", *commands["rankeval (CSV)"][1:-3],
                str(out / "against.json"), *map(str, csv)]
        times: dict[str, list[float]] = {k: [] for k in commands}
        rss: dict[str, float] = dict.fromkeys(commands, 0.0)
        errors: dict[str, str] = {}
        for r in range(a.rounds):
            for name in _order(list(commands), r):
                cmd = commands[name]
                if name in errors:
                    continue
                wall, mib, err = run(cmd, a.timeout)
                print(f"  {shape} round {r + 1}: {name}: {wall:.2f} s, {mib:.0f} MiB {err}",
                      file=sys.stderr)
                if err:
                    errors[name] = err
                    continue
                times[name].append(wall)
                rss[name] = max(rss[name], mib)
        files = {"rankeval (Parquet)": "rankeval_parquet.json", "pytrec_eval": "pytrec.json",
                 f"rankeval {a.against.name if a.against else ''} (CSV)": "against.json",
                 "ranx": "ranx.json", "pandas loop": "pandas.json",
                 "floor: pyarrow read + sort (CSV)": "floor.json",
                 "typed floor (CSV)": "typed_floor.json",
                 "typed floor (Parquet)": "typed_floor_parquet.json"}
        verdicts = agree(out, {k: v for k, v in files.items() if k in commands and k not in errors})
        if a.trec_eval and not errors:
            verdicts["rankeval (TREC, --compat trec_eval)"] = same_text(out)
            verdicts["trec_eval (TREC)"] = "-"
        base = statistics.median(times["rankeval (CSV)"])
        rows = []
        for name in commands:
            if name in errors:
                rows.append({"tool": name, "error": errors[name]})
                continue
            t = statistics.median(times[name])
            rows.append({"tool": name, "seconds": t, "peak_mib": rss[name],
                         "vs_rankeval_csv": t / base, "max_diff": verdicts.get(name, "0"),
                         "rounds": times[name]})
        results["shapes"][shape] = {"users": users, "per_user": per_user, "judged": judged,
                                    "catalog": catalog, "popularity": popularity, "ids": ids,
                                    "zipf": zipf, "lengths": lengths, "parquet_text": text,
                                    "prediction_rows": _rows(folder), "tools": rows}
        print(_markdown(shape, results["shapes"][shape], a.rounds))
    if len(results["shapes"]) > 1:
        print(_ranges(results["shapes"]))
    a.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {a.json}", file=sys.stderr)


def _rows(folder: Path) -> int:
    """Prediction rows as generated (catalog shapes drop repeated pairs), read in a child
    process: this one stays small, since the tools it starts inherit its size."""
    code = ("import pyarrow.parquet as pq, sys; "
            "print(pq.ParquetFile(sys.argv[1]).metadata.num_rows)")
    out = subprocess.run([sys.executable, "-c", code, str(folder / "preds.parquet")],
                         capture_output=True, text=True, check=True)
    return int(out.stdout)


def _markdown(shape: str, r: dict, rounds: int) -> str:
    lines = [
        f"\n**{shape}**: {r['users']:,} users x {r['per_user']} predictions "
        + ("" if r["popularity"] == "pool" else "(mean) ")
        + f"({r['prediction_rows']:,} rows), {r['judged']} judged per user; "
        + ("" if r["popularity"] == "pool" else
           f"{r['ids']} ids, {r.get('lengths', 'uniform')} list lengths, {r['popularity']}"
           + (f" ({r.get('zipf', 1.1)})" if r["popularity"] == "zipf" else "")
           + f" over {r['catalog']:,} items; ")
        + ("Parquet text as large_string (pandas 3's writer); "
           if r.get("parquet_text") == "large_string" else "")
        + f"median of {rounds}",
        "",
        "| tool | seconds | rounds (min-max) | peak MiB | time / rankeval (CSV) | max diff of "
        "means |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in r["tools"]:
        if "error" in row:
            lines.append(f"| {row['tool']} | {row['error']} | | | | |")
        else:
            lines.append(f"| {row['tool']} | {row['seconds']:.2f} | {min(row['rounds']):.2f}-"
                         f"{max(row['rounds']):.2f} | {row['peak_mib']:.0f} | "
                         f"{row['vs_rankeval_csv']:.2f}x | {row['max_diff']} |")
    return "\n".join(lines)


def same_text(out: Path) -> str:
    """rankeval's -f trec output against trec_eval's: the same text, or the run fails."""
    ours = (out / "rankeval.trec.txt").read_text()
    theirs = (out / "trec_eval.txt").read_text()
    if ours != theirs:
        raise SystemExit(f"rankeval's -f trec differs from trec_eval's output: see {out}")
    return "same text"


# The ratios over the shapes, each tool's time against its reference
RATIOS = [("rankeval (CSV)", "typed floor (CSV)"), ("rankeval (Parquet)", "typed floor (Parquet)"),
          ("rankeval (Parquet)", "rankeval (CSV)"), ("pytrec_eval", "rankeval (CSV)"),
          ("ranx", "rankeval (CSV)"),
          ("rankeval (TREC, --compat trec_eval)", "trec_eval (TREC)")]


def _ranges(shapes: dict) -> str:
    """Each ratio's median, minimum and maximum over the shapes (and the peak memory's)."""
    lines = [f"\n**Over {len(shapes)} shapes** ({', '.join(shapes)}): each ratio's median "
             "(min-max)", "", "| time of | over time of | median | min-max | peak memory ratio "
             "(min-max) |", "|---|---|---:|---:|---:|"]
    for a, b in RATIOS:
        times, peaks = [], []
        for r in shapes.values():
            rows = {t["tool"]: t for t in r["tools"] if "seconds" in t}
            if a in rows and b in rows:
                times.append(rows[a]["seconds"] / rows[b]["seconds"])
                peaks.append(rows[a]["peak_mib"] / rows[b]["peak_mib"])
        if times:
            lines.append(f"| {a} | {b} | {statistics.median(times):.2f}x | {min(times):.2f}-"
                         f"{max(times):.2f}x | {min(peaks):.2f}-{max(peaks):.2f}x |")
    return "\n".join(lines)


def _machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(),
            "platform": platform.platform(), "processor": platform.processor()}


if __name__ == "__main__":
    main()
