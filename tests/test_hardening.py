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
    "score --html": lambda p, t, path: ["score", p, t, "-k", "10", "--html", path, "-q"],
    "compare -o": lambda p, t, path: ["compare", p, p, t, "-f", "json", "-o", path, "-q"],
    "compare --html": lambda p, t, path: ["compare", p, p, t, "-m", "ndcg@10", "--html", path,
                                          "-q"],
    "validate -o": lambda p, t, path: ["validate", p, t, "-f", "json", "-o", path, "-q"],
    "convert OUT": lambda p, t, path: ["convert", p, path, "-q"],
}
KINDS = ["new", "regular", "symlink", "fifo", "device", "full", "input", "other-output",
         "missing-dir", "trailing-slash", "directory"]
WRITTEN = {"new", "regular", "symlink", "fifo", "device", "missing-dir"}  # folders made


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
        if kind in ("new", "missing-dir"):
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
              "other-output": "is the output of",
              "trailing-slash": "ends in /", "directory": "is a directory"}[kind]
    _one_line_error(r, needle)
    if kind == "trailing-slash":
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
    if fmt == "json" and case.startswith("repeated pair"):  # a key twice in one object
        code, needle = 2, "'A' is repeated in one object"  # --dedupe or not: ambiguous JSON
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


def _parquet(path: Path, columns: dict) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


TRUTH_CSV = "user_id,item_id,relevance\nu1,A,1\nu1,B,0\nu2,C,1\n"
RUN_CSV = "user_id,item_id,rank\nu1,A,1\nu1,B,2\nu2,C,1\n"

