"""What ``rankeval score`` adds to an evaluation beyond the library's ``evaluate``: the margin
gates against a baseline's per-user file (``against_file``). The command's job assembly joins
it with the request builder (#47, S16)."""

from __future__ import annotations

from rankeval.analysis.equivalence import Margin, Verdict, judge
from rankeval.api.power import from_files
from rankeval.errors import OptionError


def against_file(margins: list[Margin], ev, path: str, alpha: float,
                 run: str = "this run") -> list[Verdict]:
    """The margin gates of ``score``: this evaluation's per-user values against a baseline's
    per-user file (``score --per-user`` of the baseline run), the users paired by id."""
    try:
        paired, _ = from_files(path, ev.per_user_table(), [m.metric for m in margins])
    except OptionError as exc:
        raise OptionError(f"{{opt:baseline_per_user}} {path}: {exc.render()}") from None
    return [judge(m, run, *paired[m.metric], alpha) for m in margins]
