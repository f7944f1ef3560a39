"""The text of a comparison (``compare``), shared by the table, Markdown and HTML reports: the
summary cells, the detail rows, the footer and the segment tables. With several baselines a
run carries one difference per baseline, in the order the baselines were given."""

from __future__ import annotations

import math

from rankeval.analysis.choices import FAMILY_WORDS
from rankeval.errors import plural
from rankeval.report.numbers import UNDEFINED, defined, fixed


def run_label(result, run: str) -> str:
    """A run's name in the summary, ``(baseline)`` after each baseline's."""
    return f"{run} (baseline)" if run in result.baselines else run


def compare_cell(result, run: str, metric: str, pad: bool = False) -> tuple[str, int]:
    """``0.3391 +0.0123*``: the mean, then its difference from each baseline; and the
    direction of the significant differences (1 better, -1 worse, 0 none or mixed).
    ``pad``: a difference without a mark takes a space in its place, so that right-aligned
    cells line up (the table)."""
    mean = result.mean(run, metric)
    cells = [c for b in result.baselines if (c := result.cell(run, metric, b)) is not None]
    if not cells or not defined(mean):  # a baseline itself, or no mean to set beside
        return fixed(mean), 0
    several = len(cells) > 1
    parts, signs = [fixed(mean)], set()
    for c in cells:
        if not defined(c.stats.delta):
            if several:  # keep each difference in its baseline's place
                parts.append(UNDEFINED)
            continue
        mark = mark_of(c) if c.tested else ""
        parts.append(fixed(c.stats.delta, sign=True) + (mark or (" " if pad else "")))
        if c.tested and c.significant:
            signs.add(1 if c.stats.delta > 0 else -1)
    return " ".join(parts), signs.pop() if len(signs) == 1 else 0


def mark_of(cell) -> str:
    """``*`` significant, ``~`` significant but below --min-effect, ``?`` undefined test."""
    if cell.significant:
        return "~" if cell.small else "*"
    return "?" if cell.significant is None else ""


def p_text(p: float) -> str:
    """A p-value in full enough digits, or 'undefined' (never blank, never read as large)."""
    return f"{p:.4g}" if defined(p) else "undefined"


def ci_text(s) -> str:
    """``[-0.0140, +0.0134]``, or ``-`` where there is no interval (a corpus metric)."""
    if not defined(s.ci_low):
        return "-"
    return f"[{fixed(s.ci_low, sign=True)}, {fixed(s.ci_high, sign=True)}]"


def test_cells(c) -> list[str]:
    """A comparison's delta, interval, p, adjusted p, effect size and win/tie/loss as text:
    a corpus metric (one value per run, nothing to test) has its delta and dashes; an
    undefined one (no user with a value in both runs) has n/a throughout."""
    s = c.stats
    if not c.tested:
        return [fixed(s.delta, sign=True), "-", "-", "-", "-", "-"]
    if not s.n:
        return [UNDEFINED] * 6
    # the effect first: the difference, its interval, its standardised size; then p
    return [fixed(s.delta, sign=True), ci_text(s), fixed(s.effect_size, 3, sign=True),
            p_text(s.p_value), p_text(c.p_adjusted) + mark_of(c),
            f"{s.wins:,}/{s.ties:,}/{s.losses:,}"]


def detail_head(result) -> list[str]:
    """The columns of the detail table (``baseline`` when there are several)."""
    return ["run", *(["baseline"] if len(result.baselines) > 1 else []), "metric", "delta",
            f"{result.options['ci_level']:.0%} CI", "effect d", "p", "p adjusted",
            "win/tie/loss"]


LEFT = ("run", "baseline", "metric")  # the detail table's text columns


def detail_rows(result) -> list[list[str]]:
    """A row per test: run (and baseline), metric, then ``test_cells``."""
    several = len(result.baselines) > 1
    return [[c.run, *([c.baseline] if several else []), c.metric, *test_cells(c)]
            for c in result.cells]


def against(result) -> str:
    """``main``, or ``main, bm25 (a delta against each, in this order)``."""
    if len(result.baselines) == 1:
        return result.baseline
    return ", ".join(result.baselines) + " (a delta against each, in this order)"


def correction_words(options, tests: int | None = None) -> str:
    """The correction and its family, as every report names them (``holm within each
    metric@K``, ``bh across every metric and K (12 tests)``); ``tests``: the family's size,
    said when one family spans the report."""
    across = options.get("correct_across", "pairs")
    if options["correction"] == "none":
        return "none"
    size = f" ({plural(tests, 'test')})" if tests is not None and across != "pairs" else ""
    return f"{options['correction']} {FAMILY_WORDS[across]}{size}"


def tests_corrected(result) -> int:
    """The tests a comparison's correction counts: every defined p-value of the report."""
    return sum(c.tested and math.isfinite(c.stats.p_value) for c in result.cells)


def compare_footer(result) -> list[str]:
    o = result.options
    undefined_test = any(c.tested and c.defined and c.significant is None
                         for c in result.cells)
    word = "baseline" if len(result.baselines) == 1 else "baselines"
    lines = [
        f"{word}: {against(result)} · test: {o['test']} · "
        f"correction: {correction_words(o, tests_corrected(result))} · "
        f"* significant at alpha {o['alpha']:g}"
        + (" · ~ significant but below --min-effect" if any(c.small for c in result.cells)
           else "")
        + (" · ? the test is undefined" if undefined_test else "")
        + f" · {plural(len(result.shared_users), 'user')} compared",
    ]
    corpus = list(dict.fromkeys(c.metric for c in result.cells if not c.tested))
    if corpus:
        lines.append("corpus-level, one value per run, so a difference without a test: "
                     + ", ".join(corpus))
    lines += [f"{why} (n/a: left out of the tests and the correction)"
              for why in result.undefined.values()]
    if result.settings.config:
        lines.append(f"options from {result.settings.config}")
    return lines


def segment_note(result) -> str:
    base = (result.baseline if len(result.baselines) == 1 else
            "the baseline each row names (run vs baseline)")
    across = "every metric" if result.options.get("correct_across") == "metrics" else (
        "each metric")
    return (f"mean and delta against {base}; * significant after correction over the runs "
            f"{'and baselines ' if len(result.baselines) > 1 else ''}and segments of {across}")


def compare_segment_tables(result) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Per segment column: rows of (segment, users, run, one 'mean delta*' cell per metric);
    with several baselines the run is ``run vs baseline``."""
    out = {}
    for column, rows in result.segments.items():
        metrics = list(dict.fromkeys(c.metric for row in rows for c in row["cells"]))
        lines = []
        for row in rows:
            for label in dict.fromkeys(result.label(c) for c in row["cells"]):
                cells = {c.metric: c for c in row["cells"] if result.label(c) == label}
                lines.append([row["value"], f"{row['users']:,}", label,
                              *(_segment_cell(cells[m]) for m in metrics)])
        out[column] = ([column, "users", "run", *metrics], lines)
    return out


def _segment_cell(cell) -> str:
    s = cell.stats
    if not s.n:
        return UNDEFINED
    return f"{fixed(s.mean_b)} {fixed(s.delta, sign=True)}" + ("*" if cell.significant else "")
