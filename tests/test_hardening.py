"""The contract, for every output option x every kind of path, and every input format x every
defect class: exit 0 with right numbers, exit 1 only from a failing gate, exit 2 with one line
on stderr and no traceback, no file changed that should not be, no partial output.

Device nodes and FIFOs are made inside a temporary folder (``os.mknod``, ``os.mkfifo``): the
tests run as root in CI and must never point the code at the machine's own ``/dev`` files.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import SAMPLE

OUTPUTS = {  # command whose output goes to PATH (the inputs are copies in the same folder)
    "score -o": lambda p, t, path: ["score", p, t, "-f", "json", "-o", path],
    "score --per-user": lambda p, t, path: ["score", p, t, "--per-user", path, "-q"],
    "score --junit": lambda p, t, path: ["score", p, t, "--fail-under", "ndcg@10=0.1",
                                         "--junit", path, "-q"],
    "compare -o": lambda p, t, path: ["compare", t, p, p, "-f", "json", "-o", path, "-q"],
    "validate -o": lambda p, t, path: ["validate", p, t, "-f", "json", "-o", path, "-q"],
    "convert OUT": lambda p, t, path: ["convert", p, path, "-q"],
}
KINDS = ["new", "regular", "symlink", "fifo", "device", "full", "input", "other-output",
         "missing-dir", "trailing-slash", "directory"]
WRITTEN = {"new", "regular", "symlink", "fifo", "device"}


def _device(path: Path, minor: int) -> None:
    """A character device like /dev/null (minor 3) or /dev/full (minor 7), in our folder."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making device nodes needs root (CI runs as root)")


def _one_line_error(r, needle: str = "") -> None:
    """Exit 2 and one error line (warnings found before an output failed may precede it)."""
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    lines = [line for line in r.stderr.strip().splitlines()
             if not line.startswith("rankeval: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: "), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option", list(OUTPUTS))
def test_every_output_option_on_every_kind_of_path(run_cli, tmp_path, option, kind):
    p, t = tmp_path / "preds.csv", tmp_path / "truth.csv"
    shutil.copy(SAMPLE / "preds.csv", p)
    shutil.copy(SAMPLE / "truth.csv", t)
    before = p.read_bytes()
    path = tmp_path / "out.csv"
    received: list[bytes] = []
    reader = None
    if kind == "regular":
        path.write_text("old")
        path.chmod(0o640)
    elif kind == "symlink":
        target = tmp_path / "target.csv"
        target.write_text("old")
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
        reader = threading.Thread(target=lambda: received.append(path.read_bytes()))
        reader.start()
    elif kind == "device":
        _device(path, 3)
    elif kind == "full":
        _device(path, 7)
    elif kind == "input":
        path = p
    elif kind == "missing-dir":
        path = tmp_path / "nope" / "out.csv"
    elif kind == "trailing-slash":
        path = tmp_path / "newdir"  # given with a slash below
    elif kind == "directory":
        path = tmp_path
    args = OUTPUTS[option](p, t, path)
    if kind == "other-output":  # a second output to the same file as the first
        args = ["score", p, t, "-f", "json", "-o", path, "--per-user", path]
    if kind == "trailing-slash":
        args = [str(a) + "/" if a == path else a for a in args]
    r = run_cli(*args)
    if reader is not None:
        if r.exit_code != 0:  # unblock the reader
            with open(path, "wb"):
                pass
        reader.join(5)
    assert p.read_bytes() == before  # an input is never touched
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]  # no partial output
    if kind in WRITTEN:
        assert r.exit_code == 0, r.stderr
        if kind == "new":
            umask = os.umask(0)
            os.umask(umask)
            assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
            assert path.stat().st_size > 0
        elif kind == "regular":
            assert stat.S_IMODE(path.stat().st_mode) == 0o640
            assert path.read_text() != "old"
        elif kind == "symlink":
            assert path.is_symlink() and (tmp_path / "target.csv").read_text() != "old"
        elif kind == "fifo":
            assert stat.S_ISFIFO(os.stat(path).st_mode) and received and received[0]
        else:
            assert stat.S_ISCHR(os.stat(path).st_mode)
        return
    needle = {"full": "No space left on device", "input": "is the input",
              "other-output": "is the output of", "missing-dir": "does not exist",
              "trailing-slash": "ends in /", "directory": "is a directory"}[kind]
    _one_line_error(r, needle)
    if kind in ("missing-dir", "trailing-slash"):
        assert not path.exists()
    if kind == "full":
        assert stat.S_ISCHR(os.stat(path).st_mode)  # still the device, not a file


