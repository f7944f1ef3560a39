"""trec_eval's lines for its prefs_* measures (``preferences``): per query (``-q``), then
``runid``, ``num_q`` and each measure over the queries, in trec_eval's order; counts as
integers, the rest to 4 decimals."""

from __future__ import annotations

import json

from rankeval.io.formats.trec import check_field
from rankeval.results.preferences import COUNTED


def _shown(name: str, value: float) -> str:
    return f"{int(value)}" if name in COUNTED else f"{value:6.4f}"


def render(pe, per_user: bool = False, summary: bool = True) -> str:
    measures = [m for m in pe.settings.preference_measures if m != "num_q"]
    lines = []
    if per_user:
        check_field("the query ids", pe.users, ("all",))
        for i, user in enumerate(pe.users):
            lines += [f"{m:<22}\t{user}\t{_shown(m, pe.values[m][i])}\n" for m in measures]
    if not summary:
        return "".join(lines)
    if pe.settings.runid:
        lines.append(f"{'runid':<22}\tall\t{pe.runid}\n")
    if "num_q" in pe.settings.preference_measures:
        lines.append(f"{'num_q':<22}\tall\t{pe.queries}\n")
    lines += [f"{m:<22}\tall\t{_shown(m, pe.metrics[m])}\n" for m in measures]
    return "".join(lines)


def render_json(pe) -> str:
    return json.dumps(pe.to_dict(), indent=2) + "\n"
