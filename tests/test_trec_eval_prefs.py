"""--preferences is trec_eval's -R prefs (a prefs file: qid group subgroup docno level) and -R
qrels_prefs (plain qrels read as preferences) with its 14 prefs_* measures, line for line under
--compat trec_eval (10.0) and trec_eval-9 (9.0.8): the recorded outputs of both versions on the
generated preferences (``test_trec_eval_versions.PREFS``) and on trec_eval's own test inputs
(``OWN``), compared whole; what a version stops on, refused with one line."""

from __future__ import annotations

import pandas as pd
import pytest

from .test_trec_eval_versions import DATA, PLAIN_JUDGMENTS, PREFS, on_plain_judgments, refused, slug

OWN_DIR = DATA / "trec_eval_test"
# trec_eval's own tests of the formats (its Makefile's): the truth, the run, the -R format
OWN = {"prefs": ("prefs.test", "prefs.results.test", "prefs"),
       "prefs_comment": ("prefs.comment.test", "prefs.results.test", "prefs"),
       "qrels_prefs": ("qrels.test", "results.test", "qrels_prefs")}
OWN_FLAGS = ["-q", "-m", "all_prefs"]
VERSIONS = {"10": "trec_eval", "9": "trec_eval-9"}

# the preferences with q03 and q11 missing from the run and a query only in the run: 9.0.8
# skips the missing ones, and under -c counts them in num_q and the means' divisor without
# scoring them; 10.0 stops on them without -c (rankeval skips them there, as 9.0.8: no case)
# and under -c scores them with an empty list
MISSING = "preferences_missing"
MISSING_CASES = {"9": [["-q", "-m", "all_prefs"], ["-c", "-q", "-m", "all_prefs"],
                       ["-c", "-m", "prefs"]],
                 "10": [["-c", "-q", "-m", "all_prefs"], ["-c", "-m", "prefs"]]}


def write_missing_dataset() -> None:
    """``MISSING``: the preferences dataset's file, and its run without q03 and q11 and with
    a query the preferences lack."""
    folder = DATA / MISSING
    folder.mkdir(exist_ok=True)
    (folder / "qrels").write_bytes((DATA / "preferences" / "qrels").read_bytes())
    run = [line for line in (DATA / "preferences" / "run").read_text().splitlines()
           if line.split()[0] not in ("q03", "q11")]
    (folder / "run").write_text("\n".join([*run, "x1 Q0 d001 1 1.0 tag0"]) + "\n")


def own_slug(name: str) -> str:
    """The recorded output's name (beside the inputs): the case and trec_eval's flags."""
    return f"{name}{slug(OWN_FLAGS)}"


def _ours(flags: list[str]) -> list[str]:
    """trec_eval's flags in rankeval's spelling (-R FORMAT is --preferences)."""
    spelled = {"-q": ["--per-query"], "-c": ["--no-skip-missing-users"],
               "-J": ["--judged-only"], "-n": ["--no-summary"]}
    valued = {"-l": "--relevance-threshold", "-M": "--max-depth", "-m": "-m"}
    out, i = ["--preferences"], 0
    while i < len(flags):
        if flags[i] == "-R":
            i += 2
        elif flags[i] in valued:
            out += [valued[flags[i]], flags[i + 1]]
            i += 2
        else:
            out += spelled[flags[i]]
            i += 1
    return out


def _assert_refused(r) -> None:
    errors = [line for line in r.stderr.splitlines()
              if not line.startswith("rankeval: warning:")]
    assert r.exit_code == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert len(errors) == 1 and errors[0].startswith("rankeval: error:"), r.stderr
    assert "Traceback" not in r.stderr


CASES = [(v, name, [*fmt, *f]) for v in VERSIONS for name, (fmt, cases) in PREFS.items()
         for f in cases] + [(v, MISSING, ["-R", "prefs", *f]) for v in VERSIONS
                            for f in MISSING_CASES[v]]


@pytest.mark.parametrize("version, name, flags", CASES,
                         ids=[f"{v}-{n}{slug(f)}" for v, n, f in CASES])
