"""Signals end every command within a second or two, with one line, exit 128 + the signal,
and no temporary or partial output (#46.6, #46.11): during a long C-level call (a sampled
correction table: minutes inside scipy, where no Python handler can run), during a write
(every catchable signal), and at random points of long runs of each command."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rankeval.cli import cli, reaper
from rankeval.cli.process import (
    REAP_TIME,
    Signals,
    Terminated,
    descendants,
    message,
    terminating,
)

from .conftest import SAMPLE
from .datagen import generate

COMMAND = [sys.executable, "-m", "rankeval"]
ENV = {**os.environ, "RANKEVAL_PROGRESS": "0"}
BOUND = 5.0  # seconds: "within a second", with room for a busy machine


def _ended_by(proc: subprocess.Popen, signum: int) -> tuple[float, bytes]:
    """Send ``signum``; (seconds until the process ended, its stderr). Killed if it hangs."""
    start = time.monotonic()
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running 30 s after {signal.Signals(signum).name}")
    return time.monotonic() - start, err


def _leftovers(folder: Path, before: set[str]) -> list[str]:
    return sorted(set(os.listdir(folder)) - before)


# Every cut-off from 1 to 400: a table each, about a minute of linear algebra in all
MANY_KS = ",".join(map(str, range(1, 401)))


def test_sigterm_ends_the_correction_tables_inside_their_linear_algebra(tmp_path):
    """``rankeval sampled``'s correction tables are numpy and BLAS calls: once a single
    scipy call of minutes, where the handler could not run until it returned and ``timeout``
    left the process running; now a table per metric and cut-off, each a second at most."""
    out = tmp_path / "out.json"
    proc = subprocess.Popen([*COMMAND, "sampled", str(SAMPLE / "sampled_a.csv"),
                             "--candidates", "50000", "--negatives", "999", "-k", MANY_KS,
                             "-f", "json", "-o", str(out)], stderr=subprocess.PIPE, env=ENV,
                            cwd=tmp_path)
    time.sleep(3)  # well inside the tables (a minute of work)
    assert proc.poll() is None
    took, err = _ended_by(proc, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert err.decode().strip() == "rankeval: error: terminated"
    assert took < BOUND, took
    assert os.listdir(tmp_path) == []


_SLOW_WRITE = """
import os, sys, time
from rankeval.io import output
def slow(fd, data):  # a slow device: a byte at a time, with time to be interrupted
    time.sleep(0.01)
    return os.write(fd, bytes(data[:1]))
output._os_write = slow
sys.argv = ["rankeval", *sys.argv[1:]]
from rankeval.cli import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [s for s in terminating()
                                    if signal.getsignal(s) != signal.SIG_IGN],
                         ids=lambda s: signal.Signals(s).name)
def test_every_catchable_signal_during_a_write_leaves_no_temporary_file(tmp_path, signum):
    out = tmp_path / "report.json"
    out.write_text("the earlier report")
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITE, "score",
                             str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), "-f", "json",
                             "-o", str(out), "-q"], stderr=subprocess.PIPE, env=ENV)
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]:
        assert proc.poll() is None and time.monotonic() < deadline, "no write was seen"
        time.sleep(0.01)
    took, err = _ended_by(proc, signum)
    assert proc.returncode == 128 + signum, err
    assert err.decode() == f"rankeval: error: {message(signum)}\n"
    assert took < BOUND
    assert os.listdir(tmp_path) == ["report.json"]
    assert out.read_text() == "the earlier report"


@pytest.fixture(scope="module")
def long_inputs(tmp_path_factory) -> dict[str, str]:
    """Inputs that keep each command busy for seconds."""
    d = tmp_path_factory.mktemp("long")
    preds, truth = generate(seed=3, n_users=150_000, n_items=5000, list_len=10, judged=5)
    preds.to_csv(d / "p.csv", index=False)
    truth.to_csv(d / "t.csv", index=False)
    other = preds.assign(score=preds.score[::-1].to_numpy())
    other.to_csv(d / "q.csv", index=False)
    rng = np.random.default_rng(1)
    n = 200_000
    (d / "ranks.csv").write_text("user_id,item_id,rank\n" + "".join(
        f"u{u},i{u},{r}\n" for u, r in zip(range(n), rng.integers(1, 101, n), strict=True)))
    return {"p": str(d / "p.csv"), "t": str(d / "t.csv"), "q": str(d / "q.csv"),
            "ranks": str(d / "ranks.csv"), "log": str(SAMPLE / "log.csv"),
            "cand": str(SAMPLE / "log_candidate.csv")}


