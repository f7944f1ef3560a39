"""The report model: what a report for people says, made once as ordered sections.

A ``Section`` is a titled table with notes below it. ``score``, ``compare``, ``power`` and
``validation`` turn a result into sections; the table (a terminal), Markdown (pull requests)
and HTML (a page, among charts) reports draw the same sections, each in its own way, so a new
line of a report is written here once and every format shows it. The order is one for every
format, verdict first; the terminal moves the verdict to the end, where it is read last. The
machine formats (JSON, CSV, TREC, JUnit) keep their own schemas.
"""

from __future__ import annotations

from rankeval.analysis.gates import outcome, show_pair
from rankeval.analysis.overlap import KINDS
from rankeval.analysis.segments import MISSING
from rankeval.errors import plural
from rankeval.names import MetricSpec, from_name, parse
from rankeval.notices import spelled
from rankeval.registry import REGISTRY
from rankeval.report.analyses import pairs_note, pairs_rows, power_note, power_rows
from rankeval.report.blocks import Section, config_section, table
from rankeval.report.comparison import (
    LEFT,
    compare_cell,
    compare_footer,
    compare_segment_tables,
    detail_head,
    detail_rows,
    run_label,
    segment_note,
)
from rankeval.report.gold_tables import gold, gold_compare
from rankeval.report.numbers import UNDEFINED, count, defined, fixed
from rankeval.settings import footer, order_words

# --- score ----------------------------------------------------------------------------------

def score(ev, undefined: str = UNDEFINED) -> list[Section]:
    """An evaluation's sections: gates, summary, baseline, distribution, segments, ties, and
    what the numbers rest on (``undefined``: how the format shows an undefined value)."""
    out = [*gates(ev), summary(ev, undefined), *gold(ev, undefined)]
    if ev.gates.baseline is not None:
        rows = comparison(ev)
        out.append(table(
            "baseline", ["metric", "baseline", "current", "delta"],
            [[m, fixed(b, undefined=undefined), fixed(c, undefined=undefined),
              fixed(d, sign=True, undefined=undefined)] for m, b, c, d in rows],
            title="Against {}", subject=str(ev.gates.baseline["path"]),
            tones=tuple((0, 0, 0, _sign(d)) for *_, d in rows)))
    if ev.distribution:
        out.append(table("distribution", *distribution_rows(ev, undefined),
                         notes=("distribution over users (users a metric cannot score left "
                                "out)",)))
    for column, segs in ev.segments.items():
        metrics = list(segs[0].metrics) if segs else []
        out.append(table(f"segment:{column}", [column, "users", *metrics],
                         [[s.value, f"{s.users:,}",
                           *(fixed(s.metrics[m], undefined=undefined) for m in metrics)]
                          for s in segs], data=frozenset({0})))
    for column, rows in ev.gaps.items():
        out.append(gap_section(column, rows, undefined))
    for metric, totals in ev.group_exposure.items():
        out.append(exposure_section(metric, totals, undefined))
    if ev.samples is not None:
        out.append(samples_section(ev, undefined))
    if ev.tied_users:
        moved = tie_rows(ev)
        out.append(table("ties", ["metric", "pessimistic", "reported", "optimistic"] if moved
                         else [], moved, notes=(tie_note(ev, small=not moved),)))
    out.append(Section("about", notes=(*([corpus_line(ev)] if ev.corpus else []),
                                       users_line(ev), footer(ev.settings, run_order(ev)))))
    return out


def gates(ev) -> list[Section]:
    """The verdict of score's gates: one row per gate, its verdict last."""
    return verdict_section(ev.gates.verdicts)


def verdict_section(verdicts) -> list[Section]:
    """Gates' verdicts (any command's): one row per gate, its verdict last."""
    if not verdicts:
        return []
    return [table("gates", ["gate", "value", "condition", "verdict"],
                  [[v.metric, show_pair(v.value, v.limit)[0], v.condition(),
                    "passed" if v.passed else "FAILED"] for v in verdicts],
                  title=outcome(verdicts), left=frozenset({0, 2, 3}),
                  tones=tuple((0, 0, 0, 1 if v.passed else -1) for v in verdicts),
                  passed=all(v.passed for v in verdicts))]


