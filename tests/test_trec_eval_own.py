"""trec_eval's own test suite, run through rankeval: each line of each version's `make
quicktest` (its Makefile runs trec_eval on the files of its test/ folder and diffs the output
against the expected file beside them), with that flag spelled as rankeval spells it, under the
version's preset. The inputs and each version's expected outputs are in
tests/data/trec_eval/trec_eval_test (data copied unchanged, with NIST's notice: its README).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from .test_trec_eval_versions import DATA

OWN = DATA / "trec_eval_test"

# Each version's quicktest lines, as its Makefile writes them: those both versions run, then
# those 10.0 adds, on its inputs with comment lines (9.0.8 stops on them). "test/" is the
# inputs' folder; results.comment.test is stored gzipped, which rankeval reads as it is.
BOTH = [
    "test/qrels.test test/results.test | diff - test/out.test",
    "-m all_trec test/qrels.test test/results.test | diff - test/out.test.a",
    "-m all_trec -q test/qrels.test test/results.test | diff - test/out.test.aq",
    "-m all_trec -q -c test/qrels.test test/results.trunc | diff - test/out.test.aqc",
    "-m all_trec -q -c -M100 test/qrels.test test/results.trunc | diff - test/out.test.aqcM",
    "-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test "
    "| diff - test/out.test.aql",
    "-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test "
    "| diff - test/out.test.prefs",
    "-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test "
    "| diff - test/out.test.qrels_prefs",
    "-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test "
    "| diff - test/out.test.qrels_jg",
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
    "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 test/qrels.test "
    "test/results.test | diff - test/out.test.meas_params",
    "-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test "
    "| diff - test/out.test.aqZ",
]
COMMENTS = [
    "test/qrels.test.with-comments test/results.test | diff - test/out.test",
    "test/qrels.comment.test test/results.comment.test | diff - test/out.comment.test",
    "-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test "
    "| diff - test/out.test.prefs",
    "-m qrels_jg -q -R qrels_jg  test/qrels.comments.123 test/results.test "
    "| diff - test/out.test.qrels_jg",
]
QUICKTEST = {"10.0": BOTH + COMMENTS, "9.0.8": BOTH}
COMPAT = {"10.0": "trec_eval", "9.0.8": "trec_eval-9"}
# trec_eval's -R formats as rankeval's options
FORMATS = {"prefs": "--preferences", "qrels_prefs": "--preferences",
           "qrels_jg": "--judgment-groups"}
# Each version's own files: its expected outputs, and its z-scores file (9.0.8's differs)
OWN_FILES = ("zscores_file",)


def _path(word: str, version: str) -> Path:
    name = word.removeprefix("test/")
    if name.startswith("out.") or name in OWN_FILES:
        return OWN / version / name
    stored = OWN / name
    return stored if stored.exists() else OWN / f"{name}.gz"


def ours(line: str, version: str) -> tuple[list[str], Path]:
    """A quicktest line as rankeval's arguments (after `score`), and its expected file."""
    command, expected = line.split("| diff - ")
    words = shlex.split(command)
    qrels, run, flags = words[-2], words[-1], words[:-2]
    out: list[str] = []
    i = 0
    while i < len(flags):
        flag, value = flags[i][:2], flags[i][2:]
        if flag in ("-m", "-M", "-l", "-R", "-Z") and not value:
            i += 1
            value = flags[i]
        out += {"-q": ["--per-query"], "-c": ["--no-skip-missing-users"],
                "-m": ["-m", value], "-M": ["--max-depth", value],
                "-l": ["--relevance-threshold", value],
                "-R": [FORMATS.get(value, value)],
                "-Z": ["--zscores", str(_path(value, version))]}[flag]
        i += 1
    return ([str(_path(run, version)), str(_path(qrels, version)), "--compat", COMPAT[version],
             "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec", *out],
            _path(expected.strip(), version))


def _missing_from_run(run: str) -> set[str]:
    import gzip

    opened = gzip.open(run, "rt") if run.endswith(".gz") else open(run)  # noqa: SIM115
    with opened as f:
        return {line.split()[0] for line in f if line.strip() and not line.startswith("#")}


CASES = [(version, line) for version, lines in QUICKTEST.items() for line in lines]


@pytest.mark.parametrize("version, line", CASES,
                         ids=[f"{v}-{i}" for v, lines in QUICKTEST.items()
                              for i in range(len(lines))])
def test_trec_eval_quicktest_line_for_line(run_cli, version, line):
    """rankeval prints what each line of the version's quicktest expects, byte for byte,
    but where docs/trec-eval.md says it differs on purpose: under -c -q, 9.0.8 prints no
    per-query lines for a query of the qrels missing from the run (rankeval prints them,
    value 0); those lines are taken out of rankeval's output, and only those."""
    args, expected = ours(line, version)
    r = run_cli("score", *args)
    assert r.exit_code == 0, r.stderr
    want, got = expected.read_text(), r.stdout
    if version == "9.0.8" and "-c" in line.split() and "-q" in line.split():
        listed = _missing_from_run(args[0])
        dropped = [row for row in got.splitlines(keepends=True)
                   if row.split("\t")[1] not in listed | {"all"}]
        assert dropped  # the case is still met: results.trunc leaves queries out
        got = "".join(row for row in got.splitlines(keepends=True) if row not in dropped)
    assert got == want


def test_every_expected_output_is_checked():
    """Every expected output stored for a version is compared by one of its lines, and every
    line's files are stored: the suite cannot shrink unnoticed."""
    for version, lines in QUICKTEST.items():
        named = {ours(line, version)[1].name for line in lines}
        stored = {p.name for p in (OWN / version).glob("out.*")}
        assert named == stored, (version, named ^ stored)
        for line in lines:
            args, expected = ours(line, version)
            assert expected.exists() and all(Path(a).exists() for a in args[:2])
