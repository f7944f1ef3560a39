"""Which error wins when two options are bad at once, verb by verb (#47, S16): the order in
which each verb checks its options, pinned before the request builder took them over. Each
pair names the error that must win and the one it hides; each error is first shown to occur
alone, so that no pair passes for want of its second error."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
import scipy.sparse as sp

from rankeval import compare, evaluate, evaluate_scores, power
from rankeval.errors import RankevalError

from .conftest import SAMPLE

PREDS, TRUTH = str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv")

# One bad option each: (predictions, arguments, standard input, the error's words)
SCORE = {
    # every command's files pass one rule (io.paths) before the command runs
    "output": (PREDS, ["-o", TRUTH], None, "is the input"),
    "no_summary": (PREDS, ["--no-summary"], None, "--no-summary leaves"),
    "engine_option": (PREDS, ["--spark-master", "local[1]"], None,
                      "--spark-master needs --engine spark"),
    "metric": (PREDS, ["-m", "nosuch"], None, "unknown metric 'nosuch'"),
    "needs": (PREDS, ["-m", "coverage"], None, "coverage needs --catalog or --train"),
    "gate": (PREDS, ["--fail-under", "ndcg@5=0.3"], None, "ndcg@5 is not computed"),
    "stats": (PREDS, ["--stats", "bogus"], None, "unknown statistic 'bogus'"),
    "margins": (PREDS, ["--baseline-per-user", "x.csv"], None,
                "--baseline-per-user is for --non-inferior"),
    "engine_check": ("-", ["--engine", "ray"], "", "standard input is not one"),
    "junit": (PREDS, ["--junit", f"{PREDS}/dir/g.xml"], None, f"{PREDS} is not a directory"),
}
# score checks them in this order: each one wins over the next
SCORE_ORDER = list(SCORE)

VALIDATE = {
    "output": (PREDS, ["-o", TRUTH], None, "is the input"),
    "engine_option": (PREDS, ["--spark-master", "local[1]"], None,
                      "--spark-master needs --engine spark"),
    "metric": (PREDS, ["-m", "nosuch"], None, "unknown metric 'nosuch'"),
    "engine_check": ("-", ["--engine", "ray"], "", "standard input is not one"),
}
VALIDATE_ORDER = list(VALIDATE)


def _cli(run_cli, command: str, cases: dict, names: list[str]):
    preds = next((cases[n][0] for n in names if cases[n][0] == "-"), PREDS)
    stdin = next((cases[n][2] for n in names if cases[n][2] is not None), None)
    args = [a for n in names for a in cases[n][1]]
    return run_cli(command, preds, TRUTH, *args, input=stdin)


@pytest.mark.parametrize(("command", "cases"), [("score", SCORE), ("validate", VALIDATE)])
def test_each_bad_option_alone_is_an_error(run_cli, command, cases):
    for name, (*_, words) in cases.items():
        r = _cli(run_cli, command, cases, [name])
        assert r.exit_code == 2, (name, r.stderr)
        assert words in r.stderr, (name, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, (name, r.stderr)


@pytest.mark.parametrize(("command", "cases", "first", "second"), [
    *(("score", SCORE, a, b) for a, b in pairwise(SCORE_ORDER)),
    *(("validate", VALIDATE, a, b) for a, b in pairwise(VALIDATE_ORDER)),
])
def test_the_first_bad_option_wins(run_cli, command, cases, first, second):
    r = _cli(run_cli, command, cases, [first, second])
    assert r.exit_code == 2, r.stderr
    assert cases[first][-1] in r.stderr
    assert cases[second][-1] not in r.stderr


def test_compare_command_checks_its_outputs_before_the_settings(run_cli):
    r = run_cli("compare", PREDS, PREDS, TRUTH, "-o", TRUTH, "-m", "nosuch")
    assert r.exit_code == 2
    assert "is the input" in r.stderr and "nosuch" not in r.stderr


def _scores(**kw):
    u, v, truth = np.ones((3, 2)), np.ones((4, 2)), sp.csr_matrix(np.eye(3, 4))
    return evaluate_scores(kw.pop("factors", (u, v)), truth, kw.pop("metrics", "ndcg"),
                           kw.pop("k", 2), **kw)


# The library's verbs: name -> (the call's keywords, error type, its words), in the order
# each verb checks them (each wins over the next).
LIBRARY = {
    "evaluate": (lambda **kw: evaluate(kw.pop("preds", PREDS), TRUTH, **kw), [
        ({"engine": "nope"}, "engine must be one of"),
        ({"engine_options": {"spark_master": "x"}}, "spark_master needs engine spark"),
        ({"gain": "bogus"}, "gain must be one of"),
        ({"metrics": "coverage"}, "coverage needs catalog or train"),
        ({"preds": "-", "engine": "ray"}, "standard input is not one"),
    ]),
    "compare": (lambda **kw: compare(kw.pop("runs", [PREDS, PREDS]), kw.pop("truth", TRUTH),
                                     **kw), [
        ({"runs": {"a": PREDS, "b": PREDS}, "names": ["x", "y"]}, "not both"),
        ({"gain": "bogus"}, "gain must be one of"),
        ({"rbo": 1.5}, "RBO's persistence p"),
        ({"metrics": "coverage"}, "coverage needs catalog or train"),
        ({"segment_by": "country"}, "go together"),
        ({"non_inferior": "bogus"}, "expected METRIC=MARGIN"),
        ({"min_effect": "bogus"}, "expected [METRIC=]DELTA"),
        ({"truth": "nosuch.csv"}, "nosuch.csv: no such file"),
        ({"test": "bogus"}, "test must be one of"),
    ]),
    "power": (lambda **kw: power(PREDS, kw.pop("run_b", PREDS), TRUTH,
                                 kw.pop("metrics", "ndcg@10"), effect="1%", **kw), [
        ({"alpha": 2}, "alpha must lie strictly between 0 and 1"),
        ({"run_b": None}, "power needs two runs and the truth"),
        ({"gain": "bogus"}, "gain must be one of"),
        ({"metrics": "coverage"}, "coverage needs catalog or train"),
    ]),
    "evaluate_scores": (_scores, [
        ({"factors": (np.ones((3, 2)), np.ones((4, 3)))}, "factors must be"),
        ({"gain": "bogus"}, "gain must be one of"),
        ({"metrics": "num_q", "k": None}, "needs a cut-off K"),
    ]),
}


def _raised(call, kw) -> str:
    with pytest.raises((RankevalError, TypeError)) as caught:
        call(**kw)
    return str(caught.value)


@pytest.mark.parametrize("verb", LIBRARY)
def test_each_bad_keyword_alone_is_an_error(verb):
    call, cases = LIBRARY[verb]
    for kw, words in cases:
        assert words in _raised(call, dict(kw)), (verb, kw)


@pytest.mark.parametrize(("verb", "at"), [(verb, i) for verb, (_, cases) in LIBRARY.items()
                                          for i in range(len(cases) - 1)])
def test_the_first_bad_keyword_wins(verb, at):
    call, cases = LIBRARY[verb]
    (first, words), (second, hidden) = cases[at], cases[at + 1]
    clash = set(first) & set(second)
    if clash:  # the same keyword in both: the pair cannot be given at once
        pytest.skip(f"both set {clash}")
    message = _raised(call, {**first, **second})
    assert words in message and hidden not in message
