"""--zscores FILE is trec_eval's -Z FILE, line for line under both versions.

trec_eval -Z reads per query and measure a mean and standard deviation ('qid measure mean
stddev') and prints each value as its z-score, lines prefixed Z, the 'all' line the mean of
the z-scores (the sum for num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret; the exp of the
mean for gm_map and gm_bpref; num_q the count of queries). A pair the file lacks, or a standard
deviation of 0 with the value off the mean, is -1000000 in both versions, summed into the mean.

Both versions' outputs on the generated datasets of test_trec_eval_versions.py with the
generated z-scores files below are committed under tests/data/trec_eval/zscores/ (record.py
records them); each case compares the whole output, byte for byte.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from .test_trec_eval_versions import DATA, JG_DATASETS, MISSING, MISSING_JG, _ours, slug

ZDATA = DATA / "zscores"
# every name trec_eval prints under -m all_trec (10.0's: 9.0.8's and unj, rbp, rbp_resid),
# and yaap, the greatest in strcmp order: no query of the file lacks it (trec_eval's binary
# search looks one entry past a query's last, into the next query's first: a measure the
# file lacks for a query is looked up below the query's greatest, where that never happens)
NAMES = (["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
          "recip_rank"] + [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
         + [f"{m}_{k}" for m in ("P", "recall") for k in (5, 10, 15, 20, 30, 100, 200, 500,
                                                           1000)]
         + ["unj_5", "unj_10", "unj_20", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
            "11pt_avg", "ndcg"]
         + [f"relative_P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
         + [f"Rprec_mult_{m / 10:.2f}" for m in range(2, 21, 2)]
         + ["success_1", "success_5", "success_10"]
         + [f"{m}_{k}" for m in ("map_cut", "ndcg_cut") for k in (5, 10, 15, 20, 30, 100,
                                                                  200, 500, 1000)]
         + ["ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P",
            "set_map", "set_F", "num_nonrel_judged_ret", "yaap"])
QUERIES = [f"q{q:02d}" for q in range(1, 31)]
# gaps: q05 has no line at all; these queries lack these measures
LACKING = {"q06": ("map", "P_10"), "q08": ("ndcg_cut_10", "iprec_at_recall_0.00"),
           "q12": ("num_ret", "gm_map", "recip_rank"), "q19": ("P_5", "Rprec_mult_1.00")}


def write_zscores(folder: Path) -> None:
    """The z-scores files: ``full`` (every query of the datasets, every measure), ``gaps``
    (a query and some measures of others missing), ``nans`` (full's, with nan for some
    means and standard deviations, as trec_eval's own test file has them: NANS),
    ``numbered`` (full's under the numbered_qids dataset's ids) and ``groups`` (-R
    qrels_jg's measures). Means and
    standard deviations on each measure's scale (counts up to 60, gm_map's logs, utility's
    negative counts); standard deviations of 0: success_1 at mean 0 for some queries (their
    values 0 or 1: a z-score 0, or none), num_rel at 0 for q07 (nothing relevant: 0) and q09
    (none). Lines in a shuffled order, fields separated by spaces or tabs."""
    rng = random.Random(707)
    folder.mkdir(parents=True, exist_ok=True)
    for kind in ("full", "gaps", "nans"):
        lines = []
        for q in QUERIES:
            if kind == "gaps" and q == "q05":
                continue
            for name in NAMES:
                if kind == "gaps" and name in LACKING.get(q, ()):
                    continue
                if name.startswith("num_") or name == "utility":
                    mean, sd = rng.uniform(-30 if name == "utility" else 0, 40), rng.uniform(1, 15)
                elif name.startswith("gm_"):
                    mean, sd = rng.uniform(-6, 0), rng.uniform(0.5, 3)
                elif name == "yaap":
                    mean, sd = rng.uniform(-3, 1), rng.uniform(0.2, 2)
                else:
                    mean, sd = rng.uniform(0, 0.8), rng.uniform(0.02, 0.4)
                if (name == "success_1" and int(q[1:]) % 3 == 0) or (
                        name == "num_rel" and q in ("q07", "q09")):
                    mean, sd = 0.0, 0.0
                sep = "\t" if rng.random() < 0.2 else " " * rng.randint(1, 3)
                fields = [q, name, f"{mean:.4f}", f"{sd:.4f}"]
                if kind == "nans" and (q, name) in NANS:
                    fields[2:] = NANS[q, name]
                lines.append(sep.join(fields))
        rng.shuffle(lines)
        (folder / kind).write_text("\n".join(lines) + "\n")
    # numbered: full's lines under the numbered_qids dataset's query ids (write_dataset's)
    number = {f"q{q:02d}": str((q * 7919) % 9973 // (10 ** (q % 4))) for q in range(1, 31)}
    (folder / "numbered").write_text("".join(
        f"{number[q]} {rest}\n" for q, rest in (line.split(None, 1) for line in
                                             (folder / "full").read_text().splitlines())))
    # groups: -R qrels_jg's measures for its datasets' q01-q20; q09 missing, and q04's
    # map_avgjg (num_q, the greatest name, kept: see NAMES)
    lines = []
    for q in QUERIES[:20]:
        for name in ([f"P_avgjg_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
                     + [f"Rprec_mult_avgjg_{m / 10:.2f}" for m in range(2, 21, 2)]
                     + ["map_avgjg", "num_q"]):
            if q == "q09" or (q, name) == ("q04", "map_avgjg"):
                continue
            lines.append(f"{q} {name} {rng.uniform(0, 0.6):.4f} {rng.uniform(0.02, 0.4):.4f}")
    rng.shuffle(lines)
    (folder / "groups").write_text("\n".join(lines) + "\n")

# nans: (query, measure) -> the mean and standard deviation written (nan in either; with a
# standard deviation of 0, a nan mean is off every value); q04 and q09 retrieve only
# unjudged documents in the unjudged dataset (-J: their iprec_at_recall_0.00 is 0/0)
NANS = {("q01", "set_F"): ("nan", "nan"), ("q02", "set_F"): ("nan", "nan"),
        ("q10", "map"): ("0.2", "nan"), ("q11", "P_5"): ("nan", "0.1"),
        ("q12", "P_10"): ("nan", "0"), ("q04", "iprec_at_recall_0.00"): ("nan", "0.2"),
        ("q09", "iprec_at_recall_0.00"): ("0.3", "0.2")}


# (dataset, z-scores file, trec_eval's flags), each case for both versions unless marked
BOTH = [
    ("complete", "full", ["-q", "-m", "all_trec"]),
    ("complete", "gaps", ["-q", "-m", "all_trec"]),
    ("complete", "gaps", []),
    ("complete", "full", ["-q", "-m", "official"]),
    ("complete", "gaps", ["-q", "-m", "P.5,10", "-m", "gm_map", "-m", "num_q", "-m",
                          "relstring", "-m", "runid", "-m", "num_ret", "-m", "gm_bpref"]),
    ("complete", "gaps", ["-q", "-l", "2", "-M", "10", "-m", "ndcg_cut.5,10", "-m", "map",
                          "-m", "utility.2,-1,0,0", "-m", "success"]),
    ("complete", "gaps", ["-q", "-n", "-m", "map", "-m", "num_rel"]),
    ("complete", "gaps", ["-m", "all_trec"]),
    ("unjudged", "gaps", ["-q", "-J", "-m", "all_trec"]),
    ("missing", "gaps", ["-c", "-q", "-m", "all_trec"]),
    ("missing", "full", ["-c"]),
    ("missing", "gaps", ["-c", "-m", "map", "-m", "gm_map", "-m", "num_rel", "-m", "P.5"]),
    ("complete", "nans", ["-q", "-m", "all_trec"]),
    ("unjudged", "nans", ["-q", "-J", "-m", "official"]),
    # query ids that are numbers: looked up as text, printed in strcmp order
    ("numbered_qids", "numbered", ["-q", "-m", "official"]),
    ("numbered_qids", "numbered", ["-q", "-c", "-m", "all_trec"]),
    # -R qrels_jg (--judgment-groups): its measures' names, P_avgjg_5, map_avgjg
    ("judgment_groups", "groups", ["-q", "-m", "qrels_jg"]),
    ("judgment_groups", "groups", ["-J", "-m", "qrels_jg"]),
    ("judgment_groups_missing", "groups", ["-c", "-q", "-m", "qrels_jg"]),
]
NINE_ONLY = [("missing", "gaps", ["-q", "-m", "all_trec"])]  # 10.0 stops without -c
ZCASES = {"9": BOTH + NINE_ONLY, "10": BOTH}


def output(version: str, name: str, zfile: str, flags: list[str]) -> Path:
    return ZDATA / name / f"trec_eval-{version}_Z_{zfile}{slug(flags)}.txt"


def record(nine: str, ten: str) -> None:
    """Record both versions' outputs (record.py)."""
    write_zscores(ZDATA)
    for old in ZDATA.glob("*/trec_eval-*.*"):
        old.unlink()
    for version, binary in (("9", nine), ("10", ten)):
        for name, zfile, flags in ZCASES[version]:
            folder = DATA / name
            groups = ["-R", "qrels_jg"] if name in JG_DATASETS else []
            run = subprocess.run([binary, *groups, "-Z", str(ZDATA / zfile), *flags,
                                  str(folder / "qrels"), str(folder / "run")],
                                 capture_output=True, text=True, check=True)
            path = output(version, name, zfile, flags)
            path.parent.mkdir(exist_ok=True)
            path.write_text(run.stdout)


def _known(version: str, name: str, flags: list[str], theirs: list[str], ours: list[str]):
    """Where rankeval differs on purpose (docs/trec-eval.md): under -c both versions' summary
    num_rel is the count of the qrels' relevant documents, not z-scored (rankeval's is the
    sum of the per-query z-scores); 9.0.8 prints no per-query lines for a query missing from
    the run under -c -q (rankeval prints its z-scores)."""
    if "-c" in flags:
        theirs, ours = ([line for line in lines if not line.startswith("Znum_rel  ")
                         or "\tall\t" not in line] for lines in (theirs, ours))
    if version == "9" and "-c" in flags and "-q" in flags:
        missing = {**MISSING, **MISSING_JG}.get(name, set())
        ours = [line for line in ours if line.split("\t")[1] not in missing]
    return theirs, ours


@pytest.mark.parametrize("version, name, zfile, flags",
                         [(v, *case) for v, cases in ZCASES.items() for case in cases],
                         ids=[f"{v}-{n}-{z}{slug(f)}" for v, cases in ZCASES.items()
                              for n, z, f in cases])
def test_zscores_are_trec_eval_Z_line_for_line(run_cli, version, name, zfile, flags):
    folder = DATA / name
    expected = output(version, name, zfile, flags).read_text()
    compat = "trec_eval" if version == "10" else "trec_eval-9"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", compat, "--preds-format",
                "trec", "--truth-format", "qrels", "-f", "trec", "--zscores", ZDATA / zfile,
                *(["--judgment-groups"] if name in JG_DATASETS else []), *_ours(flags))
    assert r.exit_code == 0, r.stderr
    theirs, ours = _known(version, name, flags, expected.splitlines(), r.stdout.splitlines())
    assert ours == theirs


