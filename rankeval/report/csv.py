"""CSV: one row per metric@K (score) or per run and metric (compare), full-precision values."""

from __future__ import annotations

import csv
import io

from rankeval.registry import REGISTRY
from rankeval.report import model
from rankeval.report.numbers import exact


def render(ev) -> str:
    """One row per metric@K: ``metric,name,k,value,scope`` with full-precision values (an
    empty value: undefined);
    scope is ``per_user`` (a mean over users), ``zscore`` (a mean of the users' z-scores,
    ``--zscores``) or ``corpus`` (one value for the run); with
    ``--stats``, one more column per statistic (empty for corpus metrics)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    stats = list(next(iter(ev.distribution.values()))) if ev.distribution else []
    writer.writerow(["metric", "name", "k", "value", "scope", *stats])
    for spec in ev.specs:
        shape = ev.distribution.get(str(spec), {})
        # the mean of z-scores (--zscores) is not the metric's mean: scope zscore
        zscored = ev.zscores is not None and REGISTRY[spec.name].measured
        writer.writerow([str(spec), spec.name, spec.column, exact(ev.metrics[str(spec)]),
                         "zscore" if zscored else REGISTRY[spec.name].scope,
                         *(exact(shape[s]) if s in shape else "" for s in stats)])
    if ev.samples is not None:  # rows "ndcg@10:sd": the spread over sampled rankings
        for spec in ev.specs:
            if str(spec) in ev.samples.spread:
                writer.writerow([f"{spec}:sd", spec.name, spec.column,
                                 exact(ev.samples.spread[str(spec)]), "samples",
                                 *([""] * len(stats))])
    for metric, totals in ev.group_exposure.items():  # rows "awrf@10[exposure:acme]"
        spec = next(s for s in ev.specs if str(s) == metric)
        for group, exposure, target, _ in totals.rows():
            for what, value in (("exposure", exposure), ("target", target)):
                writer.writerow([f"{metric}[{what}:{group}]", spec.name, spec.column,
                                 exact(value), "group", *([""] * len(stats))])
    for column, rows in ev.gaps.items():  # rows "ndcg@10[gap:country]"
        for gap in rows:
            spec = next(s for s in ev.specs if str(s) == gap.metric)
            writer.writerow([f"{gap.metric}[gap:{column}]", spec.name, spec.column,
                             exact(gap.gap), "gap", *([""] * len(stats))])
    if ev.gold is not None:  # --gold: rows "ndcg@10[ppi]", "ndcg@10[ppi:low]", ...
        for name, value in ev.gold.rows():
            spec = next(s for s in ev.specs if str(s) == name.partition("[")[0])
            writer.writerow([name, spec.name, spec.column, exact(value), "gold",
                             *([""] * len(stats))])
    for column, segments in ev.segments.items():  # rows "ndcg@10[country=DE]"
        for seg in segments:
            for metric, value in seg.metrics.items():
                spec = next(s for s in ev.specs if str(s) == metric)
                writer.writerow([f"{metric}[{column}={seg.value}]", spec.name, spec.column,
                                 exact(value), "segment", *([""] * len(stats))])
    return out.getvalue()


def render_compare(result) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "metric", "mean", "baseline_mean", "delta", "ci_low", "ci_high",
                     "p_value", "p_adjusted", "significant", "effect_size", "wins", "ties",
                     "losses", "baseline"])
    named = [(c, c.metric) for c in result.cells]
    named += [(c, f"{c.metric}[{column}={row['value']}]")  # per segment
              for column, rows in result.segments.items() for row in rows for c in row["cells"]]
    # all pairs (--all-pairs): a row per ordered pair, run against "vs <run>"
    named_pairs = [(pairs, i, j) for pairs in result.pairs for i in range(len(pairs.runs))
                   for j in range(len(pairs.runs)) if i < j]
    for c, metric in named:
        s = c.stats
        tested = c.tested and c.defined
        writer.writerow([c.run, metric, exact(s.mean_b), exact(s.mean_a), exact(s.delta),
                         exact(s.ci_low), exact(s.ci_high), exact(s.p_value),
                         exact(c.p_adjusted), "" if c.significant is None else c.significant,
                         exact(s.effect_size), *((s.wins, s.ties, s.losses) if tested
                                                 else ("", "", "")), c.baseline])
    for pairs, i, j in named_pairs:
        a, b = pairs.runs[i], pairs.runs[j]
        writer.writerow([b, f"{pairs.metric}[vs {a}]", exact(pairs.means[j]),
                         exact(pairs.means[i]), exact(pairs.difference[i][j]), "", "", "",
                         exact(pairs.p_adjusted[i][j]), pairs.significant[i][j], "", "", "",
                         "", a])
    if result.gold is not None:  # --gold: rows "ndcg@10[ppi]", the PPI difference in "delta"
        for d in result.gold.differences:
            e = d.estimate.ppi
            writer.writerow([d.run, f"{d.metric}[ppi]", "", "", exact(e.value), exact(e.low),
                             exact(e.high), exact(d.p_value), exact(d.p_adjusted),
                             "" if d.significant is None else d.significant, "", "", "", "",
                             d.baseline])
    for o in result.overlaps:  # --rbo: rows "rbo_ext(p=0.9)", the mean in "mean"
        for kind in ("ext", "min", "max", "residual"):
            writer.writerow([o.run, f"rbo_{kind}(p={o.p!r})", exact(o.mean(kind)),
                             *([""] * 11), o.baseline])
    return out.getvalue()


def render_ope(result) -> str:
    return model("ope").csv_text(result)


def render_sampled(result) -> str:
    return model("sampled").csv_text(result)


def render_power(result) -> str:
    """One row per metric: every number of the analysis at full precision (empty:
    undefined or not asked)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    fields = ["metric", "users", "baseline_mean", "mean_difference", "sd", "mde", "effect",
              "achieved", "users_needed", "n_exact", "anova_users"]
    writer.writerow(fields)
    for r in result.rows:
        values = r.to_dict()
        writer.writerow([r.metric, r.users, *(
            "" if values[f] is None else values[f] if isinstance(values[f], int)
            else exact(values[f]) for f in fields[2:])])
    return out.getvalue()


def render_agree(result) -> str:
    return model("agree").csv_text(result)
def render_interleave(result) -> str:
    return model("interleave").csv_text(result)
