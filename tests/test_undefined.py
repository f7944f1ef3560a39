"""Undefined is a state, never 0 (SPEC section 9), and no report holds NaN or Infinity.

The matrix runs every command x every report format x every metric family on degenerate
inputs (one user, no list with 2 items with features, a training file without the evaluated
users, K past every list, every user without relevant items, no predictions at all), with and
without intervals, and asserts the class: exit 0 with finite or explicitly undefined values,
or one ``rankeval: error:`` line and exit 2; JSON read by a parser that refuses NaN.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest

import rankeval
from rankeval.notices import TEMPLATES, Notice
from rankeval.report import choices

# Words a number that is not one would print as, in any report or per-user file.
NOT_A_NUMBER = re.compile(r"(?<![\w.])(nan|NaN|NAN|-?inf|-?Infinity)(?![\w])")

FAMILIES = {
    "accuracy": "precision,recall,f1,hit_rate,mrr,map,ndcg,r_precision",
    "trec": "bpref,gm_map,num_rel_ret,err,rbp,judged",
    "beyond": "ild,serendipity,novelty,arp,long_tail,coverage,gini,entropy,norm_entropy,"
              "personalization,item_coverage",
}


def strict_json(text: str):
    """JSON as RFC 8259 has it: NaN, Infinity and -Infinity are refused."""
    def refuse(word):
        raise AssertionError(f"{word} in a JSON report")
    return json.loads(text, parse_constant=refuse)


def _frame(header: str, rows: list[tuple]) -> str:
    return header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows)


CASES = {
    # one user, one relevant item, a three-item list
    "one_user": dict(
        preds=[("u1", "A", 1), ("u1", "B", 2), ("u1", "C", 3)],
        truth=[("u1", "A", 1)],
        train=[("u1", "D")], features=[("A", "x|y"), ("B", "y"), ("C", "x"), ("D", "x")],
        k="1,2"),
    # only one item has features: no list holds 2 (ild undefined); train holds nobody
    # evaluated (serendipity undefined: cold start)
    "cold_start": dict(
        preds=[(u, i, r) for u in ("u1", "u2", "u3") for r, i in enumerate("ABC", 1)],
        truth=[("u1", "A", 1), ("u2", "B", 2), ("u3", "C", 1)],
        train=[("t9", "A"), ("t9", "B")], features=[("A", "x")], k="1,3"),
    # lists of 2 asked at K up to 5
    "k_past_lists": dict(
        preds=[(u, i, r) for u in ("u1", "u2") for r, i in enumerate("AB", 1)],
        truth=[("u1", "A", 1), ("u2", "C", 1)],
        train=[("u1", "C"), ("u2", "A")], features=[("A", "x"), ("B", "y"), ("C", "x|y")],
        k="1..5"),
    # every truth user without a relevant item: nothing to evaluate (exit 2, one line)
    "no_relevant": dict(
        preds=[("u1", "A", 1), ("u2", "B", 1)], truth=[("u1", "A", 0), ("u2", "B", 0)],
        train=[("u1", "B")], features=[("A", "x"), ("B", "y")], k="1"),
    # no evaluated user has a prediction: every list is empty (corpus metrics undefined)
    "no_predictions": dict(
        preds=[("v1", "A", 1), ("v1", "B", 2)], truth=[("u1", "A", 1), ("u2", "B", 1)],
        train=[("u1", "B")], features=[("A", "x"), ("B", "y")], k="1,2"),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Per case: the paths of its run, a second run (compare), truth, train, features,
    catalog."""
    root = tmp_path_factory.mktemp("degenerate")
    out = {}
    for name, c in CASES.items():
        d = root / name
        d.mkdir()
        files = {
            "preds": _frame("user_id,item_id,rank", c["preds"]),
            # the second run: the same lists reversed
            "other": _frame("user_id,item_id,rank", [
                (u, i, len([p for p in c["preds"] if p[0] == u]) + 1 - r)
                for u, i, r in c["preds"]]),
            "truth": _frame("user_id,item_id,relevance", c["truth"]),
            "train": _frame("user_id,item_id", c["train"]),
            "features": _frame("item_id,tags", c["features"]),
            "catalog": _frame("item_id", [(i,) for i in "ABCDE"]),
        }
        for role, text in files.items():
            (d / f"{role}.csv").write_text(text)
        out[name] = {role: str(d / f"{role}.csv") for role in files} | {"k": c["k"]}
    return out


def _extras(family: str, paths: dict) -> list[str]:
    if family != "beyond":
        return []
    return ["--train", paths["train"], "--item-features", paths["features"],
            "--catalog", paths["catalog"]]