def test_the_oracle_holds_what_the_cases_are_for():
    """The recorded outputs hold -1000000 (a pair missing from the file, a standard deviation
    of 0 off the mean) and z-scores of 0 (on the mean), Z lines for the counts with 4
    decimals, and relstring and runid without a Z."""
    for version in ZCASES:
        text = output(version, "complete", "gaps", ["-q", "-m", "all_trec"]).read_text()
        assert "\t-1000000.0000\n" in text and "Zsuccess_1             \tq03\t0.0000" in text
        assert "Znum_ret               \tall\t" in text
        assert "\nZnum_q                 \tall\t30.0000\n" in text
        special = output(version, "complete", "gaps", BOTH[4][2]).read_text()
        assert "\nrelstring             \tq01\t'" in special
        assert "\nrunid                 \tall\t" in special


def _json(run_cli, *extra):
    folder = DATA / "complete"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", "trec_eval",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "json",
                "-m", "map", "-m", "P.5", *extra)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout), r.stderr


def test_other_reports_name_zscores_and_leave_missing_ones_undefined(run_cli, tmp_path):
    """Outside -f trec the values are z-scores under their metrics' names, and the report
    says so: the setting (the file) in the JSON's settings and the footer of the table. A
    pair the file lacks is undefined (never -1000000): the mean is over the other users, and
    a warning counts the pairs."""
    plain, _ = _json(run_cli)
    z, err = _json(run_cli, "--zscores", ZDATA / "gaps")
    assert plain["settings"].get("zscores") is None
    assert z["settings"]["zscores"] == str(ZDATA / "gaps")
    # q05 lacks everything, q06 map, q19 P_5: each metric's mean is over the rest
    assert "4 (user, metric) pairs without a z-score" in err
    assert z["users"]["evaluated"] == 30
    folder = DATA / "complete"
    table = run_cli("score", folder / "run", folder / "qrels", "--compat", "trec_eval",
                    "--preds-format", "trec", "--truth-format", "qrels", "-m", "map",
                    "--zscores", ZDATA / "gaps")
    assert f"z-scores against {ZDATA / 'gaps'}" in table.stdout, table.stdout
    # the means under the worst and best order of ties are of plain values: left out
    assert "tie sensitivity" not in table.stdout and z["ties"] is None, z["ties"]
    lines = run_cli("score", folder / "run", folder / "qrels", "--preds-format", "trec",
                    "--truth-format", "qrels", "-m", "ndcg@10", "-m", "num_q", "-f", "csv",
                    "--zscores", ZDATA / "gaps").stdout.splitlines()
    assert lines[1].startswith("ndcg@10,") and lines[1].endswith(",zscore"), lines
    assert lines[2].endswith(",per_user"), lines  # num_q counts users: not z-scored
    text = run_cli("score", folder / "run", folder / "qrels", "--preds-format", "trec",
                   "--truth-format", "qrels", "-m", "ndcg@10", "-f", "ir_measures",
                   "--compat", "trec_eval",  # the file's names: trec_eval's (ndcg_cut_10)
                   "--zscores", ZDATA / "gaps").stdout
    assert text.startswith("ZnDCG@10\t"), text
    assert z["metrics"]["map@all"] != plain["metrics"]["map@all"]


