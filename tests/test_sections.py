"""The report model: every section of a result is drawn by every format for people (the
table, Markdown, the notebook view), its title, each cell and each note."""

from __future__ import annotations

import dataclasses
import html

import numpy as np
import pandas as pd
import pytest

from rankeval import compare, evaluate
from rankeval.analysis.gates import Gate, Gates, Verdict
from rankeval.report import markdown, notebook, sections
from rankeval.report.table import plain_text, render_compare

from .conftest import SAMPLE

PREDS, TRUTH, USERS = (str(SAMPLE / n) for n in ("preds.csv", "truth.csv", "users.csv"))


def _score():
    """An evaluation with every section: gates (one failed), a baseline whose path holds
    Markdown and markup characters, the distribution, segments and ties."""
    ev = (evaluate(PREDS, TRUTH, ["ndcg", "mrr"], k=[5, 10])
          .with_stats(["median", "zeros"]).by_segment(USERS, "country"))
    ndcg = ev.metrics["ndcg@10"]
    verdicts = (Verdict(Gate("fail_under", "ndcg@10", threshold=0.35), "ndcg@10", ndcg, 0.35,
                        False),
                Verdict(Gate("fail_under", "mrr@10", threshold=0.5), "mrr@10",
                        ev.metrics["mrr@10"], 0.5, True))
    base = {"path": "runs/[bold]base_line*|.json", "metrics": {"ndcg@10": 0.3},
            "delta": {"ndcg@10": ndcg - 0.3}}
    return dataclasses.replace(ev, gates=Gates(verdicts, base))


def _compare():
    preds = pd.read_csv(PREDS)
    rng = np.random.default_rng(3)
    other = preds.assign(score=preds["score"] + rng.normal(0, 0.4, len(preds))).drop(
        columns="rank")
    return compare({"main": PREDS, "noisy_*run": other}, TRUTH, ["ndcg@10", "mrr@10"],
                   all_pairs=True, top_changes=2, segments=USERS, segment_by="country",
                   non_inferior="ndcg@10=0.05", fail_if_worse=True)


def _drawn(parts, table_text: str, md_text: str, page: str) -> None:
    assert len(parts) >= 5
    for s in parts:
        texts = [s.heading(), *s.notes, *(c.strip() for row in s.rows for c in row)]
        for text in texts:
            assert text in table_text, (s.key, text)
            assert html.escape(text) in page, (s.key, text)
        for row in s.rows:
            for j, c in enumerate(row):
                if j == (s.head.index("verdict") if "verdict" in s.head else None):
                    continue  # Markdown shows a verdict as a mark
                shown = markdown.cell(c) if j in s.data or len(s.head) == 1 else c.strip()
                assert shown in md_text, (s.key, c)
        for note in s.notes:
            assert markdown.cell(note) in md_text, (s.key, note)


def test_every_section_of_an_evaluation_in_every_format():
    ev = _score()
    parts = sections.score(ev)
    assert [s.key for s in parts] == ["gates", "summary", "baseline", "distribution",
                                      "segment:country", "gaps:country", "ties", "about"]
    _drawn(parts, plain_text(ev), markdown.render(ev), notebook.render(parts))
    md = markdown.render(ev)
    assert md.startswith("**rankeval: 1 of 2 gates failed** ❌\n")
    assert "\nAgainst `runs/[bold]base_line*|.json`:\n" in md  # data in a code span
    # the terminal reads the verdict last
    assert plain_text(ev).rstrip().splitlines()[-4] == "1 of 2 gates failed"


def test_every_section_of_a_comparison_in_every_format():
    result = _compare()
    parts = sections.compare(result)
    keys = [s.key for s in parts]
    assert keys[:3] == ["gates", "summary", "detail"]
    assert {"pairs:ndcg@10", "segment:country", "top:noisy_*run:ndcg@10"} <= set(keys)
    _drawn(parts, plain_text(result, render_compare), markdown.render_compare(result),
           notebook.render(parts))


@pytest.mark.parametrize("make", [_score, _compare])
def test_a_section_is_well_formed(make):
    result = make()
    parts = sections.score(result) if make is _score else sections.compare(result)
    for s in parts:
        assert all(len(row) == len(s.head) for row in s.rows), s.key
        assert not s.tones or [len(t) for t in s.tones] == [len(r) for r in s.rows], s.key
        assert s.left | s.data <= set(range(len(s.head))) or not s.head, s.key
        assert (s.passed is not None) == (s.key == "gates"), s.key
