"""--compat trec_eval is trec_eval 10.0 and --compat trec_eval-9 is 9.0.8, line for line.

Both versions were built from the public source and run on the generated cases below; their
outputs are committed under tests/data/trec_eval/ (figures only; record.py says how to make
them again). Every case runs rankeval with the same flags in its spelling and compares the
whole output, byte for byte: numbers to trec_eval's 4 decimals, names, order, the runid and
num_q lines, per-query lines.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "trec_eval"
# complete: every query of the qrels is in the run (trec_eval 10.0 stops with an error
# otherwise unless -c); missing: queries only in the qrels and only in the run; unjudged:
# every query in the run, some retrieving only unjudged documents (-J empties their lists:
# trec_eval's 0/0, printed -nan)
DATASETS = {"complete": 101, "missing": 202, "unjudged": 303}
EMPTIED = (4, 9, 16, 25)  # the unjudged dataset's queries that retrieve no judged document

MEASURES = [
    [],
    ["-q"],
    ["-c"],
    ["-c", "-q"],
    ["-l", "2"],
    ["-M", "5"],
    ["-J"],
    ["-q", "-J", "-M", "20"],
    ["-m", "ndcg", "-m", "ndcg_cut", "-m", "P", "-m", "recall", "-m", "success",
     "-m", "map_cut"],
    ["-m", "set_P", "-m", "set_recall", "-m", "set_F", "-m", "Rprec_mult", "-m", "bpref",
     "-m", "recip_rank", "-m", "iprec_at_recall", "-m", "num_rel_ret"],
    ["-q", "-m", "ndcg_cut.20,3", "-m", "P.10,5", "-m", "success.2", "-m", "gm_map"],
    ["-q", "-m", "set_map", "-m", "set_relative_P", "-m", "relative_P", "-m", "11pt_avg",
     "-m", "num_nonrel_judged_ret", "-m", "gm_bpref"],
    ["-J", "-M", "7", "-l", "2", "-m", "11pt_avg", "-m", "relative_P.3,7", "-m", "gm_bpref"],
    ["-q", "-m", "binG", "-m", "G", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "infAP",
     "-m", "utility", "-m", "num_q", "-m", "runid", "-m", "yaap"],
    ["-J", "-l", "2", "-M", "12", "-m", "binG", "-m", "G", "-m", "ndcg_rel", "-m", "Rndcg",
     "-m", "infAP"],
    ["-m", "set"],
    ["-q", "-m", "official"],
    ["-m", "all_trec"],
    ["-q", "-m", "all_trec"],
    ["-c", "-J", "-l", "2", "-m", "all_trec"],
    ["-q", "-n", "-m", "official", "-m", "ndcg_cut.10"],
    ["-n"],  # no summary and no per-query lines: nothing, exit 0
    ["-m", "ndcg_cut.1=2,2=4"],  # gains where cut-offs are read: atol makes them 1 and 2
    # a measure named again keeps its first parameters
    ["-m", "P", "-m", "P.5,20", "-m", "P.10", "-m", "iprec_at_recall", "-m",
     "iprec_at_recall.0.5", "-m", "official"],
    # parameters in trec_eval's syntax: cut-offs (read by atol: 23.4 is 23), levels, lists of
    # numbers printed as typed, NAME=VALUE gains
    ["-q", "-m", "iprec_at_recall..10,.25,.75", "-m", "P.5,7,3", "-m", "Rprec_mult.5.0,0.2",
     "-m", "11pt_avg..25,.5,.75", "-m", "ndcg.1=3,2=9,3=12", "-m", "ndcg_cut.10,20,23.4",
     "-m", "success.2,5,20", "-m", "set_F.0.5", "-m", "utility.2,-1,0,0"],
    ["-J", "-l", "2", "-N", "500", "-m", "utility.1,-2,0.5,0.25", "-m", "G.1=2,2=5,3=6",
     "-m", "Rndcg.1=2", "-m", "ndcg_rel.2=7,3=9", "-m", "11pt_avg.0.3,0.6", "-m", "set_F.2"],
    ["-q", "-M", "10", "-m", "ndcg.2=3", "-m", "Rndcg"],
    # -l 0: every judged document relevant, grade 0 included (q07's are all 0: Rndcg's 0/0),
    # a document outside the qrels never
    ["-l", "0"],
    ["-q", "-l", "0", "-m", "all_trec"],
    ["-q", "-l", "4", "-m", "all_trec"],  # above every grade: nothing relevant anywhere
    ["-c", "-q", "-J", "-l", "0", "-m", "all_trec"],
    ["-q", "-l", "0", "-M", "8", "-m", "Rndcg.1=0,2=0,3=0", "-m", "ndcg.1=1,2=2,3=5",
     "-m", "bpref"],
    # relstring: per query, the grades of the top N (after -M and -J), '-' outside the qrels;
    # nothing without -q; alone, or with runid alone
    ["-q", "-m", "relstring"],
    ["-m", "relstring"],
    ["-q", "-J", "-M", "7", "-m", "relstring.20", "-m", "P.5"],
    ["-q", "-l", "0", "-m", "relstring.3", "-m", "runid"],
    ["-q", "-m", "relstring.2.5", "-m", "recall.5", "-m", "num_ret"],
    ["-m", "runid"],
]
TEN_ONLY = [["-m", "rbp"], ["-q", "-l", "3", "-m", "rbp", "-m", "P.5"],
            ["-q", "-m", "unj", "-m", "rbp_resid", "-m", "unj.3,50"],
            ["-M", "5", "-m", "rbp_resid", "-m", "unj"],
            ["-q", "-l", "2", "-m", "dcg", "-m", "ideal_dcg", "-m", "yaap"],
            # 10.0's rbp scales gains with bounds it never sets (m_rbp.c: min, max), so its
            # values change with the measures computed before it: rbp is kept apart here
            ["-q", "-M", "10", "-m", "rbp.p=0.5", "-m", "rbp_resid.p=0.95"],
            # 10.0's gain syntax for dcg and ideal_dcg (9.0.8 has neither); one at a time, as
            # 10.0 aborts (a double free) with two measures of gains
            ["-q", "-m", "dcg.1=2,2=4,3=6"], ["-q", "-l", "2", "-m", "ideal_dcg.1=2,3=7"],
            ["-q", "-l", "0", "-m", "rbp"],
            ["-q", "-l", "0", "-m", "dcg", "-m", "ideal_dcg", "-m", "unj", "-m", "rbp_resid"]]


# Datasets made from complete's with one thing each version accepts or refuses, and their
# cases: '#' comment lines (10.0 reads them, 9.0.8 stops); an item listed twice in a query
# only in the run; twice in q01's list, the second copy last (refused, unless -M cuts it off);
# judged twice in a query missing from the run (9.0.8 never looks; 10.0 under -c scores the
# query, and stops); judged 0 twice in a query of both; grades 12 and -1.
EDGES = {
    "comments": [[], ["-q", "-m", "all_trec"]],
    "dup_run_only": [[], ["-q"]],
    "dup_deep": [[], ["-M", "5"], ["-q", "-M", "5"], ["-M", "5", "-J"]],
    "dup_qrels_missing": [["-c"], ["-c", "-q"], ["-c", "-m", "num_rel", "-m", "P.5"]],
    "dup_qrels_zero": [[], ["-c"]],
    # grades above 9 and negative ones (in the pool, unjudged): relstring's '>' and '.'
    "odd_grades": [["-q", "-m", "relstring.30"], ["-q", "-J", "-m", "relstring.15"],
                   ["-q", "-m", "all_trec"]],
    # query ids that are plain numbers of several lengths: both versions print the queries
    # in strcmp order (1000 before 301), where rankeval's other reports order them by number
    "numbered_qids": [["-q"], ["-q", "-c", "-m", "all_trec"]],
}


# trec_eval's -R qrels_jg: qrels whose second field is a judgment group (a judge); its
# measures score each group's judgments apart and average them per query. Datasets: every
# query of the qrels in the run (one to three groups each, a group that judged nothing
# relevant, q07 nothing relevant in any group), and the same with queries only in the qrels
# and only in the run. Both versions refuse a measure of plain qrels under -R qrels_jg (the
# default, official, among them), and 10.0 a query missing from the run without -c.
JG_DATASETS = {"judgment_groups": 404, "judgment_groups_missing": 505}
JG_CASES = [
    ["-m", "qrels_jg"],
    ["-q", "-m", "qrels_jg"],
    ["-q", "-m", "P_avgjg.3,7", "-m", "map_avgjg", "-m", "Rprec_mult_avgjg.0.5,1.5"],
    ["-J", "-m", "qrels_jg"],
    ["-q", "-J", "-M", "15", "-m", "qrels_jg"],
    ["-q", "-M", "10", "-l", "2", "-m", "qrels_jg"],
    ["-q", "-l", "0", "-m", "map_avgjg", "-m", "P_avgjg.5"],
    ["-m", "Rprec_mult_avgjg", "-m", "P_avgjg", "-m", "runid"],
    [],
    ["-m", "map"],
    ["-m", "map_avgjg", "-m", "P.5"],
]


def _jg_cases(version: str) -> list[tuple[str, list[str]]]:
    """Every case on both datasets; on the one with missing queries also with -c, and only
    so for 10.0 (which stops without it, where rankeval scores: as for plain qrels)."""
    out = []
    for name in JG_DATASETS:
        for f in JG_CASES:
            missing = name.endswith("missing")
            if not (missing and version == "10" and f):
                out.append((name, f))
            if missing and f:
                out.append((name, ["-c", *f]))
    return out


JG = {version: _jg_cases(version) for version in ("9", "10")}


def write_jg_dataset(name: str, folder: Path) -> None:
    """qrels_jg (qid group docno grade) and a run: graded judgements 0-3 by one to three
    groups per query over one pool, tied scores, lists of 5 to 60 documents."""
    rng = random.Random(JG_DATASETS[name])
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = [], []
    for q in range(1, 21):
        qid = f"q{q:02d}"
        docs = [f"d{d:03d}" for d in rng.sample(range(300), 70)]
        for g in range(q % 3 + 1):
            for d in rng.sample(docs[:50], rng.randint(10, 40)):
                nothing = q == 7 or (q == 5 and g == 1)
                rel = 0 if nothing else rng.choice([0, 0, 0, 1, 1, 2, 3])
                qrels.append(f"{qid} jg{g} {d} {rel}")
        if name.endswith("missing") and q in (3, 11):
            continue  # only in the qrels
        for rank, d in enumerate(rng.sample(docs, rng.randint(5, 60)), 1):
            run.append(f"{qid} Q0 {d} {rank} {round(rng.uniform(0, 5), 1)} tag{q % 3}")
    if name.endswith("missing"):
        run += [f"x{q} Q0 d001 1 1.0 tag0" for q in range(3)]  # only in the run
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    (folder / "run").write_text("\n".join(run) + "\n")


# trec_eval's -R prefs (qid jg subgroup docno level: preferences between the documents of a
# subgroup, by level) and -R qrels_prefs (plain qrels read as preferences), with the prefs_*
# measures: both versions' outputs recorded, which --preferences reproduces
# (tests/test_trec_eval_prefs.py). The preferences: one to three
# judges (groups) per query, each with a level per document (0.0: non-relevant) given in one
# to three subgroups, so that a judge never contradicts itself (trec_eval stops then) while
# judges disagree; a run with tied scores.
PREFS = {"preferences": (["-R", "prefs"], [["-m", "prefs"], ["-q", "-m", "all_prefs"],
                                          ["-J", "-m", "all_prefs"],
                                          ["-q", "-M", "10", "-m", "all_prefs"],
                                          [], ["-m", "map"]]),
         "complete": (["-R", "qrels_prefs"], [["-m", "all_prefs"], ["-q", "-m", "prefs"],
                                             ["-q", "-l", "2", "-m", "all_prefs"]])}


def write_prefs_dataset(folder: Path) -> None:
    """The preferences dataset (see PREFS): its prefs file and run."""
    rng = random.Random(606)
    folder.mkdir(parents=True, exist_ok=True)
    prefs, run = [], []
    for q in range(1, 16):
        qid = f"q{q:02d}"
        docs = [f"d{d:03d}" for d in rng.sample(range(300), 40)]
        for g in range(q % 3 + 1):
            level = {d: rng.choice([0.0, 0.0, 1.0, 2.0, 3.0, 4.5]) for d in docs[:30]}
            for sub in range(rng.randint(1, 3)):
                prefs += [f"{qid} jg{g} sub{sub} {d} {level[d]}"
                          for d in rng.sample(docs[:30], rng.randint(2, 12))]
        for rank, d in enumerate(rng.sample(docs, rng.randint(5, 40)), 1):
            run.append(f"{qid} Q0 {d} {rank} {round(rng.uniform(0, 5), 1)} tag{q % 3}")
    (folder / "qrels").write_text("\n".join(prefs) + "\n")
    (folder / "run").write_text("\n".join(run) + "\n")


def _cases(version: str) -> list[tuple[str, list[str]]]:
    flags = MEASURES + (TEN_ONLY if version == "10" else [])
    out = [("complete", f) for f in TEN_ONLY] if version == "9" else []  # 9.0.8 refuses
    out += [(name, f) for name, cases in EDGES.items() for f in cases]
    if version == "9":  # and without -c
        out += [("dup_qrels_missing", [])]
    for name in DATASETS:
        for f in flags:
            if version == "10" and name == "missing" and "-c" not in f:
                f = ["-c", *f]  # 10.0 without -c exits 4 on a query missing from the run
            if (name, f) not in out:
                out.append((name, f))
    return out


CASES = {version: _cases(version) for version in ("9", "10")}


def refused(version: str, name: str, flags: list[str]) -> bool:
    """Whether the version stopped on the case (record.py keeps its status beside it)."""
    return (DATA / name / f"trec_eval-{version}{slug(flags)}.exit").exists()


def slug(flags: list[str]) -> str:
    return "".join(f"_{f.lstrip('-').replace(',', '-').replace('.', '_')}" for f in flags)


def write_dataset(name: str, folder: Path) -> None:
    """A qrels and a run: graded judgements 0-3, unjudged documents, tied scores, lists of
    5 to 60 documents, a query judged with nothing relevant."""
    rng = random.Random(DATASETS.get(name, DATASETS["complete"]))
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = [], []
    for q in range(1, 31):
        qid = f"q{q:02d}"
        docs = [f"d{d:03d}" for d in rng.sample(range(400), 80)]
        judged = docs[:50]
        for d in judged:
            rel = 0 if q == 7 else rng.choice([0, 0, 0, 1, 1, 2, 3])
            qrels.append(f"{qid} 0 {d} {rel}")
        if name == "missing" and q in (3, 11, 19, 27):
            continue  # only in the qrels
        ranked = rng.sample(docs, rng.randint(5, 60))
        if name == "unjudged" and q in EMPTIED:
            ranked = docs[50:50 + len(ranked) % 30 + 1]  # the 30 documents nobody judged
        for rank, d in enumerate(ranked, 1):
            run.append(f"{qid} Q0 {d} {rank} {round(rng.uniform(0, 5), 1)} tag{q % 3}")
    if name == "missing":
        run += [f"x{q} Q0 d001 1 1.0 tag0" for q in range(3)]  # only in the run
    if name == "comments":
        qrels = ["# judged by hand", *qrels[:40], "#  a comment", *qrels[40:]]
        run = ["#run", *run[:100], "# more", *run[100:]]
    if name == "dup_run_only":
        run += ["zz Q0 d001 1 2.0 tag0", "zz Q0 d001 2 1.0 tag0"]
    if name == "dup_deep":
        top = run[0].split()
        run.insert(1, f"{top[0]} Q0 {top[2]} 99 -9.5 tag1")
    if name == "dup_qrels_missing":
        qrels += ["q99 0 d001 1", "q99 0 d001 1", "q99 0 d002 2"]
    if name == "odd_grades":
        qrels = [f"{line[:-2]} 12" if i % 9 == 1 else f"{line[:-2]} -1" if i % 7 == 3 else line
                 for i, line in enumerate(qrels)]
    if name == "numbered_qids":  # q01 -> 7, q02 -> 30, ...: lengths 1 to 4, out of order
        number = {f"q{q:02d}": str((q * 7919) % 9973 // (10 ** (q % 4))) for q in range(1, 31)}
        qrels, run = ([f"{number[line.split()[0]]} {line.split(' ', 1)[1]}" for line in lines]
                      for lines in (qrels, run))
    if name == "dup_qrels_zero":
        zero = next(line for line in qrels if line.startswith("q01 ") and line.endswith(" 0"))
        qrels.append(zero)
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    (folder / "run").write_text("\n".join(run) + "\n")


def _ours(flags: list[str]) -> list[str]:
    """trec_eval's flags in rankeval's spelling."""
    spelled = {"-q": ["--per-query"], "-c": ["--no-skip-missing-users"], "-J": ["--judged-only"],
               "-n": ["--no-summary"]}
    out, i = [], 0
    while i < len(flags):
        f = flags[i]
        if f in ("-l", "-M", "-m", "-N"):
            name = {"-l": "--relevance-threshold", "-M": "--max-depth", "-m": "-m",
                    "-N": "--collection-size"}[f]
            out += [name, flags[i + 1]]
            i += 2
            continue
        out += spelled[f]
        i += 1
    return out


MISSING_FROM_RUN = {"q03", "q11", "q19", "q27"}
MISSING = {"missing": MISSING_FROM_RUN, "dup_qrels_missing": {"q99"}}  # by dataset


def _known(version: str, name: str, flags: list[str], theirs: list[str], ours: list[str]):
    """The lines where rankeval differs from trec_eval on purpose, taken out of both sides
    (docs/trec-eval.md lists them): under -c, both versions' summary num_rel counts the
    relevance > 0 of the qrels whatever -l (their per-query lines follow -l; rankeval's
    summary is their sum); 9.0.8 prints no per-query lines for a query missing from the run
    under -c -q; 10.0 under -c scores such a query on a made-up one-document ranking, which
    gives iprec_at_recall_0.00 -nan with -J, and a utility, rbp_resid and relstring with
    parameters the values of that ranking."""
    if "-c" in flags and "-l" in flags:
        theirs, ours = ([line for line in lines if not (line.startswith("num_rel ")
                                                        and "\tall\t" in line)]
                        for lines in (theirs, ours))
    if name not in MISSING or "-c" not in flags:
        return theirs, ours
    if version == "9" and "-q" in flags:
        ours = [line for line in ours if line.split("\t")[1] not in MISSING[name]]
    if version == "10":
        # ... and clears that ranking's utility, rbp_resid and relstring by their bare names
        # only, so that with parameters (utility_2,-1,0,0; rbp_resid_p=0.95; relstring_3) a
        # missing query keeps the values of one document outside the qrels retrieved, in its
        # lines and the mean (relstring_3 '-')
        bogus = {i for i, line in enumerate(theirs) if line.startswith(
            ("utility_", "rbp_resid_", "relstring_"))
                 and line.split("\t")[1] in MISSING_FROM_RUN | {"all"}}
        theirs = [line for i, line in enumerate(theirs) if i not in bogus]
        ours = [line for i, line in enumerate(ours) if i not in bogus]
        odd = [i for i, line in enumerate(theirs) if line.endswith("-nan")]
        if "-m" not in flags and "-J" in flags:
            assert odd  # the quirk is still in the recorded output
        theirs = [line for i, line in enumerate(theirs) if i not in odd]
        ours = [line for i, line in enumerate(ours) if i not in odd]
    return theirs, ours


@pytest.mark.parametrize("version, name, flags",
                         [(v, n, f) for v, cases in CASES.items() for n, f in cases],
                         ids=[f"{v}-{n}{slug(f)}" for v, cases in CASES.items()
                              for n, f in cases])
def test_output_is_trec_eval_line_for_line(run_cli, version, name, flags):
    """Where the version stopped (its exit status is recorded beside its output), rankeval
    refuses with one line and exit 2; else their outputs are the same."""
    folder = DATA / name
    expected = (folder / f"trec_eval-{version}{slug(flags)}.txt").read_text()
    compat = "trec_eval" if version == "10" else "trec_eval-9"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", compat, "--preds-format",
                "trec", "--truth-format", "qrels", "-f", "trec", *_ours(flags))
    if refused(version, name, flags):
        assert r.exit_code == 2, r.stdout
        errors = [line for line in r.stderr.splitlines() if not line.startswith(
            "rankeval: warning:")]
        assert r.stdout == "" and len(errors) == 1, r.stderr
        assert errors[0].startswith("rankeval: error:") and "Traceback" not in r.stderr
        return
    assert r.exit_code == 0, r.stderr
    theirs, ours = _known(version, name, flags, expected.splitlines(), r.stdout.splitlines())
    assert ours == theirs


def test_relstring_outside_trec_lines_is_left_out_with_a_warning_and_refused_elsewhere(
        run_cli):
    """-f trec prints relstring (the recorded cases hold it); a report of numbers leaves it out
    and says so; without a trec_eval preset the name is refused with the way to get it."""
    folder = DATA / "complete"
    args = ("score", folder / "run", folder / "qrels", "--preds-format", "trec",
            "--truth-format", "qrels")
    for measures in (["-m", "relstring"], ["-m", "all_trec"], ["-m", "relstring.5", "-m", "P"]):
        r = run_cli(*args, "--compat", "trec_eval", "-f", "json", *measures)
        assert r.exit_code == 0, r.stderr
        assert "-m relstring is left out of this report" in r.stderr
        r = run_cli(*args, "--compat", "trec_eval", "-f", "trec", *measures)
        assert r.exit_code == 0 and "relstring" not in r.stderr + r.stdout  # no -q: no line
    r = run_cli(*args, "-f", "json", "-m", "relstring")
    assert r.exit_code == 2 and "--compat trec_eval" in r.stderr and "Traceback" not in r.stderr
    for bad, why in (("relstring.4,7", "one parameter"), ("relstring.abc", "not a number")):
        r = run_cli(*args, "--compat", "trec_eval", "-f", "trec", "-m", bad)
        assert r.exit_code == 2 and why in r.stderr and len(r.stderr.splitlines()) == 1


def test_no_summary_alone_prints_nothing_and_needs_a_format_with_lines(run_cli):
    """trec_eval -n without -q prints nothing and exits 0 (the recorded cases hold it); a
    format without per-user or summary lines has nothing -n could leave out."""
    folder = DATA / "complete"
    args = ("score", folder / "run", folder / "qrels", "--preds-format", "trec",
            "--truth-format", "qrels", "--no-summary")
    for compat in ("trec_eval", "trec_eval-9", "ir_measures"):
        for fmt in ("trec", "ir_measures"):
            r = run_cli(*args, "--compat", compat, "-f", fmt)
            assert r.exit_code == 0 and r.stdout == "", (compat, fmt, r.stderr)
    r = run_cli(*args, "--compat", "trec_eval", "-f", "json")
    assert r.exit_code == 2 and "--no-summary" in r.stderr and "Traceback" not in r.stderr



@pytest.mark.parametrize("version, name, flags",
                         [(v, n, f) for v, cases in JG.items() for n, f in cases],
                         ids=[f"{v}-{n}{slug(f)}" for v, cases in JG.items() for n, f in cases])
def test_judgment_groups_are_trec_eval_qrels_jg_line_for_line(run_cli, version, name, flags):
    """--judgment-groups is trec_eval's -R qrels_jg: P_avgjg, map_avgjg, Rprec_mult_avgjg
    and the qrels_jg group, each (query, group) pair scored as a query and averaged per
    query, line for line with both versions; where the version stops (a measure of plain
    qrels, its default measures, 10.0 on a query missing from the run without -c), one line
    and exit 2."""
    folder = DATA / name
    expected = (folder / f"trec_eval-{version}{slug(flags)}.txt").read_text()
    compat = "trec_eval" if version == "10" else "trec_eval-9"
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", compat, "--preds-format",
                "trec", "--truth-format", "qrels", "-f", "trec", "--judgment-groups",
                *_ours(flags))
    if refused(version, name, flags):
        assert r.exit_code == 2, r.stdout
        errors = [line for line in r.stderr.splitlines() if not line.startswith(
            "rankeval: warning:")]
        assert r.stdout == "" and len(errors) == 1, r.stderr
        assert errors[0].startswith("rankeval: error:") and "Traceback" not in r.stderr
        return
    assert r.exit_code == 0, r.stderr
    theirs, ours = expected.splitlines(), r.stdout.splitlines()
    if version == "9" and "-c" in flags and "-q" in flags:  # as _known: no lines for them
        ours = [line for line in ours if line.split("\t")[1] not in MISSING_JG[name]]
    assert ours == theirs


MISSING_JG = {"judgment_groups_missing": {"q03", "q11"}}


def test_judgment_groups_average_any_metric_per_user_outside_the_presets():
    """Outside trec_eval's names, --judgment-groups averages every per-user metric over the
    user's groups: each user's value is the mean of its groups' values, each group scored
    alone against its own judgments (its own truth file here); the mean over users follows,
    the counts are the users', and the setting is in the report's settings."""
    import pandas as pd

    import rankeval

    folder = DATA / "judgment_groups"
    qrels = pd.read_csv(folder / "qrels", sep=" ", names=["qid", "jg", "docno", "rel"],
                        dtype=str).astype({"rel": int})
    run = pd.read_csv(folder / "run", sep=" ", names=["qid", "q0", "docno", "rank", "score",
                                                      "tag"], dtype=str).astype(
        {"score": float})[["qid", "docno", "score"]]
    metrics = ["ndcg@10", "precision@5", "map@all"]
    ev = rankeval.evaluate(run, qrels.rename(columns={"jg": "subtopic", "rel": "relevance"}),
                           metrics, judgment_groups=True, zero_relevant_users="zero")
    per_group = []
    for _, judged in qrels.groupby("jg"):
        alone = rankeval.evaluate(run[run.qid.isin(judged.qid)],
                                  judged.drop(columns="jg").rename(columns={"rel": "relevance"}),
                                  metrics, zero_relevant_users="zero")
        per_group.append(alone.per_user.set_index("user_id")[metrics])
    expected = pd.concat(per_group).groupby(level=0).mean().sort_index()
    got = ev.per_user.set_index("user_id")[metrics].sort_index()
    pd.testing.assert_frame_equal(got, expected, check_names=False, check_dtype=False,
                                  check_index_type=False)
    for m in metrics:
        assert ev.metrics[m] == pytest.approx(expected[m].mean(), abs=1e-12)
    assert ev.users.evaluated == 20 and ev.settings.to_dict()["judgment_groups"] is True


def test_judgment_groups_refuse_what_has_no_value_per_user(run_cli):
    """A metric of the run as a whole has no per-user value to average; a truth without a
    group column has no groups: each one line, exit 2."""
    folder = DATA / "judgment_groups"
    base = ("score", folder / "run", folder / "qrels", "--preds-format", "trec",
            "--truth-format", "qrels", "--judgment-groups")
    r = run_cli(*base, "-m", "coverage@10")
    assert r.exit_code == 2 and "judgment groups" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = run_cli(*base, "--compat", "trec_eval", "-f", "trec", "-m", "qrels_jg", "-m",
                "relstring")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr


PLAIN_JUDGMENTS = ["validate", "compare", "power", "agree"]  # the commands besides score


def on_plain_judgments(run_cli, folder, command: str, flag: str):
    """``command`` (one of ``PLAIN_JUDGMENTS``) on the run and qrels of ``folder``, with
    ``flag``: a setting only score reads."""
    files = {"validate": ["run", "qrels"], "compare": ["run", "run", "qrels"],
             "power": ["run", "run", "qrels"], "agree": ["qrels", "qrels"]}[command]
    formats = (["--truth-format", "qrels"] if command == "agree" else
               ["--preds-format", "trec", "--truth-format", "qrels", "-m", "ndcg@10"])
    return run_cli(command, *(folder / f for f in files), *formats, flag)


@pytest.mark.parametrize("command", PLAIN_JUDGMENTS)
def test_judgment_groups_are_refused_by_the_commands_that_read_plain_judgments(
        run_cli, command):
    """Only score (and rankeval.evaluate) scores (user, group) pairs: every other command
    that takes the setting refuses it with one line, never reading the groups' judgments as
    one user's (a document judged by two groups would read as listed twice)."""
    r = on_plain_judgments(run_cli, DATA / "judgment_groups", command, "--judgment-groups")
    assert r.exit_code == 2 and "--judgment-groups" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_the_prefs_oracle_holds_every_prefs_measure_of_both_versions():
    """The recorded -R prefs and -R qrels_prefs outputs (PREFS; record.py) print each of the
    14 prefs_* measures in both versions, per query and over all, and both versions stop on
    their default measures and on a measure of plain qrels: the oracle the prefs family is to
    be checked against line for line (tests/test_trec_eval_prefs.py; without --preferences
    the names are refused, naming the format: test_trec_eval_params)."""
    from rankeval.foreign_names import OTHER_FORMATS

    family = {m for m in OTHER_FORMATS if m not in ("prefs", "all_prefs")}
    assert len(family) == 14
    for version in ("9", "10"):
        for name, (fmt, cases) in PREFS.items():
            printed: set[tuple[str, str]] = set()
            for flags in cases:
                given = [*fmt, *flags]
                lines = (DATA / name / f"trec_eval-{version}{slug(given)}.txt").read_text()
                if refused(version, name, given):
                    assert not any(f.startswith("prefs") for f in flags) and lines == ""
                    continue
                printed |= {(line.split("\t")[0].strip(), "all" if line.split("\t")[1] == "all"
                             else "query") for line in lines.splitlines()}
            assert {(m, at) for m in family for at in ("all", "query")} <= printed, (
                version, name)


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_judgment_groups_name_repeats_by_the_files_own_lines(run_cli, tmp_path, side):
    """A document listed twice for a judged query, or judged twice by one group, is refused
    naming the file's own line and ids (never a (query, group) pair's number or a line of
    the run as multiplied over the groups): one line, exit 2."""
    folder = DATA / "judgment_groups"
    lines = (folder / side).read_text().splitlines()
    copy = tmp_path / side
    copy.write_text("\n".join([*lines, lines[0]]) + "\n")
    files = {"run": folder / "run", "qrels": folder / "qrels", side: copy}
    r = run_cli("score", files["run"], files["qrels"], "--preds-format", "trec",
                "--truth-format", "qrels", "--judgment-groups", "-m", "ndcg@10")
    query, doc = lines[0].split()[0], lines[0].split()[2]
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"line {len(lines) + 1} ('{query} / {doc}')" in r.stderr, r.stderr