def test_zscores_of_the_library_match_the_formula(tmp_path):
    """rankeval.evaluate(zscores=FILE), rankeval's own names: each user's value is (value -
    mean) / stddev against the file's line for (user, metric); the overall value their mean,
    and a user the file lacks is left out of it."""
    import pandas as pd

    import rankeval

    run = pd.DataFrame({"user_id": ["a", "a", "b", "b", "c"],
                        "item_id": ["x", "y", "x", "z", "x"],
                        "score": [2.0, 1.0, 2.0, 1.0, 1.0]})
    truth = pd.DataFrame({"user_id": ["a", "b", "c"], "item_id": ["y", "x", "x"],
                          "relevance": [1, 1, 1]})
    plain = rankeval.evaluate(run, truth, ["precision@1", "mrr@all"])
    z = tmp_path / "z"
    z.write_text("a precision@1 0.5 0.25\nb precision@1 0.5 0.5\nc precision@1 1 0\n"
                 "a mrr@all 0.2 0.1\nb mrr@all 1 0\n")
    ev = rankeval.evaluate(run, truth, ["precision@1", "mrr@all"], zscores=str(z))
    got = ev.per_user.set_index("user_id")
    before = plain.per_user.set_index("user_id")
    assert before.loc["a", "precision@1"] == 0.0 and before.loc["b", "precision@1"] == 1.0
    assert got.loc["a", "precision@1"] == (0.0 - 0.5) / 0.25
    assert got.loc["b", "precision@1"] == (1.0 - 0.5) / 0.5
    assert got.loc["c", "precision@1"] == 0.0  # on the mean, stddev 0
    assert got.loc["a", "mrr@all"] == pytest.approx((0.5 - 0.2) / 0.1)
    assert got.loc["b", "mrr@all"] == 0.0 and pd.isna(got.loc["c", "mrr@all"])
    assert ev.metrics["mrr@all"] == pytest.approx(((0.5 - 0.2) / 0.1 + 0.0) / 2)
    assert ev.metrics["precision@1"] == pytest.approx((-2.0 + 1.0 + 0.0) / 3)
    assert ev.settings.to_dict()["zscores"] == str(z)
    assert [n.code for n in ev.notices if n.code == "zscores_undefined"] == [
        "zscores_undefined"]