# Inputs: one logical data set written in every format, then each defect class applied.
PREDS = [("u1", "A", 3.0), ("u1", "B", 2.0), ("u1", "C", 1.0), ("u2", "A", 2.0), ("u2", "D", 1.0)]
TRUTH = [("u1", "A", 1.0), ("u1", "C", 2.0), ("u2", "D", 1.0), ("u2", "E", 0.0)]
FORMATS = ["csv", "tsv", "parquet", "jsonl", "json", "trec"]
EXT = {"csv": "csv", "tsv": "tsv", "parquet": "parquet", "jsonl": "jsonl", "json": "json"}


def _write(folder: Path, fmt: str, role: str, rows: list[tuple]) -> Path:
    value = "score" if role == "predictions" else "relevance"
    if fmt == "trec":
        path = folder / ("p.run" if role == "predictions" else "t.qrels")
        lines = [f"{u} Q0 {i} {n} {v!r} tag" if role == "predictions" else f"{u} 0 {i} {v:g}"
                 for n, (u, i, v) in enumerate(rows, 1)]
        path.write_text("\n".join(lines) + "\n")
        return path
    path = folder / f"{role[0]}.{EXT[fmt]}"
    if fmt == "parquet":
        cols = list(zip(*rows, strict=True)) if rows else [[], [], []]
        pq.write_table(pa.table({"user_id": pa.array(cols[0], pa.string()),
                                 "item_id": pa.array(cols[1], pa.string()),
                                 value: pa.array(cols[2], pa.float64())}), path)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps({"user_id": u, "item_id": i, value: v}) + "\n"
                                for u, i, v in rows))
    elif fmt == "json":  # written by hand: a repeated key must reach the file
        users: dict[str, list[str]] = {}
        for u, i, v in rows:
            users.setdefault(u, []).append(f"{json.dumps(i)}: {v!r}")
        body = [f"{json.dumps(u)}: {{{', '.join(items)}}}" for u, items in users.items()]
        path.write_text("{" + ", ".join(body) + "}")
    else:
        sep = "," if fmt == "csv" else "\t"
        path.write_text(sep.join(["user_id", "item_id", value]) + "\n"
                        + "".join(f"{u}{sep}{i}{sep}{v!r}\n" for u, i, v in rows))
    return path


# class -> (predictions, truth, extra args, expected: exit code and a needle)
CLASSES = {
    "clean": (PREDS, TRUTH, [], (0, "")),
    "repeated pair in the truth": (PREDS, [*TRUTH, ("u1", "A", 2.0)], [],
                                   (2, "listed more than once")),
    "repeated pair in the run": ([*PREDS, ("u1", "A", 0.5)], TRUTH, [],
                                 (2, "listed more than once")),
    "repeated pair in the run, dedupe": ([*PREDS, ("u1", "A", 0.5)], TRUTH, ["--dedupe"],
                                         (0, "")),
    "no shared user": ([("x", "A", 1.0)], TRUTH, [], (2, "shares no user id")),
    "overflowing gain, ndcg": (PREDS, [*TRUTH[:2], ("u2", "D", 1100.0)],
                               ["--gain", "exponential", "-m", "ndcg@2"], (0, "")),
    "overflowing gain, dcg": (PREDS, [*TRUTH[:2], ("u2", "D", 1100.0)],
                              ["--gain", "exponential", "-m", "dcg@2"], (2, "overflows")),
    "overflowing sum, cg": (PREDS, [("u1", "A", 1.5e308), ("u1", "C", 1.5e308),
                                    ("u2", "D", 1.0)], ["-m", "cg@3"], (2, "overflows")),
}


@pytest.mark.parametrize("case", list(CLASSES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_input_format_meets_every_defect_class(run_cli, tmp_path, fmt, case):
    preds, truth, args, (code, needle) = CLASSES[case]
    p, t = _write(tmp_path, fmt, "predictions", preds), _write(tmp_path, fmt, "truth", truth)
    r = run_cli("score", p, t, "-f", "json", "--k", "2", *args)
    if code == 2:
        _one_line_error(r, needle)
        return
    assert r.exit_code == 0, r.stderr
    doc = r.json()
    assert all(isinstance(v, float) and v == v for v in doc["metrics"].values())
    # the same numbers as the CSV version of the same data
    csv = run_cli("score", _write(tmp_path, "csv", "predictions", preds),
                  _write(tmp_path, "csv", "truth", truth), "-f", "json", "--k", "2", *args)
    assert doc["metrics"] == csv.json()["metrics"]
    if "ndcg" in case:
        # u1: A(1), C(2) with the list A, B: dcg 1, idcg (2^2 - 1) + 1/log2(3).
        # u2: D(1100) at rank 2 of A, D: dcg (2^1100 - 1)/log2(3), idcg 2^1100 - 1.
        u1 = 1 / (3 + 1 / math.log2(3))
        u2 = 1 / math.log2(3)
        assert doc["metrics"]["ndcg@2"] == pytest.approx((u1 + u2) / 2, abs=1e-12)
    if "dedupe" in case:
        assert any("dropped" in w for w in doc["warnings"])
