"""The installed command as a real process: pipes, environment, closed stdout, no tracebacks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import SAMPLE
from .datagen import generate

COMMAND = [sys.executable, "-m", "rankeval"]
PREDS = str(SAMPLE / "preds.csv")
TRUTH = str(SAMPLE / "truth.csv")


def run(*args: str, stdin: bytes | None = None, env: dict | None = None):
    return subprocess.run(
        [*COMMAND, *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def test_stdin_pipe_to_json_on_stdout():
    data = (SAMPLE / "preds.csv").read_bytes()
    r = run("score", "-", TRUTH, "--preds-format", "csv", "-f", "json", stdin=data)
    assert r.returncode == 0
    report = json.loads(r.stdout)
    assert report["users"]["evaluated"] == 298
    assert b"warning" in r.stderr


def test_no_color_means_no_escape_codes():
    colored = run("score", PREDS, TRUTH, "--quiet", env={"FORCE_COLOR": "1"})
    assert b"\x1b[" in colored.stdout  # the check below can fail
    plain = run("score", PREDS, TRUTH, "--quiet", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.returncode == 0
    assert b"\x1b[" not in plain.stdout
    assert b"ndcg" in plain.stdout


def test_input_errors_reach_the_user_as_one_line(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("user_id,item_id,relevance\nu1,A,lots\n")
    r = run("score", PREDS, str(bad))
    assert r.returncode == 2
    assert r.stdout == b""
    assert r.stderr.decode().count("\n") == 1
    assert b"Traceback" not in r.stderr
    assert b"column 'relevance'" in r.stderr


def test_closed_stdout_is_not_an_error(tmp_path):
    preds, truth = generate(seed=7, n_users=6000, n_items=500, list_len=10, judged=5)
    preds.to_csv(tmp_path / "p.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    proc = subprocess.Popen(
        [*COMMAND, "score", str(tmp_path / "p.csv"), str(tmp_path / "t.csv"), "--per-user", "-",
         "--quiet", "-m", "ndcg,map,mrr,recall,precision", "--k", "1,3,5,10"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert first.startswith(b"user_id,")
    assert proc.returncode == 0, err
    assert b"Traceback" not in err
    assert b"error" not in err


def test_every_command_runs_in_a_real_process(tmp_path):
    """The entry point keeps pandas out of the process: every path must work without it."""
    out = tmp_path / "p.run"
    convert = run("convert", PREDS, str(out))
    assert convert.returncode == 0, convert.stderr
    assert out.read_text().startswith("u001 Q0 i0002 1 ")
    users = tmp_path / "u.parquet"
    scored = run("score", str(out), TRUTH, "-f", "markdown", "--per-user", str(users),
                 "--fail-under", "ndcg@10=0.2")
    assert scored.returncode == 0, scored.stderr
    assert users.stat().st_size > 0
    assert run("metrics").returncode == 0
    table = run("score", PREDS, TRUTH, "--per-user", "-", "--quiet")
    assert table.returncode == 0
    assert table.stdout.startswith(b"user_id,precision@10,")


# Reports which call imported pandas, so that a failure names the line to change.
_NO_PANDAS = """
import sys, traceback
seen = []
class Guard:  # pyarrow takes a failed import as "no pandas" and goes on: record every attempt
    def find_spec(self, name, path=None, target=None):
        # compare's tests come from scipy, which needs numpy.ma itself
        if name == "pandas" or name == "numpy.ma" and "scipy" not in sys.modules:
            seen.append("".join(traceback.format_stack(limit=8)))
        if name == "pandas":
            raise ImportError("pandas is not for the command line")
sys.meta_path.insert(0, Guard())
from rankeval.cli import cli
import rankeval.build.join
rankeval.build.join._BLOCK = 3  # small files take the paths of big ones: blocks of a few users
for args in ARGS:
    try:
        code = cli.main(args, standalone_mode=False)
    except SystemExit as e:
        code = e.code
    if code not in (0, 1, None):
        sys.exit(f"exit {code}: {args}")
    if seen:
        sys.exit(f"{args} imported pandas or numpy.ma:\\n" + seen[0])