BAD = {
    "three fields": ("q01 map 0.5\n", "line 1 has 3 fields, not 4"),
    "five fields": ("q01 map 0.5 0.1\nq02 map 0.5 0.1 7\n", "line 2 has 5 fields, not 4"),
    "a blank line": ("q01 map 0.5 0.1\n\nq02 map 0.5 0.1\n", "line 2 is blank"),
    "a word for a mean": ("q01 map 0.5 0.1\nq01 P_5 high 0.1\n",
                          "line 2: the mean 'high' is not a finite number"),
    "a word for a deviation": ("q01 map 0.5 x\n",
                               "line 1: the standard deviation 'x' is not a finite number"),
    "inf": ("q01 map 0.5 inf\n", "line 1: the standard deviation 'inf' is not a finite"),
    "-inf": ("q01 map -inf 0.5\n", "line 1: the mean '-inf' is not a finite number or nan"),
    "a negative deviation": ("q01 map 0.5 -0.1\n", "line 1: a standard deviation is >= 0"),
    "a pair twice": ("q01 map 0.5 0.1\nq02 map 0.5 0.1\nq01\tmap 0.4 0.2\n",
                     "line 3 gives qid 'q01' and measure 'map' again (line 1)"),
    "nothing": ("", "is empty"),
    "not utf-8": (b"q01 map 0.5 0.1\nq\xff map 0.5 0.1\n", "line 2 is not valid utf-8"),
}


