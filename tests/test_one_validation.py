"""One validation: the pre-commit hook, ``rankeval validate`` and ``rankeval score`` run the
same checks of a file (``engines.validation.validate_file`` is ``validate``'s own function), so a
file one of them refuses, each refuses, naming the same problem."""

from __future__ import annotations

import json

import pytest

from rankeval.integrations.hooks import main as hook

GOOD_RUN = "user_id,item_id,rank,score\nu1,A,1,0.9\nu1,B,2,0.5\nu2,C,1,0.7\nu2,A,2,0.2\n"
GOOD_TRUTH = "user_id,item_id,relevance\nu1,A,1\nu1,C,2\nu2,C,1\nu2,B,0\n"
HEADER = "user_id,item_id,rank,score\n"

# Every class of defect a single file can have, as a run and as a truth file: (the file's
# text, words the error must hold)
RUNS = {
    "repeated rank": (HEADER + "u1,A,1,0.9\nu1,B,1,0.5\n", "rank repeated within a user"),
    "repeated pair": (HEADER + "u1,A,1,0.9\nu1,A,2,0.5\n", "pair listed more than once"),
    "empty user": (HEADER + "u1,A,1,0.9\n,B,2,0.5\n", "empty id"),
    "empty item": (HEADER + "u1,A,1,0.9\nu1,,2,0.5\n", "empty id"),
    "text rank": (HEADER + "u1,A,one,0.9\n", "non-numeric value"),
    "rank below 1": (HEADER + "u1,A,0,0.9\n", "rank below 1"),
    "fractional rank": (HEADER + "u1,A,1.5,0.9\n", "column 'rank'"),
    "text score": (HEADER + "u1,A,1,high\n", "non-numeric value"),
    "nan score": (HEADER + "u1,A,1,nan\n", "NaN"),
    "infinite score": (HEADER + "u1,A,1,inf\n", "column 'score'"),
    "score past 2^53": ("user_id,item_id,score\nu1,A,9007199254740993\nu1,B,1\n",
                        "column 'score'"),
    "no item column": ("user_id,rank\nu1,1\n", "item"),
    "no rows": (HEADER, "no data rows"),
}
TRUTHS = {
    "repeated pair": ("user_id,item_id,relevance\nu1,A,1\nu1,A,2\n",
                      "pair listed more than once"),
    "empty user": ("user_id,item_id,relevance\nu1,A,1\n,B,1\n", "empty id"),
    "text relevance": ("user_id,item_id,relevance\nu1,A,high\n", "non-numeric value"),
    "nan relevance": ("user_id,item_id,relevance\nu1,A,nan\n", "NaN"),
    "infinite relevance": ("user_id,item_id,relevance\nu1,A,inf\n", "column 'relevance'"),
    "no item column": ("user_id,relevance\nu1,1\n", "item"),
    "no rows": ("user_id,item_id,relevance\n", "no data rows"),
}


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("rankeval: error: ")]


def _all_three(run_cli, capsys, bad, role, good):
    """(hook, validate, score): each one's exit code and error lines."""
    code = hook(["validate", str(bad)])
    hooked = (code, _errors(capsys.readouterr().err))
    pair = (bad, good) if role == "run" else (good, bad)
    flags = () if role == "run" else ("--truth-format", "csv")
    v = run_cli("validate", *pair, *flags, "-f", "json")
    validated = (v.exit_code, [f"rankeval: error: {e}" for e in json.loads(v.stdout)["errors"]]
                 if v.stdout else _errors(v.stderr))
    s = run_cli("score", *pair, *flags)
    return hooked, validated, (s.exit_code, _errors(s.stderr))


@pytest.mark.parametrize("role, case", [("run", c) for c in RUNS] + [("truth", c) for c in TRUTHS])
def test_hook_validate_and_score_refuse_alike(run_cli, write, capsys, role, case):
    text, words = (RUNS if role == "run" else TRUTHS)[case]
    name = "bad.run.csv" if role == "run" else "bad.qrels.csv"
    bad = write(name, text)
    good = write("good.csv", GOOD_TRUTH if role == "run" else GOOD_RUN)
    (h_code, h_lines), (v_code, v_lines), (s_code, s_lines) = _all_three(
        run_cli, capsys, bad, role, good)
    assert h_code == v_code == s_code == 2, (h_lines, v_lines, s_lines)
    assert h_lines and all(str(bad) in line for line in h_lines), h_lines
    assert any(words in line for line in h_lines), (words, h_lines)
    # what the hook says of the file, validate says too; score stops at one of them
    assert set(h_lines) <= set(v_lines), (h_lines, v_lines)
    assert len(s_lines) == 1 and s_lines[0] in v_lines, (s_lines, v_lines)


@pytest.mark.parametrize("role", ["run", "truth"])
def test_a_sound_file_passes_all_three(run_cli, write, capsys, role):
    bad = write("ok.run.csv" if role == "run" else "ok.qrels.csv",
                GOOD_RUN if role == "run" else GOOD_TRUTH)
    good = write("good.csv", GOOD_TRUTH if role == "run" else GOOD_RUN)
    (h_code, h_lines), (v_code, _), (s_code, _) = _all_three(run_cli, capsys, bad, role, good)
    assert (h_code, h_lines, v_code, s_code) == (0, [], 0, 0)
