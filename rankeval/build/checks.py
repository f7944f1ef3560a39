"""The build's checks of the inputs: repeated pairs, the file's own ranks, padded ids and
grades past ERR's scale. Each is an error naming file rows (through ``errors.report``, so
``validate`` collects them) or a counted notice."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.ordering import TIE_AWARE, scores_against_ranks, take
from rankeval.build.samples import JOIN
from rankeval.conventions import ROWS
from rankeval.errors import InputError, report
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.encode import padded
from rankeval.io.load import Predictions, Truth
from rankeval.kernels.distinct import count_distinct
from rankeval.notices import Notice
from rankeval.params import gain_pairs, settings_for
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.users import Codes


def named_by(codes: Codes, role: str) -> tuple[pa.Array, np.ndarray, pa.Array, np.ndarray]:
    """The ids of one input's rows as the codes give them: (user dictionary, user codes, item
    dictionary, item codes)."""
    if role == "truth":
        return codes.user_ids, codes.t_user, codes.item_ids, codes.t_item
    return codes.user_ids, codes.p_user, codes.item_ids, codes.p_item


def report_duplicates(data: Predictions | Truth, rows: np.ndarray, hint: str | None,
                      named: tuple | None = None) -> None:
    """The repeated (user, item) pairs at file ``rows``, named by the input's own id columns
    or by ``named`` (``named_by``: the codes, when the ids are released)."""
    if named is None:
        take_rows = from_numpy(rows[:5])
        users = data.user.take(take_rows).to_pylist()
        items = data.item.take(take_rows).to_pylist()
        sample = getattr(data, "sample", None)
        if sample is not None:  # a stochastic run's own ids: named as the composites are
            users = [f"{u}{JOIN}{s}" for u, s in zip(users, sample.take(take_rows).to_pylist(),
                                                      strict=True)]
    else:
        user_ids, user, item_ids, item = named
        users = user_ids.take(from_numpy(user[rows[:5]])).to_pylist()
        items = item_ids.take(from_numpy(item[rows[:5]])).to_pylist()
    # a stochastic run's users are (user, sample) composites (``build/samples.py``)
    sampled = "sample" in data.columns
    examples = [(int(r) + 1, f"{str(u).replace(JOIN, ' / ')} / {i}")
                for r, u, i in zip(rows[:5], users, items, strict=True)]
    report(InputError(data.source.label, "(user, sample, item) triples listed more than once"
                      if sampled else "(user, item) pairs listed more than once",
                      count=len(rows), examples=examples, hint=hint, unit=data.source.unit))


def report_repeated_ranks(preds: Predictions, rows: np.ndarray | None, su: np.ndarray,
                          hint: str | None = None, r: np.ndarray | None = None) -> None:
    """A rank given to two rows of one list (lists sorted by user, then rank; ``rows`` the
    file rows in that order): the ranks then tell no order of those rows, an error naming
    them. ``r``: the ranks at ``rows``, when the caller has them."""
    assert preds.rank is not None
    if r is None:
        r = take(preds.rank, rows)
    same = (su[1:] == su[:-1]) & (r[1:] == r[:-1])
    if same.any():
        bad = np.sort(take(np.arange(len(preds.rank)), rows)[1:][same])
        report(InputError(preds.source.label, "ranks repeated within a user's sample"
                          if "sample" in preds.columns else "ranks repeated within a user",
                          column=preds.columns["rank"], count=len(bad),
                          examples=[(int(i) + 1, int(preds.rank[i])) for i in bad[:5]],
                          hint=hint, unit=preds.source.unit))


def check_order(preds: Predictions, rows, su, pos, settings: Settings,
                falling: bool = False) -> tuple[list[Notice], bool]:
    """Repeated ranks (an error), missing ranks (gaps), scores against ranks, ties across a
    cut-off. A repeated rank is not a gap: ranks 1, 1, 2 repeat one, ranks 1, 3, 4 miss one,
    ranks 1, 1, 3 do both. ``falling``: the lists are ordered by score and, in rank order,
    each one's scores were seen to fall strictly with no rank repeated
    (``ranks_differ_from_scores``), which holds for any rows kept of them: then no rank
    repeats and no score rises, and ranks are not read for gaps, so nothing is gathered
    again to say so. Returns the notices, and whether each list's scores fall strictly
    (``falling``, or seen here in lists ordered by rank): then no two rows tie."""
    notices = []
    if preds.rank is not None and not falling:
        r = take(preds.rank, rows)
        report_repeated_ranks(preds, rows, su, r=r)
        if settings.order_by != "score":  # ordered by score, the ranks are never read
            gaps = count_distinct(su[missing_ranks(su, r)])
            if gaps:
                notices.append(Notice("rank_gaps", gaps))
        if preds.score is not None:
            s = take(preds.score, rows)
            n = scores_against_ranks(su, s, ties_count=False)
            if n:
                notices.append(Notice("scores_disagree_with_ranks", n,
                                      {"column": preds.columns["score"]}))
            falling = not ((su[1:] == su[:-1]) & (s[1:] >= s[:-1])).any()
    elif preds.rank is None and preds.score is not None:
        s = take(preds.score, rows)
        falling = not ((su[1:] == su[:-1]) & (s[1:] == s[:-1])).any()  # ordered by score
        tied_users = [np.zeros(0, dtype=np.int64)]
        for k in {spec.k for spec in settings.specs if spec.k is not None}:
            at_k = np.flatnonzero(pos[:-1] == k)
            straddle = (su[at_k + 1] == su[at_k]) & (s[at_k + 1] == s[at_k])
            tied_users.append(su[at_k[straddle]])
        n_tied = count_distinct(np.concatenate(tied_users))
        if n_tied and settings.ties not in TIE_AWARE:  # tie-aware orders score them fairly
            notices.append(Notice("ties_at_cutoff", n_tied, {"ties": settings.ties}))
    return notices, falling


def missing_ranks(su: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The rows (of lists sorted by user, then rank) after a missing rank: a user's first
    rank above 1, or a rank more than 1 past the one before it. Repeats are not gaps."""
    first = np.ones(len(su), dtype=bool)
    first[1:] = su[1:] != su[:-1]
    step = np.diff(r, prepend=0)
    return np.where(first, r != 1, step > 1)


