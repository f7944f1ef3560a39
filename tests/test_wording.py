"""Counts with nouns go through one helper (#52 item 5): ``errors.plural`` says "1 user" and
"2 users"; no f-string of rankeval/ prints a count beside a plural noun of its own ("1 rows,
1 users") or makes its own plural ("user{'s' if ...}"), and no count takes an apostrophe
("1 user' lists"). The scan reads the source (ast), so a new message of that kind fails here."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

from rankeval.analysis.gates import outcome
from rankeval.errors import plural
from rankeval.notices import Notice

SOURCE = Path(__file__).parents[1] / "rankeval"
# The nouns rankeval counts: a number printed right before one of them is a count.
NOUNS = ("users", "rows", "items", "gates", "negatives", "candidates", "runs", "grades",
         "predictions", "columns", "fields", "cut-offs", "slates", "slots", "numbers",
         "queries", "resamples", "systems", "permutations", "segments", "metrics", "values",
         "lines", "warnings", "errors", "times", "pairs", "ids", "labels", "judgments")
_PLURAL = re.compile(r"^ (" + "|".join(map(re.escape, NOUNS)) + r")\b")
_SINGULAR = re.compile(r"^ (" + "|".join(re.escape(n[:-1]) for n in NOUNS) + r")$")
# formatted values that are not counts, before a plural noun: a run's name, a percentage
NOT_COUNTS = {"side", "what", "self.kind", "level"}


def problems(text: str) -> list[str]:
    """Each f-string of ``text`` that prints a count beside a noun without ``plural``."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for i, (a, b) in enumerate(itertools.pairwise(parts)):
            if not isinstance(a, ast.FormattedValue) or not isinstance(b, ast.Constant):
                continue
            expr, after = ast.unparse(a.value), str(b.value)
            helper = expr.startswith(("plural(", "_users(", "_are(", "_have("))
            if not helper and expr not in NOT_COUNTS and _PLURAL.match(after):
                found.append(f"line {node.lineno}: {{{expr}}}{after[:20]!r}")
            nxt = parts[i + 2] if i + 2 < len(parts) else None
            if (not helper and _SINGULAR.match(after) and isinstance(nxt, ast.FormattedValue)
                    and isinstance(nxt.value, ast.IfExp)):
                found.append(f"line {node.lineno}: {{{expr}}}{after!r} with its own plural")
            if helper and after.startswith("' "):
                found.append(f"line {node.lineno}: {{{expr}}}{after[:20]!r}: an apostrophe")
    return found


@pytest.mark.parametrize("path", sorted(SOURCE.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(SOURCE)))
def test_no_count_prints_its_own_plural(path):
    assert problems(path.read_text()) == []


@pytest.mark.parametrize("code", [
    'f"{n:,} users"', 'f"{len(rows)} rows, {k} items"', "f\"{n} user{'s' if n != 1 else ''}\"",
    "f\"{plural(n, 'user')}' lists\"", 'f"the {count} queries"',
])
def test_the_scan_finds_a_planted_count(code):
    assert problems(code)


@pytest.mark.parametrize("code", ["f\"{plural(n, 'user')} compared\"", 'f"{side} qrels"',
                                  'f"{n} of them"', 'f"{name}: runs"'])
def test_the_scan_leaves_the_helper_and_names_alone(code):
    assert problems(code) == []


def test_the_singular_forms():
    assert plural(1, "user") == "1 user" and plural(2, "user") == "2 users"
    assert plural(1, "query", "queries") == "1 query" and plural(1_000, "row") == "1,000 rows"
    spell = str
    assert Notice("ties_at_list_end", 1).render(spell).startswith(
        "the lists of 1 user end inside a group of tied scores")
    assert Notice("ties_at_list_end", 3).render(spell).startswith("the lists of 3 users end")


class _Verdict:
    def __init__(self, passed):
        self.passed = passed


def test_the_gate_outcome_counts_in_words():
    assert outcome([_Verdict(False)]) == "the gate failed"
    assert outcome([_Verdict(True), _Verdict(True)]) == "all 2 gates passed"
    assert outcome([_Verdict(False), _Verdict(True)]) == "1 of 2 gates failed"


def test_validate_says_one_row_and_one_user(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nu1,a,1\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,a,1\n")
    out = run_cli("validate", preds, truth).stdout
    assert "1 row, 1 user;" in out and "1 rows" not in out and "1 users" not in out


def test_compare_passes_on_the_one_metric_tested(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nu1,a,1\nu2,b,1\n")
    other = write("q.csv", "user_id,item_id,rank\nu1,a,1\nu2,b,1\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu1,a,1\nu2,b,1\n")
    r = run_cli("compare", preds, other, truth, "-m", "ndcg@1", "--fail-if-worse")
    assert "on the 1 metric tested" in r.stderr


def test_ope_calls_a_weight_of_0_by_its_name_not_a_lack_of_support(run_cli):
    from .conftest import ROOT

    r = run_cli("ope", ROOT / "sample_data" / "log.csv",
                ROOT / "sample_data" / "log_candidate.csv", "-e", "iips", "-q")
    assert "weight 0" in r.stdout and "no support:" not in r.stdout