def test_preferences_are_trec_eval_prefs_line_for_line(run_cli, version, name, flags):
    """Each recorded case of both versions, whole: the 14 measures per query and over all,
    the prefs and all_prefs groups with runid and num_q, -M, and -J and -l (which the prefs_*
    measures ignore); where the version stops (its default measures, a measure of qrels under
    -R prefs), one line and exit 2."""
    folder = DATA / name
    expected = (folder / f"trec_eval-{version}{slug(flags)}.txt").read_text()
    r = run_cli("score", folder / "run", folder / "qrels", "--compat", VERSIONS[version],
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec",
                *_ours(flags))
    if refused(version, name, flags):
        _assert_refused(r)
        return
    assert r.exit_code == 0, r.stderr
    assert r.stdout == expected


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", OWN)
def test_trec_eval_own_preference_tests_line_for_line(run_cli, version, name):
    """trec_eval's own test inputs (its Makefile's prefs, prefs with comments, qrels_prefs
    cases), both versions' outputs whole; 9.0.8 stops on a '#' line (10.0 reads it as a
    comment): one line, exit 2."""
    truth, run, _ = OWN[name]
    expected = (OWN_DIR / f"trec_eval-{version}_{own_slug(name)}.txt").read_text()
    r = run_cli("score", OWN_DIR / run, OWN_DIR / truth, "--compat", VERSIONS[version],
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec",
                *_ours(OWN_FLAGS))
    if (OWN_DIR / f"trec_eval-{version}_{own_slug(name)}.exit").exists():
        _assert_refused(r)
        assert "comment" in r.stderr
        return
    assert r.exit_code == 0, r.stderr
    assert r.stdout == expected


def test_the_own_outputs_are_trec_eval_s_expected_ones():
    """The recorded outputs are trec_eval's own expected ones (each version's
    test/out.test.prefs and out.test.qrels_prefs, copied in OWN_DIR/<version>/, which its
    Makefile compares against; test_trec_eval_own runs those lines too)."""
    for name, expected in (("prefs", "out.test.prefs"), ("qrels_prefs", "out.test.qrels_prefs")):
        for version, folder in (("10", "10.0"), ("9", "9.0.8")):
            assert (OWN_DIR / f"trec_eval-{version}_{own_slug(name)}.txt").read_text() == (
                OWN_DIR / folder / expected).read_text()


def _frames():
    folder = DATA / "preferences"
    prefs = pd.read_csv(folder / "qrels", sep=" ", names=["qid", "subtopic", "subgroup",
                                                          "docno", "relevance"], dtype=str)
    prefs["relevance"] = prefs.relevance.astype(float)
    run = pd.read_csv(folder / "run", sep=" ", names=["qid", "q0", "docno", "rank", "score",
                                                      "tag"], dtype=str)
    run["score"] = run.score.astype(float)
    return run[["qid", "docno", "score"]], prefs


def test_the_library_takes_preferences_as_a_keyword_and_a_table(run_cli):
    """rankeval.evaluate(..., preferences=True) with tables (a subtopic column naming the
    group, a subgroup column) gives the command line's values on the files: per query and
    over the queries, counts summed, the rest means."""
    import rankeval

    run, prefs = _frames()
    ev = rankeval.evaluate(run, prefs, "all_prefs", preferences=True, compat="trec_eval")
    folder = DATA / "preferences"
    lines = (folder / "trec_eval-10_R_prefs_q_m_all_prefs.txt").read_text().splitlines()
    fields = [line.split("\t") for line in lines]
    total = {f[0].strip(): f[2] for f in fields if f[1] == "all"}
    for name, value in ev.metrics.items():
        shown = f"{int(value)}" if name.startswith("prefs_num") else f"{value:6.4f}"
        assert shown == total[name], name
    per = ev.per_user.set_index("user_id")
    for name, user, value in fields:
        if user != "all" and not name.strip().startswith("prefs_num"):
            assert f"{per.loc[user, name.strip()]:6.4f}" == value, (name, user)
    assert ev.to_dict()["settings"]["preferences"] is True and len(per) == 15


def test_without_the_preset_the_names_are_trec_eval_s_and_the_table_has_no_subgroups(run_cli):
    """Outside the presets --preferences computes the same measures (trec_eval's names:
    rankeval has no metric of preferences); a table without a subgroup column is one subgroup
    per group, as qrels are read (-R qrels_prefs)."""
    import rankeval

    complete = DATA / "complete"
    qrels = pd.read_csv(complete / "qrels", sep=" ", names=["qid", "subtopic", "docno",
                                                            "relevance"], dtype=str)
    qrels["relevance"] = qrels.relevance.astype(float)
    run = pd.read_csv(complete / "run", sep=" ", names=["qid", "q0", "docno", "rank",
                                                        "score", "tag"], dtype=str)
    run["score"] = run.score.astype(float)
    ev = rankeval.evaluate(run[["qid", "docno", "score"]], qrels, ["prefs"],
                           preferences=True, skip_missing_users=True)
    lines = (complete / "trec_eval-10_R_qrels_prefs_m_all_prefs.txt").read_text().splitlines()
    total = {f[0].strip(): f[2] for f in (line.split("\t") for line in lines)}
    assert set(ev.metrics) == {"prefs_num_prefs_poss", "prefs_num_prefs_ful",
                               "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
                               "prefs_avgjg"}
    for name, value in ev.metrics.items():
        shown = f"{int(value)}" if name.startswith("prefs_num") else f"{value:6.4f}"
        assert shown == total[name], name
    r = run_cli("score", complete / "run", complete / "qrels", "--preferences",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec", "-m",
                "all_prefs")
    assert r.exit_code == 0 and r.stdout.splitlines() == lines, r.stderr