def padded_rows(codes: Codes) -> list[Notice]:
    """Rows (of both files) whose user or item id has leading or trailing whitespace: legal,
    compared exactly, often a mistake. Rows, not distinct ids, so that partitions add up."""
    pu, pi = padded(codes.user_ids), codes.items.padded()
    if pu is None and pi is None:
        return []
    pu = np.zeros(codes.n_users, bool) if pu is None else pu
    pi = np.zeros(codes.n_items, bool) if pi is None else pi
    n = sum(int(np.count_nonzero(pu[u] | pi[i]))
            for u, i in ((codes.p_user, codes.p_item), (codes.t_user, codes.t_item)))
    return [Notice("padded_ids", n)]


def check_grades(truth: Truth, settings: Settings) -> None:
    """ERR's stopping probability (2^g - 1) / 2^max is above 1 past its highest grade."""
    if not any(s.name == "err" for s in settings.specs):
        return
    top = settings.err_max_grade
    bad = np.flatnonzero(truth.relevance > top)
    if len(bad):
        report(InputError(truth.source.label, f"relevance values above ERR's highest grade {top:g}",
                          column=truth.columns.get("relevance"), count=len(bad),
                          examples=[(int(i) + 1, _number(truth.relevance[i])) for i in bad[:5]],
                          hint="raise {opt:err_max_grade}", unit=truth.source.unit))


def check_gains(truth: Truth, settings: Settings) -> None:
    """A gains map (--gains, a metric's gains=) keeps the truth's grades in order: the ideal
    lists are ordered by grade, so a higher grade must not earn less."""
    maps = {own.gains for spec in settings.specs
            if spec.name in ROWS["gains"].applies_to
            and (own := settings_for(spec, settings)).gains is not None}
    if not maps:
        return
    grades = np.unique(truth.relevance[truth.relevance > 0])
    for text in sorted(maps):
        mapped = grades.copy()
        for grade, value in zip(*gain_pairs(text), strict=True):
            mapped[grades == grade] = value
        bad = np.flatnonzero(np.diff(mapped) < 0)
        if len(bad):
            lo, hi = _number(grades[bad[0]]), _number(grades[bad[0] + 1])
            report(InputError(
                truth.source.label, f"gains {text} give grade {hi} less than grade {lo} "
                f"({_number(mapped[bad[0] + 1])} < {_number(mapped[bad[0]])}): the ideal "
                "ranking is by grade, so gains must not fall as the grade rises",
                column=truth.columns.get("relevance"), unit=truth.source.unit,
                hint="name a gain for every grade, rising with the grade"))


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def spurious_ties(preds: Predictions, rows: np.ndarray | None, pos: np.ndarray,
                  tie_start: np.ndarray | None) -> None:
    """Scores that tie as 64-bit floats but not as written (``0.10000000000000000001`` and
    ``0.1``; decimals past 15 digits): their order would be a tie-break nobody asked for, so
    they are refused, naming the rows, as integers past 2^53 are. Only a build with tied
    scores reads the scores' text again, and only the tied rows' texts are compared."""
    if tie_start is None or preds.score_text is None:
        return
    tied = np.flatnonzero(pos != tie_start)  # each tied row, against its group's first
    if not len(tied):
        return
    first = tied - (pos[tied] - tie_start[tied])
    at_mine = tied if rows is None else rows[tied]  # file rows
    at_first = first if rows is None else rows[first]
    text = preds.score_text()
    mine = pc.utf8_trim_whitespace(text.take(from_numpy(at_mine)))
    theirs = pc.utf8_trim_whitespace(text.take(from_numpy(at_first)))
    differ = np.flatnonzero(to_numpy(pc.not_equal(mine, theirs)))
    if not len(differ):
        return  # the usual tie: the same text
    lost = []
    for i in differ:  # few: the texts differ though their floats are equal
        a, b = mine[int(i)].as_py(), theirs[int(i)].as_py()
        try:
            if Decimal(a) != Decimal(b):
                lost.append((int(at_mine[i]) + 1, a))
        except InvalidOperation:  # not a plain decimal (hex, inf): the float is the value
            continue
    if lost:
        report(InputError(
            preds.source.label, "scores tied as 64-bit floats with another of their user's "
            "but not as written (floats hold 15 to 17 significant digits; their order would be "
            "a tie-break)",
            column=preds.columns["score"], count=len(lost), examples=lost[:5],
            unit=preds.source.unit, hint="round them to 15 significant digits, or give the "
            "order as ranks"))
