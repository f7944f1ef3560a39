"""The tables for people of a result with a gold sample (SPEC section 12): ``score --gold``'s
machine-only, gold-only and PPI estimates, strata and plan; ``compare --gold``'s differences
under the machine judgments and by PPI, and where the two disagree."""

from __future__ import annotations

from rankeval.errors import plural
from rankeval.report.blocks import Section, table
from rankeval.report.comparison import correction_words, p_text
from rankeval.report.numbers import UNDEFINED, count, defined, fixed


def _interval(i, undefined: str = UNDEFINED, sign: bool = False) -> str:
    if not defined(i.low):
        return undefined
    return f"[{fixed(i.low, sign=sign)}, {fixed(i.high, sign=sign)}]"


def _gold_caveats(g) -> list[str]:
    """What a --gold result says of itself: too few gold queries, metrics not estimated."""
    notes = []
    if g.few:
        notes.append(f"only {g.gold_queries} gold queries (fewer than 30): the intervals "
                     "are rough")
    if g.not_estimated:
        notes.append("no PPI estimate: " + "; ".join(f"{m} ({why})"
                                                     for m, why in g.not_estimated.items()))
    return notes


def gold(ev, undefined: str = UNDEFINED) -> list[Section]:
    """``--gold``: per metric the machine-only, gold-only and PPI estimates, the judge's bias
    and what the machine judgments were worth; the strata; the plan; the assumption."""
    g = ev.gold
    if g is None:
        return []
    level = f"{g.level:.0%}"
    rows = [[m, fixed(e.machine.value, undefined=undefined),
             fixed(e.gold.value, undefined=undefined), fixed(e.ppi.value, undefined=undefined),
             _interval(e.ppi, undefined), fixed(e.lam, 2, undefined="per stratum" if e.strata
                                                else undefined),
             fixed(e.bias.value, sign=True, undefined=undefined),
             _interval(e.bias, undefined, sign=True),
             f"{fixed(e.effective_gold, 1, undefined=undefined)} of {e.gold_queries:,}"]
            for m, e in ((m, x.estimate) for m, x in g.metrics.items())]
    first = next(iter(g.metrics.values()), None)
    queries = plural(first.estimate.gold_queries + first.estimate.other_queries if first
                     else g.truth_queries, "query", "queries")
    notes = [f"machine: the machine judgments of all {queries} (biased when the "
             f"judge is); gold: the {g.gold_queries:,} gold queries alone; PPI: {g.method}, "
             f"with its {level} interval; bias: machine minus gold on the gold queries "
             "(positive: the judge overrates), with its interval; effective gold: the gold "
             "queries alone that would give the PPI interval's width",
             f"assumption: {g.assumption}",
             "the gates (--fail-under, --fail-over, --max-drop) judge the PPI estimate; "
             "--non-inferior and --equivalent the PPI estimate of the paired difference, "
             "where the baseline's per-user file holds gold values (each verdict says which)"]
    notes += _gold_caveats(g)
    out = [table("gold", ["metric", "machine", "gold", "PPI", f"{level} interval", "lambda",
                          "bias", "bias interval", "effective gold"], rows,
                 title="With the gold sample {}", subject=g.path, notes=tuple(notes))]
    if first is not None and first.estimate.strata:
        out.append(table("gold_strata", ["stratum", "queries", "gold", "rate", "weight"],
                         [[s.name, f"{s.gold_queries + s.other_queries:,}",
                           f"{s.gold_queries:,}", f"{s.rate:.1%}", fixed(s.weight)]
                          for s in first.estimate.strata],
                         title=f"Strata of {g.strata_column} (for {first.metric})",
                         data=frozenset({0})))
    if g.plan_half_width is not None:
        out.append(table("gold_plan", ["metric", "gold alone", "with PPI"],
                         [[m, count(x.plan[0], "unreachable"), count(x.plan[1], "unreachable")]
                          for m, x in g.metrics.items() if x.plan is not None],
                         title=f"Gold queries for a {level} interval of half-width "
                               f"{g.plan_half_width:g}",
                         notes=(f"of {queries} in all, from the observed variances "
                                "(the closed form of SPEC §12); unreachable: not even by "
                                "judging every query by hand",)))
    return out


def _significance(significant: bool | None) -> str:
    return "undefined" if significant is None else "yes" if significant else "no"


def _said(significant: bool | None) -> str:
    return ("significance undefined" if significant is None else
            "significant" if significant else "not significant")


def gold_compare(result, undefined: str = UNDEFINED) -> list[Section]:
    """``compare --gold``: per run, baseline and metric the difference under the machine
    judgments alone and its PPI++ estimate with its interval and p-value; below, the
    comparisons where the two disagree on the sign or on significance."""
    g = result.gold
    if g is None:
        return []
    several = len(result.baselines) > 1
    level = f"{g.level:.0%}"
    rows, tones = [], []
    for d in g.differences:
        e = d.estimate
        rows.append([d.run if not several else f"{d.run} vs {d.baseline}", d.metric,
                     fixed(d.machine_delta, sign=True, undefined=undefined),
                     _significance(d.machine_significant),
                     fixed(e.ppi.value, sign=True, undefined=undefined),
                     _interval(e.ppi, undefined, sign=True),
                     fixed(e.lam, 2, undefined="per stratum" if e.strata else undefined),
                     p_text(d.p_value), p_text(d.p_adjusted), _significance(d.significant),
                     " and ".join(d.disagreement) or "agree"])
        tones.append((0,) * 10 + ((-1,) if d.disagreement else (0,)))
    o = result.options
    notes = [f"machine: the difference under the machine judgments alone ({o['test']} test "
             f"over the {plural(len(result.shared_users), 'user')} compared, "
             f"{correction_words(o)}); "
             f"PPI: {g.method} on the per-query differences, the {g.gold_queries:,} gold "
             f"queries labelled, with its {level} interval and z-test, corrected "
             f"{correction_words(vars(g))}, significant at {g.alpha:g}; disagree: where the two "
             "differ on the sign or on significance",
             f"assumption: {g.assumption}"]
    for d in g.disagreements:
        label = d.run if not several else f"{d.run} vs {d.baseline}"
        notes.append(
            f"disagree on {' and '.join(d.disagreement)}: {label} on {d.metric}: the machine "
            f"judgments say {fixed(d.machine_delta, sign=True)} "
            f"({_said(d.machine_significant)}), PPI "
            f"{fixed(d.estimate.ppi.value, sign=True)} "
            f"({_said(d.significant)}, p adjusted "
            f"{p_text(d.p_adjusted)})")
    if not g.disagreements and g.differences:
        notes.append("the machine-only and the PPI comparisons agree on every sign and "
                     "significance")
    notes += _gold_caveats(g)
    return [table("gold", ["run", "metric", "machine", "machine significant", "PPI",
                           f"{level} interval", "lambda", "p", "p adjusted",
                           "PPI significant", "disagree"], rows,
                  title="Differences from the baseline with the gold sample {}",
                  subject=g.path, notes=tuple(notes), left=frozenset({0, 1, 10}),
                  data=frozenset({0}), tones=tuple(tones))]
