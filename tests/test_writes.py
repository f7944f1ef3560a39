"""Every write is whole or an error: each output path (reports in every format, per-user
files, JUnit, HTML, converted files, standard output, the step summary) through a device that
takes a few bytes per call, then fills up. A cut-short output with exit 0 is the defect class.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys

import pytest

from rankeval.io import output
from rankeval.report import choices

from .conftest import SAMPLE

PREDS = str(SAMPLE / "preds.csv")
TRUTH = str(SAMPLE / "truth.csv")
POPULAR = str(SAMPLE / "popular.csv")


class Device:
    """``os.write`` of a device that takes ``step`` bytes per call and fails with ``error``
    once ``room`` bytes are written (None: never full)."""

    def __init__(self, step: int = 3, room: int | None = None, error: int = errno.ENOSPC):
        self.step, self.room, self.error, self.calls = step, room, error, 0

    def __call__(self, fd: int, data) -> int:
        self.calls += 1
        take = min(self.step, len(data))
        if self.room is not None:
            if self.room <= 0:
                raise OSError(self.error, os.strerror(self.error))
            take = min(take, self.room)
            self.room -= take
        return os.write(fd, bytes(data[:take]))


def _paths(tmp):
    """(name, command line, the output file): every way a command writes a file."""
    out = []
    for fmt in choices("score"):
        out.append((f"score -f {fmt} -o", ["score", PREDS, TRUTH, "-f", fmt, "-o",
                                           str(tmp / f"r.{fmt}")], tmp / f"r.{fmt}"))
    for fmt in choices("compare"):
        out.append((f"compare -f {fmt} -o", ["compare", PREDS, POPULAR, TRUTH, "-f", fmt,
                                             "-o", str(tmp / f"c.{fmt}")], tmp / f"c.{fmt}"))
    for fmt in ("table", "json"):
        out.append((f"validate -f {fmt} -o", ["validate", PREDS, TRUTH, "-f", fmt, "-o",
                                              str(tmp / f"v.{fmt}")], tmp / f"v.{fmt}"))
    out += [
        ("score --per-user csv", ["score", PREDS, TRUTH, "--per-user", str(tmp / "u.csv")],
         tmp / "u.csv"),
        ("compare --per-user csv", ["compare", PREDS, POPULAR, TRUTH, "--per-user",
                                    str(tmp / "cu.csv")], tmp / "cu.csv"),
        ("score --junit", ["score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.1", "--junit",
                           str(tmp / "j.xml")], tmp / "j.xml"),
        ("score --html", ["score", PREDS, TRUTH, "--html", str(tmp / "h.html")],
         tmp / "h.html"),
        ("compare --html", ["compare", PREDS, POPULAR, TRUTH, "--html", str(tmp / "ch.html")],
         tmp / "ch.html"),
    ]
    for ext in ("csv", "tsv", "run", "json", "jsonl"):
        out.append((f"convert .{ext}", ["convert", PREDS, str(tmp / f"p.{ext}")],
                    tmp / f"p.{ext}"))
    return out


CASES = [name for name, _, _ in _paths(SAMPLE)]


@pytest.mark.parametrize("name", CASES)
def test_a_full_disk_is_an_error_naming_the_file_and_leaves_nothing(run_cli, tmp_path,
                                                                     monkeypatch, name):
    _, args, target = next(p for p in _paths(tmp_path) if p[0] == name)
    whole = run_cli(*args, "-q")  # a device that takes 3 bytes a call writes it all
    assert whole.exit_code in (0, 1), whole.stderr
    expected = target.read_bytes()
    target.unlink()
    short = Device(step=3)
    monkeypatch.setattr(output, "_os_write", short)
    again = run_cli(*args, "-q")
    assert again.exit_code == whole.exit_code and target.read_bytes() == expected
    assert short.calls >= len(expected) // 3  # the device was really used
    target.unlink()
    monkeypatch.setattr(output, "_os_write", Device(step=3, room=len(expected) // 2))
    full = run_cli(*args, "-q")
    assert full.exit_code == 2, (full.exit_code, full.stderr)
    assert full.stderr.strip() == f"rankeval: error: cannot write {target}: No space left " \
                                  "on device"
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO, errno.EFBIG])
def test_every_write_error_is_named(run_cli, tmp_path, monkeypatch, error):
    monkeypatch.setattr(output, "_os_write", Device(room=100, error=error))
    target = tmp_path / "r.json"
    run = run_cli("score", PREDS, TRUTH, "-f", "json", "-o", str(target), "-q")
    assert run.exit_code == 2
    assert run.stderr.strip() == f"rankeval: error: cannot write {target}: " \
                                 f"{os.strerror(error)}"


def test_write_all_loops_over_short_writes_and_refuses_a_stuck_one():
    taken: list[bytes] = []

    def two(view):
        taken.append(bytes(view[:2]))
        return min(2, len(view))

    output.write_all(two, b"abcdefg")
    assert b"".join(taken) == b"abcdefg" and len(taken) == 4

    def stuck(view):
        return 0

    with pytest.raises(OSError, match="short write"):
        output.write_all(stuck, b"abc")


def test_the_step_summary_that_cannot_be_written_is_a_warning(run_cli, tmp_path,
                                                              monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setattr(output, "_os_write", Device(room=10))
    run = run_cli("score", PREDS, TRUTH, "--fail-under", "ndcg@10=0.1", "-f", "json")
    assert run.exit_code == 0  # the gate's verdict, not the summary's
    assert "cannot append to GITHUB_STEP_SUMMARY" in run.stderr
    assert "No space left on device" in run.stderr


# --- real processes: a real descriptor, a real device, a real file-size limit -------------

def _run(args, stdout, limit: int | None = None):
    def limited():
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a signal, past it
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "rankeval", *args], stdout=stdout,
                          stderr=subprocess.PIPE, preexec_fn=limited, timeout=120,
                          check=False)


STDOUT_RUNS = {
    "score json": ["score", PREDS, TRUTH, "-f", "json", "-q"],
    "score table": ["score", PREDS, TRUTH, "-q"],
    "score per-user": ["score", PREDS, TRUTH, "--per-user", "-", "-q"],
    "compare csv": ["compare", PREDS, POPULAR, TRUTH, "-f", "csv", "-q"],
    "validate json": ["validate", PREDS, TRUTH, "-f", "json", "-q"],
    "convert jsonl": ["convert", PREDS, "-", "--output-format", "jsonl", "-q"],
    "metrics json": ["metrics", "-f", "json"],
}


@pytest.mark.parametrize("args", STDOUT_RUNS.values(), ids=list(STDOUT_RUNS))
def test_standard_output_on_a_full_device(args):
    with open("/dev/full", "wb") as full:
        r = _run(args, full)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().strip() == ("rankeval: error: cannot write to standard output: "
                                        "No space left on device")


@pytest.mark.parametrize("args", STDOUT_RUNS.values(), ids=list(STDOUT_RUNS))
def test_a_short_write_to_standard_output_is_an_error(tmp_path, args):
    """A file-size limit makes the kernel take part of a write, then refuse the rest: the
    partial write of a full disk, in a real process."""
    target = tmp_path / "out"
    with open(target, "wb") as fh:
        whole = _run(args, fh)
    size = target.stat().st_size
    assert whole.returncode == 0 and size > 100
    with open(target, "wb") as fh:
        r = _run(args, fh, limit=size // 2)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().strip() == ("rankeval: error: cannot write to standard output: "
                                        "File too large")


@pytest.mark.parametrize("name", ["u.parquet", "u.csv"])
def test_a_short_write_to_a_per_user_file_is_an_error(tmp_path, name):
    target = tmp_path / name
    whole = _run(["score", PREDS, TRUTH, "--per-user", str(target), "-q"], subprocess.DEVNULL)
    assert whole.returncode == 0
    size = target.stat().st_size
    target.unlink()
    r = _run(["score", PREDS, TRUTH, "--per-user", str(target), "-q"], subprocess.DEVNULL,
             limit=size // 2)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode().startswith(f"rankeval: error: cannot write {target}: ")
    assert r.stderr.decode().count("\n") == 1
    assert not target.exists() and list(tmp_path.iterdir()) == []
