"""The report of ``rankeval sampled``: per run, each metric as sampled and as corrected, and
the pairs of runs a correction orders the other way; its CSV rows."""

from __future__ import annotations

import csv
import io

from rankeval.errors import plural
from rankeval.report.blocks import Section, config_section, table
from rankeval.report.numbers import exact, fixed

# What ranked a run's held-out items among its negatives (``SampledResult.ordered_by``)
RANKED_BY = {"rank": "the file's ranks", "score": "score"}


def sections(result) -> list[Section]:
    out = []
    sampling = "with" if result.replacement else "without"
    for run in result.runs:
        out.append(table(
            f"sampled:{run.name}", ["metric", "sampled", "rank estimate", f"bv ({result.gamma:g})"],
            [[label, *(fixed(v[e]) for e in ("sampled", "rank_estimate", "bv"))]
             for label, v in run.values.items()],
            title="Sampled metrics of {}", subject=run.name,
            notes=(f"{run.instances:,} held-out items, each ranked among "
                   f"{plural(result.negatives, 'negative')} sampled {sampling} replacement from "
                   f"{result.candidates_text()}"
                   + (f" (ranked by {RANKED_BY[result.ordered_by.get(run.name, 'score')]}, "
                      f"ties {result.ties})" if result.ties else "")
                   + "; rank estimate: the metric at the expected full rank; bv: Krichene "
                   "and Rendle's bias-variance correction",)))
    if result.flips:
        out.append(table("flips", ["metric", "sampled order", "reversed by"],
                         [[m, _order(result, m, a, b), ", ".join(how)]
                          for (m, a, b), how in grouped(result.flips).items()],
                         title="Orders the corrections reverse", data=frozenset({1}),
                         left=frozenset({0, 1, 2}),
                         notes=("the sampled metric may rank these runs the wrong way: "
                                "compare them on full rankings",)))
    return out + config_section(result.config)


def grouped(flips) -> dict[tuple[str, str, str], list[str]]:
    """(metric, run, run) -> the corrections that reverse the pair's sampled order."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for m, a, b, how in flips:
        out.setdefault((m, a, b), []).append(how.replace("_", " "))
    return out


def _order(result, label: str, a: str, b: str) -> str:
    runs = {r.name: r.values[label]["sampled"] for r in result.runs}
    return f"{a} > {b}" if runs[a] > runs[b] else f"{b} > {a}"


def csv_text(result) -> str:
    """One row per run and metric: every estimator at full precision."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "metric", "sampled", "rank_estimate", "bv", "instances"])
    for run in result.runs:
        for label, v in run.values.items():
            writer.writerow([run.name, label, exact(v["sampled"]), exact(v["rank_estimate"]),
                             exact(v["bv"]), run.instances])
    return out.getvalue()