"""

# Every reading of ids the loaders choose between: fixed-width and variable-width prefixed
# numbers, canonical integers of mixed lengths, zero padded digits, plain text, integer-typed
# Parquet columns.
_ID_STYLES = {
    "fixed": lambda n: f"i{n:05d}",
    "prefixed": lambda n: f"item_{n}",
    "integers": lambda n: str(n * 37),
    "padded": lambda n: f"{n:07d}",
    "text": lambda n: f"x{n}y",
}


def _id_style_files(tmp_path):
    preds, truth = generate(5, 120, 900, 15, 6)
    users = {u: n for n, u in enumerate(sorted(set(truth.user_id) | set(preds.user_id)))}
    items = {i: int(i[1:]) for i in set(truth.item_id) | set(preds.item_id)}
    files = []
    for style, write in _ID_STYLES.items():
        for frame, name in ((preds, "p"), (truth, "t")):
            out = frame.assign(user_id=[write(users[u]) for u in frame.user_id],
                               item_id=[write(items[i]) for i in frame.item_id])
            out.to_csv(tmp_path / f"{style}_{name}.csv", index=False)
        files.append((str(tmp_path / f"{style}_p.csv"), str(tmp_path / f"{style}_t.csv")))
    for frame, name in ((preds, "p"), (truth, "t")):
        frame.assign(user_id=frame.user_id.map(users), item_id=frame.item_id.map(items)) \
            .to_parquet(tmp_path / f"int_{name}.parquet")
    files.append((str(tmp_path / "int_p.parquet"), str(tmp_path / "int_t.parquet")))
    return files


def test_the_command_line_never_imports_pandas(tmp_path):
    """pandas costs 0.2 s of every run, numpy.ma (which np.unique imports) 10 ms; only the
    library's DataFrame results need pandas. Every id reading, every command, every report
    format and the per-user outputs are run in one process that refuses to import them."""
    out = str(tmp_path / "out")
    # first, before compare brings scipy (which imports numpy.ma itself): a user's scores tie
    args = [["score", PREDS, TRUTH, "-f", "json", "-o", out, "--quiet"]]
    for p, t in _id_style_files(tmp_path):
        args += [
            ["score", p, t, "-f", "json", "-o", out, "--per-user", out + ".csv", "--quiet"],
            ["score", p, t, "--compat", "trec_eval", "-f", "trec", "--per-query", "-o", out,
             "--quiet"],
            ["score", p, t, "-f", "markdown", "-o", out, "--quiet",
             "--ties", "expected", "--fail-under", "ndcg@10=0.99"],
            ["validate", p, t, "--quiet"],
            ["compare", p, p, t, "-f", "json", "-o", out, "--quiet"],
            ["convert", p, out + ".tsv", "--output-format", "trec"],
        ]
    args += [
        ["score", str(SAMPLE / "preds.parquet"), str(SAMPLE / "truth.parquet"), "--intervals",
         "--rounds", "200", "--per-user", str(tmp_path / "u.parquet"), "-o", out, "--quiet"],
        ["score", PREDS, TRUTH, "-f", "table", "--fail-under", "ndcg@10=0.1", "-o", out,
         "--quiet", "--train", str(SAMPLE / "train.csv"), "--catalog",
         str(SAMPLE / "catalog.csv"), "-m", "ndcg@10,coverage@10,novelty@10,gini@10",
         "--segments", str(SAMPLE / "users.csv"), "--segment-by", "country",
         "--segment-by", "train_interactions:quartiles", "--stats", "median,p10,zeros"],
        ["score", PREDS, TRUTH, "-f", "csv", "-o", out, "--quiet", "--html", out + ".html",
         "--fail-under", "ndcg@10=0.1", "--junit", out + ".xml"],
    ]
    code = _NO_PANDAS.replace("ARGS", repr(args))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]


def _pool_after_setup(env: dict, args: str = "") -> str:
    """Arrow's pool in a process after the command line's setup (``for_one_run``), or after
    running ``rankeval ARGS`` through its entry point when ``args`` is given."""
    setup = (f"import sys; sys.argv = ['rankeval', {args}]\nfrom rankeval.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n" if args else
             "from rankeval.cli.memory import for_one_run; for_one_run()\n")
    code = setup + "import pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**clean, **env}, timeout=60, check=True)
    return r.stdout.strip().splitlines()[-1]


def test_command_line_gives_arrow_memory_back_unless_told_otherwise():
    """Arrow's memory (the file's text, let go once encoded) comes from jemalloc, which
    returns it; numpy's freed blocks stay in glibc's heap for reuse. See rankeval/cli/memory.py."""
    import pyarrow as pa

    expected = "jemalloc" if "jemalloc" in pa.supported_memory_backends() else "system"
    assert _pool_after_setup({}) == expected
    assert _pool_after_setup({}, f"'validate', {PREDS!r}, {TRUTH!r}, '-q'") == expected
    assert _pool_after_setup({"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}) == "mimalloc"
    assert _pool_after_setup({"ARROW_DEFAULT_MEMORY_POOL": "system"}) == "system"
    # --help parses and stops: it leaves the allocators as a plain process has them
    plain = subprocess.run([sys.executable, "-c", "import pyarrow as pa; "
                            "print(pa.default_memory_pool().backend_name)"], text=True,
                           capture_output=True, check=True, timeout=60,
                           env={k: v for k, v in os.environ.items()
                                if k != "ARROW_DEFAULT_MEMORY_POOL"}).stdout.strip()
    assert _pool_after_setup({}, "'score', '--help'") == plain


@pytest.mark.parametrize(("told", "arenas"), [
    ("stats_print:true", "1"),  # ours
    ("narenas:3,stats_print:true", "3"),  # the user's options win
])
def test_command_line_gives_arrow_one_jemalloc_arena_unless_told_otherwise(told, arenas):
    """Arrow's threads share one jemalloc arena (rankeval/cli/memory.py), set through the
    options pyarrow's jemalloc reads as pyarrow is imported; the user's own options come after
    and win, and the environment is as the user left it once the setup is done. jemalloc
    prints the options it runs with as the process exits (``stats_print``)."""
    import pyarrow as pa

    code = ("import os\nfrom rankeval.cli.memory import for_one_run; for_one_run()\n"
            "import pyarrow as pa; pa.array(range(10))\n"
            "print(os.environ.get('JE_ARROW_MALLOC_CONF'))\n")
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**clean, "JE_ARROW_MALLOC_CONF": told}, timeout=60, check=True)
    assert r.stdout.strip().splitlines()[-1] == told
    options = re.findall(r"opt\.narenas: (\d+)", r.stderr)
    assert options == ([arenas] if "jemalloc" in pa.supported_memory_backends() else [])


@pytest.mark.parametrize(("told", "threads"), [(None, 1), ("2", 2)])
def test_command_line_loads_openblas_with_one_thread_unless_told_otherwise(told, threads):
    """numpy's OpenBLAS starts with one thread in a command's process (rankeval/cli/memory.py:
    its idle threads spin beside Arrow's); a count the user gives wins, and the environment is
    as the user left it once numpy has loaded. A plain process on more than one core has
    more (the count threadpoolctl reads from OpenBLAS itself)."""
    code = ("import os, sys\n"
            "if sys.argv[1] == 'rankeval':\n"
            "    from rankeval.cli.memory import for_one_run; for_one_run()\n"
            "import numpy, threadpoolctl\n"
            "blas = [p['num_threads'] for p in threadpoolctl.threadpool_info()\n"
            "        if p['user_api'] == 'blas']\n"
            "print(blas, os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env = clean if told is None else {**clean, "OPENBLAS_NUM_THREADS": told}

    def run_as(who: str) -> str:
        return subprocess.run([sys.executable, "-c", code, who], capture_output=True,
                              text=True, env=env, timeout=60, check=True).stdout.strip()

    assert run_as("rankeval") == f"[{threads}] {told}"
    plain = run_as("plain")
    if told is None:  # OpenBLAS's own count: a thread per core it may run on
        assert plain != "[1] None" or (os.cpu_count() or 1) == 1
    else:
        assert plain == f"[{threads}] {told}"


@pytest.mark.parametrize(("args", "code"), [
    (f"'score', {PREDS!r}, {TRUTH!r}, '-q'", 0),
    (f"'score', {PREDS!r}, {TRUTH!r}, '-q', '--fail-under', 'ndcg@10=0.99'", 1),
    (f"'score', {PREDS!r}, 'missing.csv'", 2),
    ("'score', '--no-such-option'", 2),
])
def test_entry_point_freezes_the_collector_on_every_way_out(args, code):
    """The entry point freezes every object before the interpreter's exit (which then skips
    its full collections) and keeps the command's exit code."""
    probe = (f"import gc, sys; sys.argv = ['rankeval', {args}]\nfrom rankeval.cli import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n"
             "    print(e.code, gc.get_freeze_count() > 0)\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       timeout=120, check=True)
    assert r.stdout.splitlines()[-1].split() == [str(code), "True"]