def summary(ev, undefined: str = UNDEFINED) -> Section:
    """One row per metric, one column per K; the interval of each mean when asked."""
    columns, rows = ev.summary_rows()
    notes = ((f"in brackets: {ev.interval_level:.0%} bootstrap confidence intervals over "
              "users",) if ev.intervals else ())
    return table("summary", ["metric", *(f"@{k}" for k in columns)],
                 [[name, *(with_ci(ev, name, c, v, undefined)
                           for c, v in zip(columns, values, strict=True))]
                  for name, values in rows], notes=notes)


def with_ci(ev, name: str, column, value: float | None, undefined: str = UNDEFINED) -> str:
    """The mean, with its interval when ``score --ci`` asked for one; ``undefined`` (n/a)
    when undefined, empty where not asked (None)."""
    if value is None:
        return ""
    if "@" in name:
        spec = from_name(name)
    else:
        metric, _, params = parse(name)
        spec = MetricSpec(metric, column if isinstance(column, int) else None, None, params)
    if REGISTRY[spec.name].total:
        return count(value, undefined)  # a count summed over users
    interval = ev.intervals.get(str(spec))
    if interval is None or not defined(value):
        return fixed(value, undefined=undefined)
    return f"{fixed(value)} [{fixed(interval[0])}, {fixed(interval[1])}]"


def corpus_line(ev) -> str:
    """Which rows are corpus-level: one value for the run, not a mean over users."""
    names = list(dict.fromkeys(s.name for s in ev.specs if str(s) in ev.corpus))
    return ("corpus-level (one value for the whole run, not a mean over users): "
            + ", ".join(names))


def users_line(ev) -> str:
    """Every user count of SPEC section 2, in words."""
    u, s = ev.users, ev.settings
    parts = [
        f"{u.evaluated:,} evaluated",
        f"{u.in_truth:,} in truth",
        f"{u.in_predictions:,} in predictions",
    ]
    if u.without_relevant:
        fate = "scored 0" if s.zero_relevant_users == "zero" else "not evaluated"
        parts.append(f"{u.without_relevant:,} without relevant items ({fate})")
    if u.without_predictions:
        fate = "skipped" if s.skip_missing_users else "scored 0"
        parts.append(f"{u.without_predictions:,} without predictions ({fate})")
    if u.only_in_predictions:
        parts.append(f"{u.only_in_predictions:,} only in predictions (not evaluated)")
    return "users: " + " · ".join(parts)


def distribution_rows(ev, undefined: str = UNDEFINED) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the distribution over users: one row per metric, one column per
    statistic; shares (zeros) as percentages."""
    stats = list(next(iter(ev.distribution.values())))
    rows = []
    for metric, values in ev.distribution.items():
        rows.append([metric, *((f"{values[s]:.1%}" if defined(values[s]) else undefined)
                               if s == "zeros" else fixed(values[s], undefined=undefined)
                               for s in stats)])
    return ["metric", *stats], rows


def exposure_section(metric: str, totals, undefined: str = UNDEFINED) -> Section:
    """Exposure by item group against its target, for one awrf metric."""
    rows = totals.rows()
    ratios = [r for *_, r in rows if defined(r)]
    spread = (f"best / worst exposure-to-target ratio: {fixed(max(ratios) / min(ratios))}"
              if len(ratios) > 1 and min(ratios) > 0 else
              "best / worst exposure-to-target ratio: undefined (a group with a target gets "
              "no exposure)" if len(ratios) > 1 else "")
    return table(f"exposure:{metric}", ["group", "exposure", "target", "exposure / target"],
                 [[g, fixed(e, undefined=undefined), fixed(t, undefined=undefined),
                   fixed(r, undefined=undefined)] for g, e, t, r in rows],
                 title=f"Exposure by group ({metric})",
                 notes=(f"exposure: each group's share of the attention of the lists, target: "
                        f"its share of the target, both means over {plural(totals.users, 'user')}",
                        *([spread] if spread else ())),
                 data=frozenset({0}))


def gap_section(column: str, rows: list, undefined: str = UNDEFINED) -> Section:
    """The largest gap of each metric between the segments of ``column``."""
    level = f"{rows[0].level:.0%}" if rows else "95%"
    return table(f"gaps:{column}", ["metric", "gap", f"{level} CI", "best", "worst"],
                 [[g.metric, fixed(g.gap, undefined=undefined),
                   f"[{fixed(g.low, undefined=undefined)}, {fixed(g.high, undefined=undefined)}]",
                   g.best or undefined, g.worst or undefined] for g in rows],
                 title=f"Largest gap between the segments of {column}",
                 notes=(f"gap: the best segment's mean minus the worst's, users of "
                        f"{MISSING} aside; CI: bootstrap over users within segments",),
                 left=frozenset({0, 3, 4}), data=frozenset({3, 4}))  # segment values


def samples_section(ev, undefined: str = UNDEFINED) -> Section:
    """A stochastic run: how many sampled rankings, and each metric's spread over them."""
    n = ev.samples
    per_user = f"{n.fewest:,}" if n.fewest == n.most else f"{n.fewest:,} to {n.most:,}"
    return table("samples", ["metric", "sd over samples"],
                 [[m, fixed(v, undefined=undefined)] for m, v in n.spread.items()],
                 notes=(f"stochastic run: {n.rankings:,} sampled rankings, {per_user} per user;"
                        " each user's value is its mean over its samples, the sd is the mean "
                        "over users of their values' standard deviation over their samples",))


