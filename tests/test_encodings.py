"""Each input is read in its own encoding: --preds-encoding and --truth-encoding over
--encoding, and a hint that names the option of the input that is not UTF-8."""

from __future__ import annotations

import pytest

# ids that differ between Latin-1 and UTF-8 readings of the same bytes
RUN = "user_id,item_id,rank\nzoë,café,1\nzoë,thé,2\n"
TRUTH = "user_id,item_id,relevance\nzoë,café,1\n"


@pytest.mark.parametrize("latin", ["predictions", "truth"])
def test_one_input_in_latin_1_and_the_other_in_utf_8(run_cli, write, latin):
    p = write("p.csv", RUN.encode("latin-1" if latin == "predictions" else "utf-8"))
    t = write("t.csv", TRUTH.encode("latin-1" if latin == "truth" else "utf-8"))
    plain = run_cli("score", p, t, "-m", "recall@2", "-f", "json")
    assert plain.exit_code == 2
    option = "--preds-encoding" if latin == "predictions" else "--truth-encoding"
    assert f"name its encoding with {option}" in plain.stderr
    # --encoding names every input's: the UTF-8 one is then misread (never a silent 0)
    both = run_cli("score", p, t, "-m", "recall@2", "-f", "json", "--encoding", "latin-1")
    assert both.exit_code == 2 or both.json()["metrics"]["recall@2"] == 0
    own = run_cli("score", p, t, "-m", "recall@2", "-f", "json", option, "latin-1")
    assert own.exit_code == 0, own.stderr
    assert own.json()["metrics"]["recall@2"] == 1.0
    # the input's own encoding wins over --encoding
    over = run_cli("score", p, t, "-m", "recall@2", "-f", "json", "--encoding", "utf-16",
                   option, "latin-1", *(["--truth-encoding", "utf-8"] if latin == "predictions"
                                        else ["--preds-encoding", "utf-8"]))
    assert over.exit_code == 0, over.stderr
    assert over.json()["metrics"]["recall@2"] == 1.0


@pytest.mark.parametrize("command", ["validate", "compare", "power"])
def test_every_scoring_command_takes_them(run_cli, write, command):
    p = write("p.csv", RUN.encode("latin-1"))
    t = write("t.csv", TRUTH.encode("utf-8"))
    runs = [p, p] if command != "validate" else [p]
    extra = ["--effect", "0.1"] if command == "power" else []
    r = run_cli(command, *runs, t, "--preds-encoding", "latin-1", *extra, "-m", "recall@2",
                "-f", "json")
    assert "not UTF-8" not in r.stderr, r.stderr