def test_judgment_groups_name_repeated_ranks_by_the_files_own_rows(run_cli, tmp_path):
    """A rank given twice in a judged user's list is refused at the file's own row, and one
    in a list only in the run is not read, as without judgment groups."""
    (tmp_path / "run.csv").write_text("user,item,rank\nu1,a,1\nu1,b,2\nu2,a,1\nu2,b,1\n"
                                      "u3,a,1\nu3,b,1\n")
    (tmp_path / "truth.csv").write_text("user,subtopic,item,relevance\nu1,g1,a,1\n"
                                        "u1,g2,b,1\nu2,g1,a,1\n")
    for groups in ([], ["--judgment-groups"]):
        r = run_cli("score", tmp_path / "run.csv", tmp_path / "truth.csv", "-m", "ndcg@10",
                    *groups)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "1 rank repeated within a user, e.g. row 4 (1)" in r.stderr, r.stderr


@pytest.mark.parametrize("option", ["--train", "--exclude", "--propensity"])
def test_judgment_groups_refuse_the_inputs_that_name_users(run_cli, tmp_path, option):
    """An extra input given per user would meet (user, group) pairs and match none, leaving
    its seen items or propensities silently unread: refused with one line, exit 2."""
    (tmp_path / "run.csv").write_text("user,item,rank\nu1,a,1\nu1,b,2\n")
    (tmp_path / "truth.csv").write_text("user,subtopic,item,relevance\nu1,g1,a,1\n"
                                        "u1,g2,b,1\n")
    (tmp_path / "extra.csv").write_text("user,item,propensity\nu1,a,0.5\nu1,b,0.5\n")
    r = run_cli("score", tmp_path / "run.csv", tmp_path / "truth.csv", "-m", "ndcg@10",
                "--judgment-groups", option, tmp_path / "extra.csv")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert option in r.stderr and "--judgment-groups" in r.stderr, r.stderr