# What ordered the lists where no tie rule did (``settings.order_words``), as the tie note says
WHAT_ORDERED = {"rank": "order of the file's ranks", "input": "file's row order"}


def run_order(ev) -> str | None:
    """What ordered an evaluation's lists (``InputSummary.order``), None when unknown."""
    summary = ev.inputs.get("predictions")
    return None if summary is None else summary.order


def tie_rows(ev) -> list[list[str]]:
    """(metric, pessimistic, reported, optimistic) for the means the order of tied items can
    move."""
    rows = [[m, fixed(lo), fixed(ev.metrics[m]), fixed(hi)]
            for m, (lo, hi) in ev.tie_range.items()]
    return [row for row in rows if row[1] != row[3]]  # moves that show at 4 decimals


def tie_note(ev, small: bool = False) -> str:
    how = {"expected": "the expected value over all orders of tied items",
           "optimistic": "the optimistic order", "pessimistic": "the pessimistic order",
           "provider": "each metric's ties ordered as its ir_measures provider orders them"}
    reported = how.get(ev.settings.ties, f"ties broken by --ties {ev.settings.ties}")
    if order_words(ev.settings, run_order(ev)) is not None:  # no tie rule ordered them
        reported = f"tied scores in the {WHAT_ORDERED[run_order(ev) or '']}"
    have = "has" if ev.tied_users == 1 else "have"
    if small:
        return (f"tie sensitivity: {plural(ev.tied_users, 'user')} {have} tied scores; no mean "
                "changes in its 4th decimal between the worst and best order of their ties")
    return (f"tie sensitivity: {plural(ev.tied_users, 'user')} {have} tied scores; reported: "
            f"{reported}; the range is relevant items last to first within each tie")


def comparison(ev) -> list[tuple[str, float, float, float]]:
    """(metric, baseline, current, delta), as ``Evaluation.judged`` recorded them."""
    base = ev.gates.baseline or {"metrics": {}, "delta": {}}
    return [(m, b, ev.metrics[m], base["delta"][m]) for m, b in base["metrics"].items()]


def _sign(value: float) -> int:
    return 1 if value > 0 else -1 if value < 0 else 0


# --- compare, power, validate ---------------------------------------------------------------