@pytest.mark.parametrize("extra", [["--gain", "exponential"], ["-k", "10"],
                                   ["--fail-under", "prefs_simp=0.5"], ["-f", "csv"],
                                   ["--engine", "spark"], ["--judgment-groups"],
                                   ["-m", "prefs_simp.5"], ["-m", "ndcg@10"]])
def test_what_preferences_do_not_read_is_refused_with_one_line(run_cli, extra):
    """An option that changes no prefs_* measure, a format without them, another engine,
    judgment groups besides, a parameter, a metric of qrels: one line, exit 2, never
    ignored."""
    folder = DATA / "preferences"
    measures = [] if "-m" in extra else ["-m", "prefs"]
    r = run_cli("score", folder / "run", folder / "qrels", "--preferences", "--preds-format",
                "trec", "--truth-format", "qrels", *measures, *(["-f", "trec"]
                                                                 if "-f" not in extra else []),
                *extra)
    _assert_refused(r)


@pytest.mark.parametrize("command", PLAIN_JUDGMENTS)
def test_preferences_are_refused_by_the_commands_that_read_plain_judgments(run_cli, command):
    r = on_plain_judgments(run_cli, DATA / "preferences", command, "--preferences")
    _assert_refused(r)
    assert "--preferences" in r.stderr


# preferences trec_eval stops on (a judge contradicting itself), each with the line named
BROKEN = {
    # one subgroup giving a document two levels: 'occurs with different rel_level'
    "two levels": ["q1 j1 s1 a 2", "q1 j1 s1 b 1", "q1 j1 s1 a 0.5"],
    # a document relevant in one subgroup, non-relevant (0) in another of the same judge
    "zero and not": ["q1 j1 s1 a 2", "q1 j1 s1 b 1", "q1 j1 s2 a 0", "q1 j1 s2 c 1"],
    # a over b in one subgroup, b over c and c over a in others: a cycle (trec_eval aborts)
    "cycle": ["q1 j1 s1 a 2", "q1 j1 s1 b 1", "q1 j1 s2 b 2", "q1 j1 s2 c 1",
              "q1 j1 s3 c 2", "q1 j1 s3 a 1"],
}


@pytest.mark.parametrize("case", BROKEN)
def test_contradicting_preferences_are_refused_naming_the_line(run_cli, tmp_path, case):
    (tmp_path / "prefs").write_text("\n".join(BROKEN[case]) + "\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c 3 1.0 t\n")
    r = run_cli("score", tmp_path / "run", tmp_path / "prefs", "--preferences",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec", "-m",
                "prefs_simp")
    _assert_refused(r)
    assert "line " in r.stderr and "trec_eval stops" in r.stderr, r.stderr


def test_a_document_listed_twice_is_refused_unless_dedupe(run_cli, tmp_path):
    """trec_eval stops on a document twice in a judged query's list ('duplicate docs'):
    refused naming the run's line; --dedupe keeps the first in the list's order."""
    (tmp_path / "prefs").write_text("q1 j1 s1 a 2\nq1 j1 s1 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 a 3 1.0 t\n")
    args = ("score", tmp_path / "run", tmp_path / "prefs", "--preferences", "--preds-format",
            "trec", "--truth-format", "qrels", "-f", "trec", "-m", "prefs_simp")
    r = run_cli(*args)
    _assert_refused(r)
    assert "line 3" in r.stderr, r.stderr
    r = run_cli(*args, "--dedupe")
    assert r.exit_code == 0 and r.stdout.split() == ["prefs_simp", "all", "1.0000"], r.stderr


