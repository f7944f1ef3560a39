"""``rankeval sampled`` takes the truth last, as every command does (#52 item 3): the held-out
items as the last positional give what the old ``--truth`` gave (kept, with one deprecation
line); runs of sampled ranks are all runs; a run without ranks names the right form."""

from __future__ import annotations

import pytest

from .conftest import SAMPLE

SCORES, HELD = SAMPLE / "sampled_scores.csv", SAMPLE / "sampled_heldout.csv"
A, B = SAMPLE / "sampled_a.csv", SAMPLE / "sampled_b.csv"
ARGS = ["--candidates", "400", "-f", "json"]


@pytest.mark.parametrize("runs", [[SCORES], [SCORES, SCORES]])
def test_the_truth_last_is_the_old_truth_option(run_cli, runs):
    old = run_cli("sampled", *runs, "--truth", HELD, *ARGS)
    new = run_cli("sampled", *runs, HELD, *ARGS)
    assert old.exit_code == 0 and new.exit_code == 0, (old.stderr, new.stderr)
    assert new.json()["runs"] == old.json()["runs"]
    assert new.stderr == ""
    assert old.stderr.strip() == ("rankeval: warning: sampled --truth FILE is now the last "
                                  "positional (RUN [RUN...] TRUTH); the old spelling will be "
                                  "removed")


def test_runs_of_sampled_ranks_are_all_runs(run_cli):
    r = run_cli("sampled", A, B, "--candidates", "3706", "--negatives", "100", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert [run["name"] for run in r.json()["runs"]] == [str(A), str(B)]


def test_the_truth_in_qrels_by_its_extension(run_cli, tmp_path):
    qrels = tmp_path / "held.qrels"
    qrels.write_text("".join(f"{line.split(',')[0]} 0 {line.split(',')[1].strip()} 1\n"
                             for line in HELD.read_text().splitlines()[1:]))
    new = run_cli("sampled", SCORES, qrels, *ARGS)
    old = run_cli("sampled", SCORES, HELD, *ARGS)
    assert new.exit_code == 0, new.stderr
    assert new.json()["runs"][0]["values"] == old.json()["runs"][0]["values"]


def test_a_run_without_ranks_names_the_form_with_the_truth_last(run_cli):
    r = run_cli("sampled", SCORES, "--candidates", "400", "--negatives", "100")
    assert r.exit_code == 2
    assert "rankeval sampled RUN [RUN...] TRUTH" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