def compare(result) -> list[Section]:
    """A comparison's sections: its gates, the summary (a row per run, the legend of its
    marks below), the tests, all pairs, segments and the users most changed."""
    out = []
    if result.gates:
        out.append(table("gates", ["gate"], [[g.message()] for g in result.gates],
                         title=outcome(result.gates),
                         tones=tuple((1 if g.passed else -1,) for g in result.gates),
                         passed=all(g.passed for g in result.gates)))
    cells = [[compare_cell(result, r.name, m, pad=True) for m in result.metrics]
             for r in result.runs]
    out.append(table("summary", ["run", *result.metrics],
                     [[run_label(result, r.name), *(text for text, _ in line)]
                      for r, line in zip(result.runs, cells, strict=True)],
                     tones=tuple((0, *(d for _, d in line)) for line in cells),
                     notes=tuple(compare_footer(result)), data=frozenset({0})))
    head = detail_head(result)
    texts = frozenset(i for i, h in enumerate(head) if h in LEFT)
    out.append(table("detail", head, detail_rows(result), left=texts,
                     data=texts - {head.index("metric")}))
    out += gold_compare(result)
    for pairs in result.pairs:
        out.append(table(f"pairs:{pairs.metric}", *pairs_rows(pairs), left=frozenset({0, 2}),
                         data=frozenset({0}), notes=(pairs_note(pairs, result.options["alpha"],
                                                                result.options["rounds"]),)))
    if result.overlaps:
        out.append(overlap_section(result.overlaps))
    for column, (head, rows) in compare_segment_tables(result).items():
        out.append(table(f"segment:{column}", head, rows, left=frozenset({0, 2}),
                         data=frozenset({0, 2}),
                         notes=(f"per {column}: {segment_note(result)}",)))
    for run, metrics in result.top.items():
        for metric, changes in metrics.items():
            out.append(table(f"top:{run}:{metric}", *top_rows(result.baseline, run, changes),
                             title=f"{{}} on {metric}", subject=f"{run} vs {result.baseline}",
                             left=frozenset({0, 1}), data=frozenset({1})))
    return out


def overlap_section(overlaps) -> Section:
    """Rank-biased overlap of each run with its baseline: the means over the users with a
    list in either run."""
    first = overlaps[0]
    return table("rbo", ["run", "baseline", "users", *KINDS],
                 [[o.run, o.baseline, f"{o.defined:,}", *(fixed(o.mean(k)) for k in KINDS)]
                  for o in overlaps],
                 title=f"Rank-biased overlap (p = {first.p:g})", left=frozenset({0, 1}),
                 data=frozenset({0, 1}),
                 notes=("RBO of the two lists of each user, averaged: ext extrapolates the "
                        "agreement seen, min and max bound the value the untruncated lists "
                        "could have, residual = max - min (Webber et al. 2010)",))


def top_rows(baseline: str, run: str, changes) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the users a run helps and hurts most: label, user, both values and
    the difference."""
    rows = [[label, u["user"], fixed(u["baseline"]), fixed(u["run"]),
             fixed(u["run"] - u["baseline"], sign=True)]
            for label in ("helped", "hurt") for u in changes[label]]
    return ["", "user", baseline, run, "delta"], rows


def power(result) -> list[Section]:
    return [table("power", *power_rows(result), notes=(power_note(result),)),
            *config_section(result.config)]


def validation(result, strict: bool = False) -> list[Section]:
    """``rankeval validate``: each input, the user counts, then every warning and error
    (with ``strict``, an unacknowledged warning is an error), as lines."""
    spell = spelled()
    lines = []
    for role, info in result.inputs.items():
        cols = ", ".join(f"{r} {c!r}" for r, c in info["columns"].items())
        users = f", {plural(info['users'], 'user')}" if "users" in info else ""
        lines.append(f"{role}: {info['path']} ({info['format']}): "
                     f"{plural(info['rows'], 'row')}{users}; columns: {cols}")
    if result.users is not None:
        u = result.users
        lines.append(
            f"users: {u.evaluated:,} can be evaluated · {u.in_truth:,} in truth · "
            f"{u.in_predictions:,} in predictions · {u.without_relevant:,} without relevant "
            f"items · {u.without_predictions:,} without predictions · "
            f"{u.only_in_predictions:,} only in predictions"
        )
        lines.append(f"prediction rows beyond the largest K: {result.rows_beyond_k:,}")
    if result.config:
        lines.append(f"options from {result.config}")
    lines += [f"{'error' if strict and n.code not in result.acknowledged else 'warning'}: "
              f"{n.render(spell)}" for n in result.notices]
    lines += [f"error: {e.render(spell)}" for e in result.errors]
    return [Section("validation", notes=tuple(lines))]