# name -> (files {name: text, bytes, or a function of the path}, extra args, exit code, needle)
HOSTILE = {
    "swapped files": ({"p.csv": TRUTH_CSV, "t.csv": RUN_CSV}, [], 2, "seem swapped"),
    "unrecognised order column": ({"p.csv": "user_id,item_id,clicks\nu1,A,3\nu1,B,9\n"}, [],
                                  2, "--score-col"),
    "two relevance columns": ({"t.csv": "user_id,item_id,relevance,rating\nu1,A,1,5\n"}, [], 2,
                              "choose one with --relevance-col"),
    "a column named twice": ({"p.csv": "user_id,item_id,rank,rank\nu1,A,1,2\n"}, [], 2,
                             "2 columns named 'rank'"),
    "one column, two parts": ({}, ["--user-col", "rank"], 2, "cannot be both"),
    "integer scores past 2^53": ({"p.csv": "user_id,item_id,score\nu1,A,9007199254740993\n"
                                           "u1,B,9007199254740992\n"}, [], 2, "2^53"),
    # Arrow's integer parsing takes hexadecimal; no rank is written so (every text format)
    "hexadecimal ranks": ({"p.csv": "user_id,item_id,rank\nu1,A,0x1\nu1,B,0x2\n"}, [], 2,
                          "row 1 ('0x1')"),
    "hexadecimal ranks, TSV": ({"p.tsv": "user_id\titem_id\trank\nu1\tA\t1\nu1\tB\t0X2\n"},
                               [], 2, "row 2 ('0X2')"),
    "hexadecimal ranks, JSON Lines": ({"p.jsonl": '{"user_id": "u1", "item_id": "A", '
                                                  '"rank": "0x1"}\n'}, [], 2, "line 1 ('0x1')"),
    "score 1_000 in a run": ({"p.run": "u1 Q0 A 1 1_000 t\n"}, [], 2, "line 1 ('1_000')"),
    "JSON Lines type change": ({"p.jsonl": '{"user_id": "u1", "item_id": "A", "score": 1}\n'
                                           '{"user_id": "u1", "item_id": "B", "score": "x"}\n'},
                               [], 2, "line 2 ('x')"),
    "JSON Lines object ids": ({"p.jsonl": '{"user_id": {"a": 1}, "item_id": "A", "score": 1}\n'},
                              [], 2, "ids must be text"),
    "JSON repeated user": ({"p.json": '{"u1": {"A": 0.9}, "u1": {"B": 0.5}}'}, [], 2,
                           "the key 'u1' is repeated in one object"),
    "JSON deep nesting": ({"p.json": "[" * 200_000 + "]" * 200_000}, [], 2, "nested too deeply"),
    "JSON huge integer": ({"p.json": '{"u1": {"A": 1' + "0" * 400 + "}}"}, [], 2,
                          "not a finite number"),
    "Parquet binary ids": ({"p.parquet": lambda p: _parquet(p, {
        "user_id": pa.array([b"\xff\xfe"], pa.binary()), "item_id": ["A"], "rank": [1]})},
        [], 2, "not UTF-8"),
    "Parquet list ids": ({"p.parquet": lambda p: _parquet(p, {
        "user_id": pa.array([[1]]), "item_id": ["A"], "rank": [1]})}, [], 2, "flat column"),
    "Parquet int64 past 2^53": ({"p.parquet": lambda p: _parquet(p, {
        "user_id": ["u1"], "item_id": ["A"], "score": pa.array([2**60 + 1], pa.int64())})},
        [], 2, "2^53"),
    "a header field over 128 KB": ({"p.csv": "user_id,item_id," + "x" * 200_000 + "\nu1,A,1\n"},
                                   [], 2, "header"),
    "Latin-1 bytes": ({"t.csv": "user_id,item_id,relevance\nu1,caf\xe9,1\n".encode("latin-1")},
                      [], 2, "--truth-encoding"),
    "Latin-1 named": ({"t.csv": "user_id,item_id,relevance\nu1,A,1\nu2,caf\xe9,1\n".encode(
        "latin-1")}, ["--encoding", "latin-1"], 0, ""),
    "UTF-16 with a BOM": ({"t.csv": TRUTH_CSV.encode("utf-16")}, [], 0, ""),
    "semicolons": ({"p.csv": RUN_CSV.replace(",", ";")}, [], 0, ""),
    "a directory": ({}, ["--preds", "."], 2, "is a directory"),
    "no such file": ({}, ["--preds", "nope.csv"], 2, "no such file"),
    "a trec_eval name": ({}, ["-m", "P_10"], 2, "here it is precision@10"),
    "an unknown encoding": ({}, ["--encoding", "klingon"], 2, "unknown encoding"),
    "a negative seed": ({}, ["--seed", "-1"], 2, "--seed"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_inputs_and_options(run_cli, tmp_path, monkeypatch, case):
    files, args, code, needle = HOSTILE[case]
    monkeypatch.chdir(tmp_path)
    paths = {"p": tmp_path / "p.csv", "t": tmp_path / "t.csv"}
    paths["p"].write_text(RUN_CSV)
    paths["t"].write_text(TRUTH_CSV)
    for name, content in files.items():
        path = tmp_path / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        paths[name[0]] = path
    args = list(args)
    if "--preds" in args:
        at = args.index("--preds")
        paths["p"] = Path(args[at + 1])
        del args[at : at + 2]
    r = run_cli("score", paths["p"], paths["t"], "--k", "2", "-f", "json", *args)
    if code == 2:
        _one_line_error(r, needle)
    else:
        assert r.exit_code == 0, r.stderr
        assert r.json()["metrics"]["ndcg@2"] > 0


def test_inputs_from_fifos_and_process_substitution(run_cli, tmp_path):
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(RUN_CSV))
    writer.start()
    t = tmp_path / "t.csv"
    t.write_text(TRUTH_CSV)
    r = run_cli("score", fifo, t, "--k", "2", "-f", "json")
    writer.join(5)
    assert r.exit_code == 0, r.stderr
    assert r.json()["users"]["evaluated"] == 2


def test_config_values_are_named_by_file_and_key(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.csv").write_text(RUN_CSV)
    (tmp_path / "t.csv").write_text(TRUTH_CSV)
    for text, needle in (("format = 3\n", "key 'format': 3 is not one of"),
                         ('rounds = "abc"\n', "key 'rounds': 'abc' is not a valid integer"),
                         ('quiet = "yes"\n', "key 'quiet': expected true or false")):
        (tmp_path / "rankeval.toml").write_text(text)
        _one_line_error(run_cli("score", "p.csv", "t.csv"), f"rankeval.toml: {needle}")
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "rankeval.toml").write_text('format = "json"\noutput = "report.json"\n')
    r = run_cli("score", "p.csv", "t.csv", "--config", sub / "rankeval.toml")
    assert r.exit_code == 0, r.stderr
    assert json.loads((sub / "report.json").read_text())["users"]["evaluated"] == 2


def test_validate_strict_counts_only_warnings_nobody_chose(run_cli, tmp_path):
    p, t = tmp_path / "p.csv", tmp_path / "t.csv"
    p.write_text(RUN_CSV)
    t.write_text(TRUTH_CSV + "u3,Z,0\n")  # u3 has no relevant item: a warning
    r = run_cli("validate", p, t, "--strict")
    assert r.exit_code == 2
    assert "can be scored, but --strict counts 1 warning as problems" in r.stderr
    chosen = run_cli("validate", p, t, "--strict", "--zero-relevant-users", "skip")
    assert chosen.exit_code == 0, chosen.stderr
    assert "(1 warning)" in chosen.stderr


def test_per_user_rows_follow_numbers_when_ids_are_numbers(run_cli, tmp_path):
    p, t = tmp_path / "p.csv", tmp_path / "t.csv"
    users = [1, 2, 10, 100, 11, -3, -20, 0]
    p.write_text("user_id,item_id,rank\n" + "".join(f"{u},A,1\n" for u in users))
    t.write_text("user_id,item_id\n" + "".join(f"{u},A\n" for u in users))
    r = run_cli("score", p, t, "--per-user", "-", "-q")
    assert [line.split(",")[0] for line in r.stdout.splitlines()[1:]] == [
        "-20", "-3", "0", "1", "2", "10", "11", "100"]
    p.write_text("user_id,item_id,rank\n" + "".join(f"{u},A,1\n" for u in ["007", "1e3", "+5"]))
    t.write_text("user_id,item_id\n" + "".join(f"{u},A\n" for u in ["007", "1e3", "+5"]))
    r = run_cli("score", p, t, "--per-user", "-", "-q")  # not canonical integers: as text
    assert [line.split(",")[0] for line in r.stdout.splitlines()[1:]] == ["+5", "007", "1e3"]


def test_compare_writes_every_runs_per_user_values(run_cli, tmp_path):
    out = tmp_path / "pairs.csv"
    r = run_cli("compare", SAMPLE / "preds.csv", SAMPLE / "preds.parquet", SAMPLE / "truth.csv",
                "-m", "ndcg@10", "--per-user", out, "-q")
    assert r.exit_code == 0, r.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "user_id,preds/ndcg@10,preds-2/ndcg@10"
    assert len(rows) == 299  # the 298 users compared
    assert all(a == b for _, a, b in (row.split(",") for row in rows[1:]))


def test_compat_names_take_k_by_one_rule(run_cli):
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--compat", "trec_eval",
                "-m", "recall,precision", "--k", "10", "-f", "json")
    assert sorted(r.json()["metrics"]) == ["precision@10", "recall@10"]
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--compat", "trec_eval",
                "-m", "recall,precision", "-f", "json")
    assert len(r.json()["metrics"]) == 18  # trec_eval's nine cut-offs for both


