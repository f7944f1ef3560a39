"""The report of ``rankeval interleave score`` and ``simulate``: sections every text format
draws (gates, the pairs' preferences, the plan, the log and the rules that decided what
counted), CSV rows, and the HTML page's win/tie/loss bars and Delta with its interval. JSON
is the result's own ``to_dict``. Nothing here computes: every number comes from the result.
"""

from __future__ import annotations

import csv
import html
import io

from rankeval.analysis.choices import interleaving_name
from rankeval.errors import plural
from rankeval.report import visible
from rankeval.report.blocks import Section, config_section, table
from rankeval.report.numbers import UNDEFINED, count, defined, exact, fixed

PLURAL = {"query": "queries", "user": "users"}


def _p(value: float | None, undefined: str) -> str:
    return f"{value:.3g}" if defined(value) else undefined


def _counts(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _band(low, high, undefined: str) -> str:
    if not (defined(low) and defined(high)):
        return undefined
    return f"[{fixed(low, sign=True)}, {fixed(high, sign=True)}]"


def clicks_rule(result) -> str:
    """Which clicks counted, in words (the report names the options)."""
    rule = ("each impression's last click (latest in time, else lowest on the list)"
            if result.clicks == "last" else "all clicks")
    dwell = (f", dwell at least {result.min_dwell:g} s" if result.min_dwell is not None
             else "")
    return f"clicks counted: {rule}{dwell} (--clicks {result.clicks}" + (
        f", --min-dwell {result.min_dwell:g})" if result.min_dwell is not None else ")")


def sections(result, undefined: str = UNDEFINED) -> list[Section]:
    if result.to_dict()["kind"] == "interleave_simulation":
        return simulation_sections(result, undefined)
    out = gate_sections(result.gates)
    level = f"{result.level:.0%}"
    log = result.log
    multi = len(result.teams) > 2
    head = ["A", "B", "wins A", "ties", "wins B", "no click", "Delta A over B",
            f"{level} CI", "p (sign test)"] + (["p adjusted"] if multi else [])
    rows, tones = [], []
    for p in result.pairs:
        row = [p.a, p.b, _counts(p.wins), _counts(p.ties), _counts(p.losses),
               f"{p.no_click:,}", fixed(p.delta, sign=True, undefined=undefined),
               _band(p.low, p.high, undefined), _p(p.p_value, undefined)]
        if multi:
            row.append(_p(p.p_adjusted, undefined))
        rows.append(row)
        tone = 1 if defined(p.low) and p.low > 0 else -1 if defined(p.high) and p.high < 0 else 0
        tones.append(tuple(tone if j == 6 else 0 for j in range(len(row))))
    notes = [
        f"{log['impressions']:,} impressions of {log['groups']:,} {PLURAL[result.group_by]} "
        f"({plural(log['rows'], 'slot')}, {log['clicks']:,} clicked, {log['counted_clicks']:,} "
        f"counted) in {log['path']}",
        f"{interleaving_name(result.method, len(result.teams))}; " + clicks_rule(result),
        "an impression is a win for A when A's credit is larger, a tie when equal and not "
        "zero; Delta = (wins + ties / 2) / (wins + losses + ties) - 1/2 (Chapelle et al. "
        "2012), positive when users prefer A",
        f"CI: percentile bootstrap over {PLURAL[result.group_by]} ({result.rounds:,} rounds, seed "
        f"{result.seed})" + ("; p: expected counts have no sign test, the interval judges"
                             if result.method == "probabilistic" else
                             "; p: two-sided binomial test of wins against losses"),
    ]
    if multi:
        notes.append(f"p adjusted: {result.correction} over the "
                     f"{plural(len(result.pairs), 'pair')}")
    if log.get("other_events"):
        notes.append(f"{log['other_events']:,} events neither a click nor a slot shown were "
                     "not used")
    out.append(table("pairs", head, rows, title="Which ranker users prefer: {}",
                     subject=log["path"], data=frozenset({0, 1}), left=frozenset({0, 1}),
                     tones=tuple(tones), notes=tuple(notes)))
    if multi:
        out.append(matrix_section(result, undefined))
    if result.plan_delta is not None:
        out.append(table(
            "plan", ["A", "B", "impressions", "decided", "no-click share", "design effect"],
            [[p.a, p.b, count(p.plan["impressions"], undefined),
              count(p.plan["decided"], undefined),
              f"{p.plan['no_click_share']:.1%}" if defined(p.plan["no_click_share"])
              else undefined, fixed(p.plan["design_effect"], 2, undefined=undefined)]
             for p in result.pairs if p.plan is not None],
            title=f"Impressions needed to detect Delta {result.plan_delta:+g}",
            data=frozenset({0, 1}), left=frozenset({0, 1}),
            notes=(f"two-sided alpha {result.alpha:g}, power {result.power:.0%}, from this "
                   "log's outcomes (their spread, share without a click, and the clustering "
                   f"of impressions in {PLURAL[result.group_by]})",)))
    return out + config_section(result.config)


def matrix_section(result, undefined: str = UNDEFINED) -> Section:
    """Multileaving's preference matrix: Delta of the row's team over the column's, marked *
    where the corrected sign test is significant at alpha."""
    cells = result.matrix()
    rows, tones = [], []
    for team, line in zip(result.teams, cells, strict=True):
        row, tone = [team], [0]
        for cell in line:
            if cell is None:
                row.append("")
                tone.append(0)
                continue
            value, p = cell
            mark = "*" if defined(p) and p < result.alpha else ""
            row.append(fixed(value, sign=True, undefined=undefined) + mark)
            tone.append((1 if value > 0 else -1) if mark else 0)
        rows.append(row)
        tones.append(tuple(tone))
    return table("matrix", ["row over column", *result.teams], rows,
                 title="Preference matrix", data=frozenset({0}), tones=tuple(tones),
                 notes=(f"Delta of the row's team over the column's; *: p adjusted "
                        f"({result.correction}) below {result.alpha:g}",))


def gate_sections(gates) -> list[Section]:
    """The gates: one row each, the verdict last."""
    if not gates:
        return []
    rows = [[g.kind.replace("_", "-"), g.candidate, g.baseline,
             fixed(g.delta, sign=True), _gate_condition(g),
             "passed" if g.passed else "FAILED"] for g in gates]
    passed = all(g.passed for g in gates)
    return [table("gates", ["gate", "candidate", "baseline", "Delta", "condition", "verdict"],
                  rows, title="Gates: " + ("all passed" if passed else "FAILED"),
                  data=frozenset({1, 2}), left=frozenset({0, 1, 2, 4, 5}),
                  tones=tuple((0, 0, 0, 0, 0, 1 if g.passed else -1) for g in gates),
                  passed=passed)]


def _gate_condition(g) -> str:
    if g.kind == "non_inferior":
        return (f"one-sided {1 - g.alpha:.0%} lower bound {fixed(g.bound, sign=True)} > "
                f"{-g.margin:g}")
    if defined(g.bound):
        return f"not (Delta < 0 and p adjusted {g.bound:.3g} < {g.alpha:g})"
    return f"{1 - g.alpha:.0%} interval not below 0"


def simulation_sections(result, undefined: str = UNDEFINED) -> list[Section]:
    params = result.parameters
    model = ", ".join(f"{k} {v}" for k, v in params.items())
    rows = []
    for p in result.pairs:
        rows.append([p["a"], p["b"], fixed(p["delta"], sign=True, undefined=undefined),
                     fixed(p["spread"], undefined=undefined),
                     _band(p["low"], p["high"], undefined),
                     f"{p['agree']:.1%}" if defined(p["agree"]) else undefined,
                     f"{p['significant']:.1%}" if defined(p["significant"]) else undefined,
                     count(p["impressions_needed"], undefined)])
    metric = result.metric
    offline = [[t, fixed(v.get(metric), undefined=undefined)]
               for t, v in result.offline.items()]
    return [
        table("simulation", ["A", "B", "Delta", "spread", "95% of trials", "same sign",
                             f"significant at {result.alpha:g}", "impressions needed"],
              rows, title="Simulated interleaving, {} clicks", subject=result.click_model,
              data=frozenset({0, 1}), left=frozenset({0, 1}),
              notes=(f"{result.trials:,} trials of {result.impressions:,} impressions over "
                     f"{result.queries:,} judged queries, "
                     f"{interleaving_name(result.method, len(result.teams))}, seed "
                     f"{result.seed}",
                     f"click model {result.click_model}: {model}",
                     "Delta: the mean over trials, positive when users prefer A; spread: its "
                     "standard deviation over trials; same sign: the trials whose Delta had "
                     "the mean's sign",
                     f"impressions needed: to detect the mean Delta at two-sided alpha "
                     f"{result.alpha:g} with power {result.power:.0%}")),
        table("offline", ["run", metric], offline, title="Offline, under the truth",
              data=frozenset({0}), notes=("rankeval's own evaluation of each run",)),
        *config_section(result.config),
    ]


def csv_text(result) -> str:
    """One row per pair of teams, full precision (empty: undefined)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if result.to_dict()["kind"] == "interleave_simulation":
        writer.writerow(["a", "b", "delta", "spread", "low", "high", "agree", "significant",
                         "impressions_needed", f"{result.metric}_a", f"{result.metric}_b"])
        for p in result.pairs:
            writer.writerow([p["a"], p["b"], exact(p["delta"]), exact(p["spread"]),
                             exact(p["low"]), exact(p["high"]), exact(p["agree"]),
                             exact(p["significant"]), exact(p["impressions_needed"]),
                             exact(result.offline[p["a"]].get(result.metric)),
                             exact(result.offline[p["b"]].get(result.metric))])
        return out.getvalue()
    writer.writerow(["a", "b", "wins", "ties", "losses", "no_click", "delta", "ci_low",
                     "ci_high", "p_value", "p_adjusted", "groups", "impressions_needed"])
    for p in result.pairs:
        writer.writerow([p.a, p.b, exact(p.wins), exact(p.ties), exact(p.losses), p.no_click,
                         exact(p.delta), exact(p.low), exact(p.high), exact(p.p_value),
                         exact(p.p_adjusted), p.groups,
                         exact(p.plan["impressions"]) if p.plan else ""])
    return out.getvalue()


def text(value: object) -> str:
    """Data (team names, paths) as HTML text."""
    return html.escape(visible(value))


def bars(result) -> list[tuple[str, str]]:
    """Per pair: (caption, inline SVG): a bar of wins of A, ties and wins of B, and Delta
    with its interval on [-0.5, 0.5] (scores only)."""
    out = []
    for p in result.pairs:
        total = p.wins + p.ties + p.losses
        width, height = 420, 64
        parts = [(p.wins, "var(--good)", "wins A"), (p.ties, "var(--muted)", "ties"),
                 (p.losses, "var(--bad)", "wins B")]
        x = 10.0
        svg = [f'<svg viewBox="0 0 {width} {height}" role="img" '
               f'aria-label="{text(p.a)} against {text(p.b)}">']
        for value, colour, label in parts:
            w = 400 * value / total if total else 0
            if w > 0:
                svg.append(f'<rect x="{x:.1f}" y="4" width="{w:.1f}" height="18" '
                           f'fill="{colour}"><title>{label}: {_counts(value)}</title></rect>')
            x += w
        axis = 10 + 400 * 0.5
        svg.append(f'<line x1="10" y1="44" x2="410" y2="44" stroke="var(--grid)"/>'
                   f'<line x1="{axis}" y1="34" x2="{axis}" y2="54" stroke="var(--muted)"/>')
        if defined(p.low) and defined(p.high):
            lo, hi = (10 + 400 * (v + 0.5) for v in (p.low, p.high))
            svg.append(f'<line x1="{lo:.1f}" y1="44" x2="{hi:.1f}" y2="44" '
                       'stroke="var(--accent)" stroke-width="3"/>')
        if defined(p.delta):
            d = 10 + 400 * (p.delta + 0.5)
            svg.append(f'<circle cx="{d:.1f}" cy="44" r="4" fill="var(--accent)">'
                       f'<title>Delta {p.delta:+.4f}</title></circle>')
        svg.append('<text x="10" y="62" font-size="9">-0.5</text>'
                   f'<text x="{axis - 4}" y="62" font-size="9">0</text>'
                   '<text x="392" y="62" font-size="9">+0.5</text></svg>')
        caption = (f"{text(p.a)} against {text(p.b)}: {_counts(p.wins)} wins (green), "
                   f"{_counts(p.ties)} ties (grey), {_counts(p.losses)} losses (red); Delta "
                   f"{fixed(p.delta, sign=True, undefined='undefined')} "
                   f"{_band(p.low, p.high, 'undefined')} over {p.groups:,} groups")
        out.append((caption, "".join(svg)))
    return out


def trajectory_svg(result) -> str:
    """Delta of the first pair with its interval as the impressions came in (an inline SVG
    line over a band); empty without checkpoints. The y labels stand right-aligned left of
    the plot, the x labels in a row of their own under it (they once met at its corner)."""
    points = [(n, d, lo, hi) for n, d, lo, hi in result.trajectory
              if defined(d) and defined(lo) and defined(hi)]
    if not points:
        return ""
    width, plot, left, right = 420, 160, 40, 16  # plot: the plotting area's height
    most = max(n for n, *_ in points)
    top = max(0.05, *(abs(v) for _, d, lo, hi in points for v in (d, lo, hi)))

    def x(n: float) -> float:
        return left + (width - left - right) * n / most

    def y(v: float) -> float:
        return plot / 2 - (plot / 2 - 12) * v / top

    band = " ".join(f"{x(n):.1f},{y(hi):.1f}" for n, _, _, hi in points) + " " + " ".join(
        f"{x(n):.1f},{y(lo):.1f}" for n, _, lo, _ in reversed(points))
    line = " ".join(f"{x(n):.1f},{y(d):.1f}" for n, d, _, _ in points)
    a, b = result.pairs[0].a, result.pairs[0].b
    y_labels = "".join(f'<text x="{left - 4}" y="{y(v) + 3:.1f}" font-size="9" '
                       f'text-anchor="end">{v:+.2f}</text>' for v in (top, 0.0, -top))
    row = plot + 12  # the x labels' baseline, under the plotting area
    return (f'<svg viewBox="0 0 {width} {plot + 16}" role="img" aria-label="Delta of '
            f'{text(a)} over {text(b)} as the impressions came in">'
            f'<polygon points="{band}" fill="var(--accent)" fill-opacity="0.2"/>'
            f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - right}" y2="{y(0):.1f}" '
            'stroke="var(--muted)"/>'
            f'<polyline points="{line}" fill="none" stroke="var(--accent)" stroke-width="2"/>'
            f'{y_labels}'
            f'<text x="{left}" y="{row}" font-size="9">0</text>'
            f'<text x="{width / 2 + (left - right) / 2:.0f}" y="{row}" font-size="9" '
            'text-anchor="middle">impressions</text>'
            f'<text x="{width - right}" y="{row}" font-size="9" text-anchor="end">'
            f'{most:,}</text></svg>')
