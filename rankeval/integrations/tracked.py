"""What a tracker (MLflow, W&B) logs of a result, whatever command made it: its numbers, its
settings, its JSON report and, when the values are on this machine, its per-user table.

One row of ``KINDS`` per kind of result (a score's ``Evaluation``, an interleaving's
``InterleaveScore``); the trackers read only ``Tracked``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankeval.report import json as json_report
from rankeval.results.evaluation import Evaluation
from rankeval.results.interleaving import InterleaveScore


@dataclass(frozen=True)
class Tracked:
    """A result as the trackers log it: numbers (None or NaN: undefined, named apart),
    settings as text, the JSON report, and the per-user table (None: not on this machine,
    or the result has none)."""

    metrics: dict[str, float | None]
    params: dict[str, str]
    report: str
    per_user: Any = None  # a pyarrow Table
    html: Callable[[], str] | None = None  # the HTML report, when it can be drawn


def _text(value: Any) -> str:
    """A setting as MLflow stores a param: text, at most 500 characters."""
    return (value if isinstance(value, str) else json.dumps(value))[:500]


def _evaluation(ev: Evaluation) -> Tracked:
    gold = dict(ev.gold.rows()) if ev.gold is not None else {}
    here = ev.store.here

    def html() -> str:
        from rankeval.report import html as html_report  # optional dependency: matplotlib

        return html_report.render(ev)

    return Tracked(metrics={**ev.metrics, **gold},
                   params={k: _text(v) for k, v in ev.to_dict()["settings"].items()},
                   report=json_report.render(ev),
                   per_user=ev.per_user_table() if here else None,
                   html=html if here else None)


def _interleave(result: InterleaveScore) -> Tracked:
    """Per pair of teams: Delta with its interval, the p-value (corrected with multileaving),
    wins, losses and ties, named ``delta[a-b]``, ``delta[a-b]:low``, ..."""
    metrics: dict[str, float | None] = {}
    for p in result.pairs:
        pair = f"[{p.a}-{p.b}]"
        metrics |= {f"delta{pair}": p.delta, f"delta{pair}:low": p.low,
                    f"delta{pair}:high": p.high, f"p_value{pair}": p.p_value,
                    f"p_adjusted{pair}": p.p_adjusted, f"wins{pair}": p.wins,
                    f"losses{pair}": p.losses, f"ties{pair}": p.ties}
    given = result.to_dict()
    params = {"method": given["method"], "teams": given["teams"], "clicks": given["clicks"],
              "group_by": given["group_by"], "ci": given["ci"],
              "correction": given["correction"], "log": given["log"].get("path", "")}
    return Tracked(metrics=metrics, params={k: _text(v) for k, v in params.items()},
                   report=json_report.render_interleave(result))


KINDS: dict[type, Callable[[Any], Tracked]] = {Evaluation: _evaluation,
                                               InterleaveScore: _interleave}


def tracked(result: Any) -> Tracked:
    """``result`` as the trackers log it (a row of ``KINDS`` by its type)."""
    for kind, make in KINDS.items():
        if isinstance(result, kind):
            return make(result)
    raise TypeError(f"the trackers log {', '.join(k.__name__ for k in KINDS)}, "
                    f"not {type(result).__name__}")