def test_convert_refuses_what_the_target_cannot_hold(run_cli, tmp_path):
    dup = tmp_path / "d.csv"
    dup.write_text("user_id,item_id,rank\nu1,A,1\nu1,B,2\nu1,A,3\n")
    _one_line_error(run_cli("convert", dup, tmp_path / "d.json"), "--dedupe")
    r = run_cli("convert", dup, tmp_path / "d.json", "--dedupe")
    assert r.exit_code == 0 and "wrote 2 rows" in r.stderr
    assert json.loads((tmp_path / "d.json").read_text()) == {"u1": {"A": 1, "B": 0.5}}
    spaced = tmp_path / "s.csv"
    spaced.write_text("user_id,item_id,rank\nu 1,A,1\n")
    _one_line_error(run_cli("convert", spaced, tmp_path / "s.run"), "TREC")
    _one_line_error(run_cli("convert", dup, tmp_path / "t.run", "--dedupe", "--tag", ""), "TREC")
    assert not (tmp_path / "s.run").exists() and not (tmp_path / "t.run").exists()
    t = tmp_path / "t.csv"
    t.write_text("user_id,item_id,relevance\nu1,A,1\nu1,A,2\n")
    _one_line_error(run_cli("convert", t, tmp_path / "t.qrels"), "more than once")


def test_sigterm_ends_the_run_with_143_and_no_temporary_file(tmp_path):
    """A SIGTERM while rankeval waits on its input: exit 143, one line, nothing left behind."""
    import signal
    import subprocess
    import sys
    import time

    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    (tmp_path / "t.csv").write_text(TRUTH_CSV)
    proc = subprocess.Popen([sys.executable, "-m", "rankeval", "score", str(fifo),
                             str(tmp_path / "t.csv"), "-o", str(tmp_path / "out.json")],
                            stderr=subprocess.PIPE, cwd=tmp_path)
    writer = open(fifo, "w")  # noqa: SIM115 (held open: rankeval waits for the rest)
    writer.write("user_id,item_id,rank\n")
    writer.flush()
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    writer.close()
    assert proc.returncode == 143, err
    assert err.decode().strip() == "rankeval: error: terminated"
    assert sorted(os.listdir(tmp_path)) == ["p.csv", "t.csv"]