def check_run(run, fmt: str) -> dict | None:
    """The class: exit 0 and every number finite or explicitly undefined, or one error line
    and exit 2. Returns the parsed JSON report, if any."""
    assert run.exit_code in (0, 2), (run.exit_code, run.stderr)
    if run.exit_code == 2:
        lines = run.stderr.strip().splitlines()
        assert lines and lines[-1].startswith("rankeval: error: "), run.stderr
        assert "internal error" not in run.stderr and "Traceback" not in run.stderr
        assert [x for x in lines if x.startswith("rankeval: error:")] == [lines[-1]]
        return None
    assert not NOT_A_NUMBER.search(run.stdout), (fmt, NOT_A_NUMBER.search(run.stdout))
    return strict_json(run.stdout) if fmt == "json" else None


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("fmt", choices("score"))
def test_score_on_degenerate_inputs(run_cli, inputs, case, family, fmt):
    p = inputs[case]
    args = ["score", p["preds"], p["truth"], "-m", FAMILIES[family], "--k", p["k"], "-f", fmt,
            *_extras(family, p)]
    doc = check_run(run_cli(*args), fmt)
    with_ci = run_cli(*args, "--intervals", "--rounds", "200", "--stats", "mean,p50,std")
    if fmt != "trec":  # trec_eval's format has no interval
        check_run(with_ci, fmt)
    if doc is not None:
        for name, why in doc["undefined"].items():
            assert doc["metrics"][name] is None, name  # null, never 0.0
            assert name in why
        assert all(v is not None for m, v in doc["metrics"].items()
                   if m not in doc["undefined"])


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("fmt", choices("compare"))
def test_compare_on_degenerate_inputs(run_cli, inputs, case, family, fmt):
    p = inputs[case]
    args = ["compare", p["preds"], p["other"], p["truth"], "-m", FAMILIES[family],
            "--k", p["k"], "-f", fmt, "--intervals", "--rounds", "200",
            *_extras(family, p)]
    doc = check_run(run_cli(*args), fmt)
    if doc is not None:
        for c in doc["comparisons"]:
            if c["metric"] in doc["undefined"]:  # left out of the tests and the correction
                assert c["delta"] is None and c["p_adjusted"] is None, c
                assert c["significant"] is None
            if not c["tested"]:  # a corpus metric: a difference, no test
                assert c["p_value"] is None and c["effect_size"] is None


@pytest.mark.parametrize("case", list(CASES))
def test_per_user_files_leave_undefined_cells_empty(run_cli, inputs, case, tmp_path):
    p = inputs[case]
    args = ["score", p["preds"], p["truth"], "-m", FAMILIES["beyond"], "--k", p["k"], "-q",
            *_extras("beyond", p)]
    run = run_cli(*args, "--per-user", "-", "-f", "json", "-o", str(tmp_path / "r.json"))
    if run.exit_code == 2:
        return check_run(run, "csv")
    assert run.exit_code == 0, run.stderr
    assert not NOT_A_NUMBER.search(run.stdout)
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    doc = strict_json((tmp_path / "r.json").read_text())
    for name in doc["undefined"]:
        if name in rows[0]:  # a per-user metric: every cell empty
            assert {r[name] for r in rows} == {""}, name
    parquet = tmp_path / "u.parquet"
    assert run_cli(*args, "--per-user", str(parquet)).exit_code == 0
    import pyarrow.parquet as pq

    table = pq.read_table(parquet)
    for name in doc["undefined"]:
        if name in table.column_names:  # null, not NaN
            assert table.column(name).null_count == table.num_rows, name


def test_the_issue_case_is_undefined_everywhere(run_cli, inputs, tmp_path):
    """ild@1 (no list holds 2 items): n/a, null, an empty cell; a gate on it is an error."""
    p = inputs["cold_start"]
    base = ["score", p["preds"], p["truth"], "--item-features", p["features"], "-m", "ild",
            "--k", "1"]
    table = run_cli(*base)
    assert table.exit_code == 0
    assert re.search(r"^ild\s+n/a\s*$", table.stdout, re.M), table.stdout
    assert "0.0000" not in table.stdout
    assert "ild@1 is undefined: none of the 3 users evaluated has a value (fewer than 2 " \
           "items with features in the top K)" in table.stderr
    assert "its mean is over" not in table.stderr  # there is no other user
    assert "| ild | n/a |" in run_cli(*base, "-f", "markdown").stdout
    assert "ild@1,ild,1,,per_user" in run_cli(*base, "-f", "csv").stdout
    doc = strict_json(run_cli(*base, "-f", "json", "--intervals").stdout)
    assert doc["metrics"] == {"ild@1": None} and doc["ci"]["intervals"]["ild@1"] == [None, None]
    for gate in ("--fail-over", "--fail-under"):
        run = run_cli(*base, gate, "ild@1=0.5")
        assert run.exit_code == 2, run.stdout
        assert "rankeval: error: gate 'ild@1=0.5' can neither pass nor fail: ild@1 is " \
               "undefined" in run.stderr
    html = run_cli(*base, "-f", "html").stdout
    assert ">undefined<" in html and "0.0000" not in html