@pytest.mark.parametrize("content, message", BAD.values(), ids=list(BAD))
def test_a_bad_zscores_file_is_one_line_naming_its_line(run_cli, tmp_path, content, message):
    """Every kind of bad line: one line on stderr naming the file and the line, exit 2 (where
    trec_eval reads a word as 0, a negative deviation as one, and a pair twice as either)."""
    z = tmp_path / "z.txt"
    z.write_bytes(content if isinstance(content, bytes) else content.encode())
    folder = DATA / "complete"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", "trec_eval",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec",
                "--zscores", z)
    assert r.exit_code == 2 and r.stdout == "", r.stdout
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"rankeval: error: {z}: ") and message in r.stderr, r.stderr


def test_a_missing_zscores_file_is_one_line(run_cli, tmp_path):
    folder = DATA / "complete"
    r = run_cli("score", folder / "run", folder / "qrels", "--preds-format", "trec",
                "--truth-format", "qrels", "--zscores", tmp_path / "nope")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "nope" in r.stderr and "Traceback" not in r.stderr


def test_zscores_refuse_what_has_no_value_per_user(run_cli):
    """A metric of the run as a whole has no per-user value to z-score: one line, exit 2."""
    folder = DATA / "complete"
    r = run_cli("score", folder / "run", folder / "qrels", "--preds-format", "trec",
                "--truth-format", "qrels", "-m", "personalization@10", "--zscores", ZDATA / "full")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "personalization@10" in r.stderr and "--zscores" in r.stderr


@pytest.mark.parametrize("command", ["validate", "compare", "power", "agree"])
def test_zscores_are_refused_by_the_commands_that_report_plain_values(run_cli, command):
    """Only score (and rankeval.evaluate) turns values into z-scores: every other command
    that takes the setting refuses it with one line, never reporting plain values as if."""
    folder = DATA / "complete"
    files = {"validate": ["run", "qrels"], "compare": ["run", "run", "qrels"],
             "power": ["run", "run", "qrels"], "agree": ["qrels", "qrels"]}[command]
    formats = (["--truth-format", "qrels"] if command == "agree" else
               ["--preds-format", "trec", "--truth-format", "qrels", "-m", "ndcg@10"])
    r = run_cli(command, *(folder / f for f in files), *formats, "--zscores", ZDATA / "full")
    assert r.exit_code == 2 and "--zscores" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_zscores_refuse_a_stochastic_run(tmp_path):
    """Several sampled rankings per user have a spread in the metric's units, which a z-score
    would leave unscaled: refused with one error naming the option."""
    import pandas as pd

    import rankeval
    from rankeval.errors import OptionError

    run = pd.DataFrame({"user_id": ["a"] * 4, "sample": [0, 0, 1, 1],
                        "item_id": ["x", "y", "y", "x"], "rank": [1, 2, 1, 2]})
    truth = pd.DataFrame({"user_id": ["a"], "item_id": ["x"], "relevance": [1]})
    z = tmp_path / "z"
    z.write_text("a ndcg@2 0.5 0.1\n")
    assert rankeval.evaluate(run, truth, "ndcg@2").samples is not None
    with pytest.raises(OptionError, match="stochastic run"):
        rankeval.evaluate(run, truth, "ndcg@2", zscores=str(z))