def test_a_write_cut_by_a_signal_leaves_no_temporary_file(tmp_path):
    from rankeval.cli.app import _Terminated
    from rankeval.io.output import write_atomic

    def interrupted(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise _Terminated

    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(_Terminated):
        write_atomic(str(target), interrupted)
    assert os.listdir(tmp_path) == ["report.json"] and target.read_text() == "old"


@pytest.mark.parametrize("header, column", [
    ("q_id,doc_id,score", "ranx"), ("user_id:token,item_id:token,prob", "RecBole"),
    ("user,item,position", "position"), ("query_id,docno,pred_score", "pred_score"),
])
def test_other_tools_column_names_are_recognised(run_cli, tmp_path, header, column):
    p = tmp_path / "p.csv"
    order = "1,2" if header.endswith("position") else "0.9,0.1"
    first, second = order.split(",")
    p.write_text(f"{header}\nu1,A,{first}\nu1,B,{second}\n")
    t = tmp_path / "t.csv"
    t.write_text("user_id,item_id,relevance\nu1,A,1\n")
    r = run_cli("score", p, t, "-m", "mrr@1", "-f", "json")
    assert r.exit_code == 0, (column, r.stderr)
    assert r.json()["metrics"]["mrr@1"] == 1.0


def test_ascii_locale_and_odd_names_do_not_crash(tmp_path):
    import subprocess
    import sys

    name = tmp_path / "é\x1b[31m.csv"
    name.write_text(TRUTH_CSV)
    other = tmp_path / "p.csv"
    other.write_text("user_id,item_id,rank\nx,A,1\n")
    r = subprocess.run([sys.executable, "-m", "rankeval", "score", str(other), str(name)],
                       capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert r.returncode == 2
    err = r.stderr.decode("utf-8", "replace")
    assert err.count("\n") == 1 and "shares no user id" in err
    assert "\x1b" not in err and "\\x1b" in err  # the escape is shown, not sent


def test_a_file_name_that_is_not_utf8_and_dev_stdin(run_cli, tmp_path):
    import subprocess
    import sys

    odd = tmp_path / os.fsdecode(b"\xff-run.csv")
    odd.write_text(RUN_CSV)
    t = tmp_path / "t.csv"
    t.write_text(TRUTH_CSV)
    r = run_cli("score", odd, t, "--k", "2", "-f", "json")
    assert r.exit_code == 0, r.stderr
    piped = subprocess.run([sys.executable, "-m", "rankeval", "score", "/dev/stdin", str(t),
                            "--preds-format", "csv", "--k", "2", "-f", "json"],
                           input=RUN_CSV.encode(), capture_output=True)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["metrics"] == r.json()["metrics"]


# --- leakage said out loud (#46.8) ----------------------------------------------------------

@pytest.mark.parametrize("exclude", [(), ("--exclude-seen",)], ids=["popularity", "seen"])
def test_a_train_holding_truth_pairs_is_one_warning_with_count_and_share(run_cli, write,
                                                                         exclude):
    """Half the relevant truth pairs in training: counted and shared, once, whatever the
    option that made rankeval compare them."""
    preds = write("p.csv", "user_id,item_id,rank\nu1,A,1\nu1,B,2\nu2,C,1\nu2,D,2\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,A,1\nu1,B,1\nu2,C,1\nu2,E,1\nu2,F,0\n")
    train = write("train.csv", "user_id,item_id\nu1,A\nu2,C\nu2,F\nu3,A\n")
    r = run_cli("score", preds, truth, "--train", train, "-m", "ndcg@2", *exclude,
                "--exclude-seen-truth", "-f", "json")
    assert r.exit_code == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "in the training interactions" in line]
    assert len(lines) == 1
    assert "2 relevant truth pairs of" in lines[0] and "(50.0% of 4)" in lines[0]
    assert ("--exclude-seen drops those items" in lines[0]) == bool(exclude)
    (notice,) = [n for n in r.json()["notices"] if n["code"] == "train_holds_truth"]
    assert notice["count"] == 2


def test_a_train_without_truth_pairs_says_nothing(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nu1,A,1\nu1,B,2\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,A,1\n")
    train = write("train.csv", "user_id,item_id\nu1,B\n")
    r = run_cli("score", preds, truth, "--train", train, "--exclude-seen", "-m", "ndcg@2")
    assert r.exit_code == 0 and "training interactions" not in r.stderr


def test_exclude_seen_truth_on_the_whole_interactions_names_the_cause(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nu1,A,1\nu1,B,2\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,A,1\nu1,B,0\n")
    r = run_cli("score", preds, truth, "--train", truth, "--exclude-seen",
                "--exclude-seen-truth", "-m", "ndcg@2")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "every one of its 2 rows is a (user, item) pair of the training" in r.stderr
    assert "shares no user id" not in r.stderr
