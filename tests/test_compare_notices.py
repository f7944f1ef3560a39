"""A notice about the truth (or another input every run shares) is said once by compare,
after the input's name, in stderr and in the JSON report; a run's own notices stay per run,
after the run's name. Over every notice row whose subject is not the run (``notices.SUBJECTS``)."""

from __future__ import annotations

import pytest

from rankeval import notices

GRADED = "user_id,item_id,relevance\nu1,i1,1\nu1,i2,2\nu2,i3,1\nu2,i1,0\nu3,i2,1\nu4,i4,0\n"
RUN_A = "user_id,item_id,rank\nu1,i1,1\nu1,i2,2\nu2,i3,1\nu2,i1,2\nu3,i1,1\nu3,i2,2\nu4,i4,1\n"
RUN_B = "user_id,item_id,rank\nu1,i2,1\nu1,i1,2\nu2,i1,1\nu2,i3,2\nu3,i2,1\nu3,i1,2\nu4,i4,1\n"
RUN_C = "user_id,item_id,rank\nu1,i2,1\nu1,i1,2\nu2,i3,1\nu2,i1,2\nu3,i2,1\nu3,i1,2\nu4,i4,1\n"

# code -> (truth file name, its text, the options and extra files that make the notice)
RECIPES = {
    "users_without_relevant": ("truth.csv", GRADED, [], {}),
    "graded_gains": ("truth.csv", GRADED, [], {}),
    "all_judged_relevant": ("truth.csv", "user_id,item_id,relevance\nu1,i1,1\nu1,i2,2\n"
                            "u2,i3,1\nu3,i2,2\nu4,i4,1\n", [], {}),
    "train_holds_truth": ("truth.csv", GRADED, ["--train", "train.csv",
                                                "--exclude-seen-truth"],
                          {"train.csv": "user_id,item_id\nu1,i1\n"}),
    "seen_truth_dropped": ("truth.csv", GRADED, ["--train", "train.csv",
                                                 "--exclude-seen-truth"],
                           {"train.csv": "user_id,item_id\nu1,i1\n"}),
    "extra_fields": ("truth.qrels", "u1 0 i1 1 x\nu1 0 i2 2\nu2 0 i3 1\nu3 0 i2 1\nu4 0 i4 0\n",
                     [], {}),
    "one_tag_with_spaces": ("truth.csv", GRADED, ["-m", "ild@3", "--item-features",
                                                  "items.csv"],
                            {"items.csv": "item_id,tags\ni1,Action Comedy\ni2,Drama Noir\n"
                                          "i3,Sci Fi\ni4,Old West\n"}),
}


def written_runs(write, n: int) -> list:
    """The first ``n`` of the runs a, b and c, as files."""
    return [write(f"{name}.csv", text)
            for name, text in zip("abc", (RUN_A, RUN_B, RUN_C), strict=True)][:n]


def compared(run_cli, write, runs: int, fmt: str):
    """``compare`` of the first ``runs`` runs against the graded truth, at ndcg@3 (where no
    list reaches K), in format ``fmt``: the result, checked to have run."""
    truth = write("truth.csv", GRADED)
    r = run_cli("compare", *written_runs(write, runs), truth, "-m", "ndcg@3", "-f", fmt)
    assert r.exit_code == 0, r.stderr
    return r


def test_every_row_about_a_shared_input_has_a_recipe():
    # extra_fields names its subject per notice (the predictions' or the truth's lines)
    assert set(RECIPES) == set(notices.SUBJECTS) | {"extra_fields"}


@pytest.mark.parametrize("runs", [2, 3])
@pytest.mark.parametrize("code", sorted(RECIPES))
def test_a_notice_about_the_truth_is_said_once(run_cli, write, code, runs):
    name, text, options, files = RECIPES[code]
    truth = write(name, text)
    for file, content in files.items():
        write(file, content)
    paths = written_runs(write, runs)
    options = [str(truth.parent / o) if o in files else o for o in options]
    metric = [] if "-m" in options else ["-m", "ndcg@3"]
    r = run_cli("compare", *paths, truth, *metric, *options, "-f", "json")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    found = [n for n in report["notices"] if n["code"] == code]
    assert len(found) == 1, report["notices"]
    message = found[0]["message"]
    assert report["warnings"].count(message) == 1
    assert not any(n["code"] == code for run in report["runs"] for n in run["notices"])
    said = [line for line in r.stderr.splitlines() if message in line]
    # once, after the name of the input it is about (the truth, or the item features)
    assert len(said) == 1, r.stderr
    subject = "items.csv" if code == "one_tag_with_spaces" else name
    assert said[0].startswith(f"rankeval: warning: {truth.parent / subject}: "), said


@pytest.mark.parametrize("runs", [2, 3])
def test_a_runs_own_notice_stays_per_run(run_cli, write, runs):
    r = compared(run_cli, write, runs, "json")
    report = r.json()
    for run in report["runs"]:  # no list reaches K = 3: each run's own
        assert [n["code"] for n in run["notices"]] == ["k_past_lists"]
        assert run["warnings"] == [run["notices"][0]["message"]]
        lines = [line for line in r.stderr.splitlines() if "no list reaches K = 3" in line]
        assert sum(line.startswith(f"rankeval: warning: {run['name']}: ")
                   for line in lines) == 1
    assert not any(n["code"] == "k_past_lists" for n in report["notices"])