@pytest.mark.parametrize("lines, line", [
    (["q1 j1 s1 a 2", "q1 j1 b 1"], 2),  # a qrels line among prefs lines
    (["q1 j1 s1 a 2", "q1 j1 s1 b high"], 2),  # a level that is not a number
    (["q1 j1 a 2 x y"], 1),  # six fields: neither layout
    (["q1 j1 s1 a 2", "", "q1 j1 s1 b 1"], 2),  # a blank line
])
def test_malformed_preferences_are_refused_naming_the_line(run_cli, tmp_path, lines, line):
    """trec_eval stops on a malformed line ('Malformed line', or atof's 0 for a word, which
    would change the preferences): one line naming the file's line, exit 2."""
    (tmp_path / "prefs").write_text("\n".join(lines) + "\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\n")
    r = run_cli("score", tmp_path / "run", tmp_path / "prefs", "--preferences",
                "--preds-format", "trec", "--truth-format", "qrels", "-f", "trec", "-m",
                "prefs_simp")
    _assert_refused(r)
    assert f"line {line}" in r.stderr, r.stderr


def test_negative_levels_are_refused_for_the_rnonrel_measures_alone(run_cli, tmp_path):
    """trec_eval's Rnonrel measures take the lowest level's class for the non-relevant ones
    and read past it when a negative level is lower (its value then is whatever memory
    follows): refused naming the line; the other measures take negative levels as trec_eval
    does (non-relevant)."""
    (tmp_path / "qrels").write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c -1\nq1 0 d 0\nq1 0 e 0\n")
    (tmp_path / "run").write_text("q1 Q0 c 1 3.0 t\nq1 Q0 a 2 2.0 t\nq1 Q0 b 3 1.0 t\n")
    args = ("score", tmp_path / "run", tmp_path / "qrels", "--preferences", "--preds-format",
            "trec", "--truth-format", "qrels", "-f", "trec")
    r = run_cli(*args, "-m", "all_prefs")
    _assert_refused(r)
    assert "line 3" in r.stderr and "Rnonrel" in r.stderr, r.stderr
    # 7 preferences: a over b, d, e (fulfilled), a, b, d, e over c (ranked first: not): 3/7,
    # trec_eval's value
    r = run_cli(*args, "-m", "prefs_simp")
    assert r.exit_code == 0 and r.stdout.split() == ["prefs_simp", "all", "0.4286"], r.stderr


def test_groups_paired_in_chunks_give_the_same_values(monkeypatch):
    """The groups of one subgroup are paired a chunk at a time (``PAIRS_AT_ONCE`` row pairs):
    chunks of a few groups, and a group larger than a chunk alone, give the oracle's lines."""
    from rankeval.api.preferences import evaluate_preferences
    from rankeval.kernels import preferences as kernel
    from rankeval.report.preferences import render
    from rankeval.settings import make_settings

    folder = DATA / "complete"
    expected = (folder / "trec_eval-10_R_qrels_prefs_q_l_2_m_all_prefs.txt").read_text()
    settings = make_settings(["all_prefs"], compat="trec_eval", preferences=True)
    for limit in (1, 3000, 40_000):
        monkeypatch.setattr(kernel, "PAIRS_AT_ONCE", limit)
        done = evaluate_preferences(folder / "run", folder / "qrels", settings,
                                    preds_format="trec", truth_format="qrels")
        assert render(done, per_user=True) == expected, limit


@pytest.mark.parametrize("name", ["preferences", "preferences_missing"])
def test_a_prefs_file_is_told_from_its_content(run_cli, name):
    """A prefs file (5 fields, a level last) needs no --truth-format under --preferences, as
    qrels need none; read as plain judgments it is refused with one line naming
    --preferences (trec_eval stops on it: "Malformed line"), never a column error."""
    folder = DATA / name
    named = run_cli("score", folder / "run", folder / "qrels", "--preferences", "-m",
                    "all_prefs", "-f", "json", "--truth-format", "qrels")
    told = run_cli("score", folder / "run", folder / "qrels", "--preferences", "-m",
                   "all_prefs", "-f", "json")
    assert named.exit_code == 0 and told.exit_code == 0, told.stderr
    assert told.stdout == named.stdout
    for fmt in ([], ["--truth-format", "qrels"]):
        r = run_cli("score", folder / "run", folder / "qrels", "-m", "ndcg@10", *fmt)
        _assert_refused(r)
        assert "--preferences" in r.stderr and "prefs file" in r.stderr


def test_preferences_is_no_convention_of_the_registry_s_metrics(run_cli):
    """`rankeval metrics NAME` lists the conventions that change a metric: --preferences
    computes trec_eval's prefs_* measures in place of the registry's, so it is never among
    them (--judgment-groups and --zscores, which change every metric's values, are)."""
    r = run_cli("metrics", "map")
    assert r.exit_code == 0, r.stderr
    every = r.stdout[r.stdout.index("and by:"):r.stdout.index("trec_eval:")]
    assert "--judgment-groups" in every and "--zscores" in every
    assert "--preferences" not in r.stdout