def test_a_baseline_holding_null_is_an_error_for_its_gate(run_cli, inputs, tmp_path):
    p = inputs["cold_start"]
    base = ["score", p["preds"], p["truth"], "--item-features", p["features"], "-m",
            "ild@1,precision@1", "-q"]
    report = tmp_path / "base.json"
    assert run_cli(*base, "-f", "json", "-o", str(report)).exit_code == 0
    assert strict_json(report.read_text())["metrics"]["ild@1"] is None
    # the defined metric is still gated against it; the undefined one is an input error
    ok = run_cli(*base, "--baseline", str(report), "--max-drop", "precision@1=0.01")
    assert ok.exit_code == 0, ok.stderr
    bad = run_cli(*base, "--baseline", str(report), "--max-drop", "ild@1=0.01")
    assert bad.exit_code == 2
    assert f"ild@1 is undefined in the baseline {report} (null)" in bad.stderr
    shown = run_cli(*base, "--baseline", str(report))  # a comparison only: shown as n/a
    assert shown.exit_code == 0 and re.search(r"ild@1\s+n/a\s+n/a\s+n/a", shown.stdout)


def test_compare_leaves_undefined_metrics_out_of_the_family(run_cli, inputs):
    p = inputs["k_past_lists"]
    run = run_cli("compare", p["preds"], p["other"], p["truth"], "-m",
                  "ild@1,precision@2,recall@2,mrr@2", "--item-features", p["features"],
                  "--correction", "bonferroni", "-f", "json")
    doc = strict_json(run.stdout)
    cells = {c["metric"]: c for c in doc["comparisons"]}
    assert cells["ild@1"]["delta"] is None and cells["ild@1"]["users"] == 0
    assert "ild@1" in doc["undefined"]
    tested = [c for m, c in cells.items() if m != "ild@1" and c["p_value"] is not None]
    assert tested
    for c in tested:  # the family of each metric is its runs: one test, p unchanged
        assert c["p_adjusted"] == pytest.approx(c["p_value"])
    table = run_cli("compare", p["preds"], p["other"], p["truth"], "-m", "ild@1,precision@2",
                    "--item-features", p["features"]).stdout
    assert re.search(r"other\s+ild@1\s+n/a(\s+n/a){5}", table), table
    assert "(n/a: left out of the tests and the correction)" in table


def test_the_library_says_undefined(inputs):
    p = inputs["cold_start"]
    r = rankeval.evaluate(p["preds"], p["truth"], "ild,precision", 1,
                          item_features=p["features"])
    assert math.isnan(r.metrics["ild@1"]) and not math.isnan(r.metrics["precision@1"])
    assert list(r.undefined) == ["ild@1"]
    assert "n/a: ild@1 is undefined" in repr(r)
    assert r.per_user["ild@1"].isna().all()


def test_k_past_every_list_is_said(run_cli, inputs):
    p = inputs["k_past_lists"]
    run = run_cli("score", p["preds"], p["truth"], "-m", "precision,recall", "--k", "1..5",
                  "-f", "json")
    doc = strict_json(run.stdout)
    (notice,) = [n for n in doc["notices"] if n["code"] == "k_past_lists"]
    assert notice["message"] == ("no list reaches K = 3..5 (the longest has 2 items): "
                                 "precision@K still divides by K, and every metric at such a "
                                 "K counts no more items than at K = 2")
    assert notice["message"] in run.stderr
    assert "k_past_lists" not in json.dumps(strict_json(run_cli(
        "score", p["preds"], p["truth"], "--k", "1,2", "-f", "json").stdout)["notices"])


# --- notices in the caller's words --------------------------------------------------------

