"""The ranked lists as the build's stages pass them on: one column per fact about a row, in
list order, kept together so that every stage that drops rows drops them from all."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankeval.build.ordering import runs_order, user_runs
from rankeval.kernels.chunk import segment_positions
from rankeval.kernels.threads import each


@dataclass(frozen=True)
class Lists:
    """The evaluated users' ranked rows, sorted by (user, pos); or, while ``grouped``, each
    user's rows together and in list order, the users in file order (``in_user_order`` sorts
    them). References only: passing it on, or ``dataclasses.replace``, copies no array."""

    # File row numbers (None: every row, in file order, the common case, which then costs no
    # index array); once the rows are carried by their items (the cut), item codes instead.
    rows: np.ndarray | None
    su: np.ndarray  # compact user code of each row (0..evaluated-1)
    pos: np.ndarray  # 1-based position in its user's list
    judged: np.ndarray | None = None  # bool: the item is judged, when the build marks them
    tie_start: np.ndarray | None = None  # pos of the first row of the row's tie group
    # bool: the item is in the truth at all, judged or not (a negative relevance: pooled but
    # unjudged, as trec_eval reads it); marked with ``judged``
    pooled: np.ndarray | None = None
    # each list's scores fall strictly, as the order's checks saw (then no two rows tie);
    # true of any rows kept of them
    falling: bool = False
    # each user's rows stand together and in list order, but the users come in the file's
    # order, not their codes': the stages that read rows one list at a time take them so,
    # and the runs are moved into user order once, after the cut, with fewer rows to move
    grouped: bool = False

    def keep(self, mask: np.ndarray) -> Lists:
        """The rows where ``mask`` holds, in every column (``rows`` stays None when all are
        kept; else a None ``rows`` becomes the kept row numbers)."""
        if mask.all():
            return self
        rows, judged, tie_start, pooled = self.rows, self.judged, self.tie_start, self.pooled
        jobs = [lambda: np.flatnonzero(mask) if rows is None else rows[mask],  # on two cores
                lambda: self.su[mask], lambda: self.pos[mask],
                lambda: None if judged is None else judged[mask],
                lambda: None if tie_start is None else tie_start[mask],
                lambda: None if pooled is None else pooled[mask]]
        rows, su, pos, judged, tie_start, pooled = each(lambda job: job(), jobs)
        return Lists(rows, su, pos, judged, tie_start, pooled, self.falling, self.grouped)

    def in_user_order(self) -> Lists:
        """The lists sorted by user: ``grouped`` lists' runs moved whole, in every column
        (10M rows of hashed user ids: moved after the cut, a third of the rows move)."""
        if not self.grouped:
            return self
        runs = user_runs(self.su)
        assert runs is not None  # grouped: each user's rows are one run
        starts, order, n = runs
        lengths = np.diff(np.append(starts, n))[order]
        perm = runs_order(starts, order, n)
        rows, judged, tie_start, pooled = self.rows, self.judged, self.tie_start, self.pooled
        su = np.repeat(self.su[starts[order]], lengths)
        # pos is each row's place in its list, so it is counted again, not gathered
        jobs = [lambda: perm if rows is None else rows[perm],  # on two cores
                lambda: segment_positions(su),
                lambda: None if judged is None else judged[perm],
                lambda: None if tie_start is None else tie_start[perm],
                lambda: None if pooled is None else pooled[perm]]
        rows, pos, judged, tie_start, pooled = each(lambda job: job(), jobs)
        assert pos is not None
        return Lists(rows, su, pos, judged, tie_start, pooled, self.falling)
