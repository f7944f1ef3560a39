"""The report of ``rankeval agree``: its sections (the pairs each qrels judged, the agreement
on their labels, per metric the system orderings, the swapped pairs and the per-query
correlation) and its CSV rows. The table and Markdown draw the sections; JSON is the result's
own ``to_dict``."""

from __future__ import annotations

import csv
import io
import math

from rankeval.errors import plural
from rankeval.report.blocks import Section, config_section, table
from rankeval.report.comparison import correction_words
from rankeval.report.numbers import UNDEFINED, exact, fixed


def grade_text(g: float) -> str:
    return f"{g:g}"


def sections(result, undefined: str = UNDEFINED) -> list[Section]:
    c, lab = result.coverage, result.labels
    h, m = result.human, result.machine
    out = [table(
        "pairs", ["judged by", "pairs", "of shared queries", "queries"],
        [["both", f"{c.pairs_both:,}", f"{c.pairs_both:,}", f"{c.queries_both:,}"],
         ["human only", f"{c.pairs_human_only:,}", f"{c.human_only_in_shared:,}",
          f"{c.queries_human_only:,}"],
         ["machine only", f"{c.pairs_machine_only:,}", f"{c.machine_only_in_shared:,}",
          f"{c.queries_machine_only:,}"]],
        title="Judged pairs", notes=(f"human: {h.label}; machine: {m.label}",))]
    grades = [grade_text(g) for g in lab.grades]
    out.append(table(
        "confusion", ["human \\ machine", *grades, "total"],
        [[g, *(f"{v:,}" for v in row), f"{row.sum():,}"]
         for g, row in zip(grades, lab.confusion, strict=True)]
        + [["total", *(f"{v:,}" for v in lab.confusion.sum(axis=0)),
            f"{lab.confusion.sum():,}"]],
        title="Grades of the pairs both judged",
        notes=("rows: the human grade; columns: the machine's",)))
    rows = [["observed agreement", fixed(lab.observed, undefined=undefined)],
            *([f"Cohen's kappa ({k})", fixed(v, undefined=undefined)]
              for k, v in lab.kappa.items()),
            *([f"Krippendorff's alpha ({k})", fixed(v, undefined=undefined)]
              for k, v in lab.alpha.items()),
            ["mean grade (human)", fixed(lab.mean_human, undefined=undefined)],
            ["mean grade (machine)", fixed(lab.mean_machine, undefined=undefined)],
            ["machine higher", f"{lab.machine_higher:,}"],
            ["machine lower", f"{lab.machine_lower:,}"]]
    out.append(table("agreement", ["statistic", "value"], rows, title="Label agreement",
                     notes=(*_why(lab.undefined, ("kappa", "krippendorff_alpha")),
                            "weighted kappa and interval alpha weigh a disagreement by the "
                            "grades' distance (linear |x - y|, quadratic (x - y)^2)")))
    out.append(table(
        "grades", ["grade", "human", "machine", "both", "precision", "recall", "F1"],
        [[grade_text(r.grade), f"{r.human:,}", f"{r.machine:,}", f"{r.both:,}",
          fixed(r.precision, undefined=undefined), fixed(r.recall, undefined=undefined),
          fixed(r.f1, undefined=undefined)] for r in lab.per_grade],
        title="The machine's precision and recall per grade",
        notes=_why(lab.undefined, ("per_grade",))))
    b = lab.binary
    relevant = "relevance > 0" if b.threshold is None else f"relevance >= {b.threshold:g}"
    out.append(table(
        "threshold", ["precision", "recall", "F1", "kappa", "TP", "FP", "FN", "TN"],
        [[fixed(b.precision, undefined=undefined), fixed(b.recall, undefined=undefined),
          fixed(b.f1, undefined=undefined), fixed(b.kappa, undefined=undefined),
          f"{b.tp:,}", f"{b.fp:,}", f"{b.fn:,}", f"{b.tn:,}"]],
        title=f"Relevant ({relevant}), the human label the truth", left=frozenset(),
        notes=_why(lab.undefined, ("at_threshold",))))
    if result.orderings:
        out.extend(_systems(result, undefined))
    return out + config_section(result.config)


def _why(undefined: dict[str, str], parts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{key}: undefined, {why}" for key, why in undefined.items()
                 if key.split(".")[0] in parts)


