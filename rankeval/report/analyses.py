"""The text of the analyses' tables (power, all pairs), shared by the table, Markdown and
HTML reports."""

from __future__ import annotations

from rankeval.errors import plural
from rankeval.report.comparison import p_text
from rankeval.report.numbers import UNDEFINED, defined, fixed


def power_rows(result) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a power analysis: one row per metric, effect first."""
    effect = result.effect is not None
    head = ["metric", "users", "baseline", "B - A", "sd of B - A", "MDE"]
    if effect:
        head += ["effect", "power", "users needed"]
    if result.systems:
        head += [f"users needed ({plural(result.systems, 'system')})"]
    rows = []
    for r in result.rows:
        row = [r.metric, f"{r.users:,}", fixed(r.baseline_mean),
               fixed(r.mean_difference, sign=True), fixed(r.sd), fixed(r.mde)]
        if effect:
            row += [fixed(r.effect), f"{r.achieved:.1%}" if defined(r.achieved) else UNDEFINED,
                    _needed(r.users_needed)]
        if result.systems:
            row += [_needed(r.anova_users)]
        rows.append(row)
    return head, rows


def _needed(n: int | None) -> str:
    if n is None:
        return UNDEFINED
    return "more than 100,000,000" if n < 0 else f"{n:,}"


def power_note(result) -> str:
    test = "paired t-test" if result.method == "t" else (
        f"paired t-test simulated on {plural(result.rounds, 'resample')} of the differences")
    return (f"{result.runs[1]} (B) against {result.runs[0]} (A) · {test}, {result.alternative}"
            f" · alpha {result.alpha:g} · power {result.power:.0%}"
            + (f" · effect {result.effect}" if result.effect is not None else "")
            + " · MDE: the smallest difference these users detect with that power")


def pairs_rows(pairs) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one metric's all-pairs matrix: a row per run (best first) with its
    mean and group letters, then the difference (column - row) and adjusted p per column."""
    head = ["run", "mean", "group", *pairs.runs]
    rows = []
    for i, run in enumerate(pairs.runs):
        cells = []
        for j in range(len(pairs.runs)):
            if i == j:
                cells.append("-")
                continue
            mark = "*" if pairs.significant[i][j] else ""
            cells.append(f"{fixed(pairs.difference[i][j], sign=True)} "
                         f"({p_text(pairs.p_adjusted[i][j])}){mark}")
        rows.append([run, fixed(pairs.means[i]), pairs.groups[run], *cells])
    return head, rows


def pairs_note(pairs, alpha: float, rounds: int) -> str:
    how = ("randomised Tukey HSD, every permutation" if pairs.procedure == "tukey" and
           pairs.exact else f"randomised Tukey HSD, {plural(rounds, 'permutation')}"
           if pairs.procedure == "tukey" else f"paired tests, {pairs.procedure} over all pairs"
           + (" of every metric" if pairs.across == "metrics" else ""))
    return (f"all pairs on {pairs.metric} ({how}; {plural(pairs.users, 'user')}): column - row "
            f"(adjusted p); * significant at alpha {alpha:g}; runs sharing a group letter do "
            "not differ")