# Parameters for every template: a new template must be added here (the test checks).
PARAMS = {
    "duplicates_dropped": {"path": "p.csv"},
    "rank_gaps": {},
    "scores_disagree_with_ranks": {"column": "score", "written": False},
    "score_orders": {"column": "score", "rank": "rank"},
    "ranks_repeated": {"column": "score", "rank": "rank"},
    "ties_at_cutoff": {"ties": "trec"},
    "seen_dropped": {"path": "p.csv"},
    "short_after_exclusion": {"k": 10},
    "train_holds_truth": {"path": "t.csv", "train": "train.csv", "of": 40, "seen": True},
    "seen_truth_dropped": {"path": "t.csv"},
    "one_tag_with_spaces": {"path": "items.csv"},
    "ties_reordered": {"ties": "trec"},
    "unseen_items": {},
    "catalog_fallback": {},
    "outside_catalog": {"path": "c.csv"},
    "extra_fields": {"path": "a.run"},
    "not_scored": {"metric": "ild@10", "rule": "fewer than 2 items with features in the top K",
                   "scored": 7},
    "undefined": {"metric": "ild@10", "rule": "fewer than 2 items with features in the top K"},
    "k_past_lists": {"ks": [11, 12, 20]},
    "ties_at_list_end": {},
    "judgment_group_pairs": {"users": 3},
    "zscores_undefined": {"path": "z.txt"},
    "padded_ids": {},
    "users_without_relevant": {"policy": "skip"},
    "users_without_predictions": {"skip": False},
    "users_only_in_predictions": {"predictions": "p.csv", "truth": "t.csv"},
    "all_judged_relevant": {"path": "t.csv"},
    "graded_gains": {"path": "t.csv", "column": "rating", "lowest": 1.0, "highest": 5.0,
                     "metrics": "ndcg, dcg"},
    "users_not_shared": {"run": "a"},
    "large_sample": {"metric": "ndcg@10", "mde": 0.0021, "share": 0.006},
    "baseline_undefined": {"metric": "ild@10", "baseline": "bm25", "family": 3,
                           "why": "fewer than 2 items with features in the top K"},
    "few_gold": {"path": "human.qrels"},
    "gold_left_out": {"path": "human.qrels", "metric": "ndcg@10"},
    "agree_grades_differ": {"human": "h.qrels", "human_grades": "0, 1, 2",
                            "machine": "m.qrels", "machine_grades": "0, 1"},
    "agree_pairs_one_side": {"side": "human"},
    "agree_queries_beyond": {"side": "machine"},
}
VARIANTS = {"scores_disagree_with_ranks": [{"written": True}],
            "users_without_relevant": [{"policy": "zero"}],
            "users_without_predictions": [{"skip": True}],
            **{code: [{"from": "train.csv and valid.csv", "options": ["exclude_seen",
                                                                   "exclude"]}]
               for code in ("seen_dropped", "short_after_exclusion", "train_holds_truth",
                            "seen_truth_dropped")},
            "undefined": [{"corpus": True, "metric": "personalization@10",
                           "rule": "fewer than 2 users have a list"}]}


def _renderings():
    assert set(PARAMS) == set(TEMPLATES), "give every notice template its parameters here"
    for code, params in PARAMS.items():
        for extra in [{}, *VARIANTS.get(code, [])]:
            for count in (1, 2, 1234):
                yield code, count, params | extra


@pytest.mark.parametrize(("code", "count", "params"), list(_renderings()))
def test_every_notice_speaks_the_callers_words(code, count, params):
    from rankeval.cli.app import flag
    from rankeval.settings import ROWS

    notice = Notice(code, count, params)
    library, command = notice.render(), notice.render(flag)
    # the library names keywords: no flag, and "=True" only after a flag setting
    assert "--" not in library, library
    for name in re.findall(r"(\w+)=True", library):
        assert name in ROWS and ROWS[name].is_flag, library
    # the command line names flags: no keyword=value
    assert not re.search(r"\b[a-z_]+=(True|'[^']*'|\d)", command), command
    # plurals agree with the count
    assert not re.search(r"(?<![\d,])1 (users|items|rows|items|lines|predicted items)\b",
                         library), library
    assert not re.search(r"\b(1,234|2) (user|item|row|truth user|prediction row)\b(?!s)",
                         library), library
    if count == 1:  # a verb after one counted thing is singular
        assert not re.search(r"\b1 (\w+ ){1,3}(have|are|were|appear)\b", library), library


@pytest.mark.parametrize("name", ["evaluate", "evaluate_scores", "Evaluation",
                                  "validate_inputs", "convert", "make_settings"])
def test_the_librarys_help_names_keywords_not_flags(name):
    import pydoc

    text = pydoc.render_doc(getattr(rankeval, name), renderer=pydoc.plaintext)
    assert name != "evaluate" or "exclude_seen" in text  # the settings are listed
    assert not re.findall(r"(?<![\w-])--[a-z][\w-]*", text)