def _systems(result, undefined: str) -> list[Section]:
    q = result.queries
    out = [table(
        "orderings", ["metric", "runs", "Kendall's tau", "tau_AP", "Spearman", "swaps",
                      "significant", "per-query r", "per-query rho"],
        [[o.metric, f"{len(o.runs)}", fixed(o.kendall_tau, undefined=undefined),
          fixed(o.tau_ap, undefined=undefined), fixed(o.spearman, undefined=undefined),
          f"{len(o.swaps)} of {o.pairs}",
          f"{sum(bool(s.significant) for s in o.swaps)}",
          fixed(o.query_pearson, undefined=undefined),
          fixed(o.query_spearman, undefined=undefined)] for o in result.orderings],
        title="System orderings, human against machine",
        notes=(f"over the {plural(q['shared'], 'query', 'queries')} both qrels evaluate for "
               f"every run; tau_AP: "
               "the machine's ordering against the human one (Yilmaz et al. 2008); swaps: "
               "pairs of runs ordered the other way, significant under the human qrels by "
               f"the paired {result.options['test']} test (corrected over the swaps, "
               f"{correction_words(result.options, swaps_tested(result))}; "
               f"alpha {result.options['alpha']:g}); per-query "
               "r and rho: Pearson and Spearman over every (run, query) value",
               *(f"{o.metric}: {key} undefined, {why}" for o in result.orderings
                 for key, why in o.undefined.items() if "per_run" not in key)))]
    for o in result.orderings:
        hr = {r: i for i, r in enumerate(o.order("human"), 1)}
        mr = {r: i for i, r in enumerate(o.order("machine"), 1)}
        out.append(table(
            f"runs:{o.metric}", ["run", "human", "rank", "machine", "rank"],
            [[r, fixed(hv, undefined=undefined), f"{hr[r]}", fixed(mv, undefined=undefined),
              f"{mr[r]}"] for r, hv, mv in sorted(zip(o.runs, o.human, o.machine,
                                                       strict=True), key=lambda t: hr[t[0]])],
            title=f"{o.metric} under each qrels", data=frozenset({0}),
            tones=tuple((0, 0, 0, 0, 0 if hr[r] == mr[r] else -1) for r in
                        sorted(o.runs, key=lambda r: hr[r]))))
        if o.swaps:
            out.append(table(
                f"swaps:{o.metric}", ["human order", "human", "machine", "queries", "p",
                                      "p adjusted", "significant"],
                [[f"{s.above} > {s.below}", f"{fixed(s.human[0])} > {fixed(s.human[1])}",
                  f"{fixed(s.machine[0])} < {fixed(s.machine[1])}", f"{s.queries:,}",
                  fixed(s.p_value, undefined=undefined),
                  fixed(s.p_adjusted, undefined=undefined),
                  undefined if s.significant is None else "yes" if s.significant else "no"]
                 for s in o.swaps],
                title=f"Pairs {o.metric} orders the other way", data=frozenset({0}),
                left=frozenset({0, 6}),
                tones=tuple((0, 0, 0, 0, 0, 0, -1 if s.significant else 0)
                            for s in o.swaps)))
    return out


FIELDS = ["section", "metric", "subject", "statistic", "value"]


def csv_text(result) -> str:
    """One row per number, long form (section, metric, subject, statistic, value): every
    number at full precision, an undefined one an empty cell."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(FIELDS)
    c, lab = result.coverage, result.labels
    for key, value in {**c.to_dict()["pairs"], **{f"queries_{k}": v for k, v in
                                                  c.to_dict()["queries"].items()}}.items():
        w.writerow(["pairs", "", "", key, value])
    for hi, row in zip(lab.grades, lab.confusion, strict=True):
        for mi, v in zip(lab.grades, row, strict=True):
            w.writerow(["confusion", "", f"{hi:g}|{mi:g}", "pairs", int(v)])
    w.writerow(["labels", "", "", "observed_agreement", exact(lab.observed)])
    for k, v in lab.kappa.items():
        w.writerow(["labels", "", "", f"kappa_{k}", exact(v)])
    for k, v in lab.alpha.items():
        w.writerow(["labels", "", "", f"alpha_{k}", exact(v)])
    for r in lab.per_grade:
        for stat in ("human", "machine", "both"):
            w.writerow(["grade", "", f"{r.grade:g}", stat, getattr(r, stat)])
        for stat in ("precision", "recall", "f1"):
            w.writerow(["grade", "", f"{r.grade:g}", stat, exact(getattr(r, stat))])
    b = lab.binary
    for stat in ("tp", "fp", "fn", "tn"):
        w.writerow(["threshold", "", "", stat, getattr(b, stat)])
    for stat in ("precision", "recall", "f1", "kappa"):
        w.writerow(["threshold", "", "", stat, exact(getattr(b, stat))])
    for o in result.orderings:
        for stat in ("kendall_tau", "tau_ap", "spearman", "query_pearson", "query_spearman"):
            w.writerow(["ordering", o.metric, "", stat, exact(getattr(o, stat))])
        for r, hv, mv in zip(o.runs, o.human, o.machine, strict=True):
            w.writerow(["run", o.metric, r, "human", exact(hv)])
            w.writerow(["run", o.metric, r, "machine", exact(mv)])
        for s in o.swaps:
            pair = f"{s.above}>{s.below}"
            w.writerow(["swap", o.metric, pair, "p_value", exact(s.p_value)])
            w.writerow(["swap", o.metric, pair, "p_adjusted", exact(s.p_adjusted)])
            w.writerow(["swap", o.metric, pair, "significant",
                        "" if s.significant is None else str(s.significant).lower()])
    return out.getvalue()


def swaps_tested(result) -> int:
    """The swaps the correction counts: every defined p-value of every metric."""
    return sum(math.isfinite(s.p_value) for o in result.orderings for s in o.swaps)