def _long_runs(i: dict[str, str], out: str) -> dict[str, tuple[list[str], float]]:
    """command -> (a long run's arguments, the seconds after it starts reading within which
    the signal comes: about its length on an idle machine)."""
    return {
        "score": (["score", i["p"], i["t"], "--ci", "--rounds", "2000", "-f", "json", "-o",
                   out], 8.0),
        "validate": (["validate", i["p"], i["t"], "-f", "json", "-o", out], 0.5),
        "compare": (["compare", i["p"], i["q"], i["t"], "-f", "json", "-o", out], 1.5),
        "power": (["power", i["p"], i["q"], i["t"], "-f", "json", "-o", out], 2.0),
        "convert": (["convert", i["p"], out + ".jsonl"], 6.0),
        "ope": (["ope", i["log"], i["cand"], "--rounds", "20000", "-f", "json", "-o", out],
                2.0),
        "sampled": (["sampled", i["ranks"], "--candidates", "30000", "--negatives", "999",
                     "-k", MANY_KS, "-f", "json", "-o", out], 5.0),  # its tables: a minute
        "metrics": (["metrics", "-f", "json"], 0.0),  # nothing to read: it has finished
        "config": (["config", "-f", "json", "score"], 0.0),  # reads no input: it has finished
        "agree": (["agree", i["t"], i["t"], "--runs", i["p"], i["q"], "-f", "json", "-o", out],
                  4.0),
        "interleave": (["interleave", "make", i["p"], i["q"], "--method", "probabilistic",
                        "-o", out + ".csv"], 4.0),
    }


def _reading(proc: subprocess.Popen, paths: list[str], timeout: float = 60) -> None:
    """Wait until the process has one of ``paths`` open (its command is running: the
    interpreter's start, before any handler can be set, is not what is tested here)."""
    wanted = {os.path.realpath(p) for p in paths}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            fds = os.listdir(f"/proc/{proc.pid}/fd")
            if any(_link(f"/proc/{proc.pid}/fd/{fd}") in wanted for fd in fds):
                return
        time.sleep(0.01)


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def test_every_command_has_a_long_run(tmp_path):
    assert set(_long_runs(dict.fromkeys(("p", "t", "q", "ranks", "log", "cand"), "x"), "o")) \
        == set(cli.commands)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("command", sorted(cli.commands))
def test_a_signal_at_a_random_point_of_each_command(long_inputs, tmp_path, command):
    """SIGTERM or SIGINT at a random moment of a long run: the run ends within the bound
    with 143 or 130 and one line, or it had finished (0) with its whole output; never a
    partial output, never a temporary file left."""
    rng = random.Random(f"{command}-{os.getpid()}")
    out = str(tmp_path / "out")
    args, within = _long_runs(long_inputs, out)[command]
    signum = rng.choice([signal.SIGTERM, signal.SIGINT])
    proc = subprocess.Popen([*COMMAND, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=ENV, cwd=tmp_path)
    if within:
        _reading(proc, [a for a in args if a in long_inputs.values()])
    else:
        proc.wait(timeout=60)
    time.sleep(rng.uniform(0, within))
    took, err = _ended_by(proc, signum)
    left = _leftovers(tmp_path, set())
    if proc.returncode == 0:  # it had finished: its outputs are whole
        return
    assert proc.returncode == 128 + signum, (proc.returncode, err[-2000:])
    assert err.decode().endswith(f"rankeval: error: {message(signum)}\n"), err[-2000:]
    assert b"Traceback" not in err
    assert took < BOUND, took
    assert left == [], left


@pytest.mark.spark
def test_sigterm_ends_a_spark_job(long_inputs, tmp_path):
    _cluster_job(["--engine", "spark"], long_inputs, tmp_path, "java")


@pytest.mark.ray
def test_sigterm_ends_a_ray_job(long_inputs, tmp_path):
    _cluster_job(["--engine", "ray"], long_inputs, tmp_path, "raylet")


def _cluster_job(engine: list[str], inputs, tmp_path, process: str) -> None:
    """SIGTERM once the cluster's processes are up: exit 143 within seconds, no output, and
    the cluster's local processes gone."""
    out = tmp_path / "out.json"
    proc = subprocess.Popen([*COMMAND, "score", *engine, inputs["p"], inputs["t"], "-f", "json",
                             "-o", str(out), "-q"], stderr=subprocess.PIPE, env=ENV)
    deadline = time.monotonic() + 120
    children: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        children = descendants(proc.pid)
        names = [Path(f"/proc/{c}/comm").read_text().strip() for c in children
                 if Path(f"/proc/{c}/comm").exists()]
        if process in names:
            break
        time.sleep(0.2)
    time.sleep(random.uniform(0.0, 3.0))  # its start, its reading or its job
    children = sorted({*children, *descendants(proc.pid)})
    assert proc.poll() is None, "the run ended before the signal"
    took, err = _ended_by(proc, signal.SIGTERM)
    assert proc.returncode == 143, err[-2000:]
    assert err.decode().endswith("rankeval: error: terminated\n"), err[-2000:]
    assert took < 2 * BOUND, took
    assert not out.exists() and os.listdir(tmp_path) == []
    # the command has ended; the cluster's processes it told to end go on their own time,
    # which a busy machine stretches (a raylet took over 3 s beside two CPU-bound jobs)
    alive = _alive(children)
    end = time.monotonic() + 60
    while alive and time.monotonic() < end:
        time.sleep(0.5)
        alive = _alive(children)
    assert alive == [], [_command_line(pid) for pid in alive]


def _command_line(pid: int) -> str:
    """``pid`` and its command line (what a process left running was), for a failure's text."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return f"{pid}: gone"
    return f"{pid}: " + " ".join(w.decode(errors="replace") for w in words)[:300]


def _alive(pids: list[int]) -> list[int]:
    """The processes of ``pids`` still running (not gone, not zombies)."""
    out = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text().lower()
        except OSError:  # gone between the two looks
            continue
        if "zombie" not in status:
            out.append(pid)
    return out


# A command in a long call that releases the GIL without looking at signals (hashing here;
# Arrow's readers and writers, numpy's loops do the same): the watchdog thread reads the
# signal from the wakeup pipe before the main thread's handler runs. The handler must still
# raise, so that the command unwinds instead of going on (and writing) until the watchdog
# ends the process (a temporary file was left so: CI, interleave make).
_GIL_FREE_CALL = """
import hashlib, os, subprocess, sys
from rankeval.cli import process
from rankeval.io.output import remove_pending
process.GRACE = 60  # the watchdog waits: only the command's own unwinding is seen
signals = process.Signals(cleanup=remove_pending, say=lambda line: None)
signals.install()
subprocess.Popen(["sh", "-c", f"sleep 0.3; kill -TERM {os.getpid()}"])
data = bytes(64 << 20)
try:
    for _ in range(60):
        hashlib.sha256(data).digest()
    print("went on")
except process.Terminated as exc:
    print("unwound", signals.received == exc.signum)
    sys.exit(exc.code)
"""


def test_the_command_unwinds_when_the_watchdog_saw_the_signal_first():
    proc = subprocess.run([sys.executable, "-c", _GIL_FREE_CALL], capture_output=True,
                          timeout=120, env=ENV)
    assert proc.stdout.decode() == "unwound True\n", proc.stderr[-2000:]
    assert proc.returncode == 128 + signal.SIGTERM


def test_the_handler_raises_after_the_watchdog_recorded_the_signal():
    signals = Signals(cleanup=lambda: None, say=lambda line: None)
    signals.received = signal.SIGTERM  # what the watchdog does when it reads the pipe first
    with pytest.raises(Terminated):
        signals._on_signal(signal.SIGTERM, None)
    signals._on_signal(signal.SIGTERM, None)  # a second signal does not cut the unwinding


# A process started by a command, which ignores SIGTERM: its reaper is the only thing that
# ends it. The command prints the child's number once the child is ready.
_STUBBORN = """
import subprocess, sys, time
from rankeval.cli.process import Signals, Terminated
signals = Signals(cleanup=lambda: None, say=lambda line: None)
signals.install()
try:  # all of it: the signal may come while the number is still being printed
    child = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; "
                              "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                              "print('ready', flush=True); time.sleep(600)"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    child.stdout.readline()
    print(child.pid, flush=True)
    time.sleep(600)
except Terminated as exc:
    signals.abandon()
    sys.exit(exc.code)
"""


def test_a_process_the_command_started_that_ignores_sigterm_is_killed():
    """The command ends at once; what it started and that outlives SIGTERM (a Ray worker stuck
    in C++ kept CI's run red) is killed ``REAP_TIME`` seconds later, by a reaper that outlives
    the command."""
    proc = subprocess.Popen([sys.executable, "-c", _STUBBORN], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV)
    child = int(proc.stdout.readline())
    took, err = _ended_by(proc, signal.SIGTERM)
    assert proc.returncode == 143, err[-2000:]
    assert took < BOUND, took
    assert _alive([child]) == [child]  # it ignores SIGTERM: only the reaper ends it
    end = time.monotonic() + REAP_TIME + 30
    while _alive([child]) and time.monotonic() < end:
        time.sleep(0.2)
    assert _alive([child]) == [], _command_line(child)


def test_the_reaper_tells_a_process_from_a_later_one_with_its_number():
    """A number the system gives again to another process is not the process the command
    started: the reaper leaves it alone."""
    me = os.getpid()
    assert reaper.still_there({me: reaper.started(me)}) == {me: reaper.started(me)}
    assert reaper.still_there({me: "0"}) == {}
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert reaper.started(done.pid) is None
