"""trec_eval's ``relstring``: per user, one character per item of the top N of its list (after
-M and -J, as trec_eval forms it): the grade when 0 to 9, ``>`` above 9, ``-`` for an item
missing from the truth (outside the pool), ``.`` for one in the truth with a negative grade (in
the pool, unjudged). Text, not a number: the ``-f trec`` per-query lines print it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from rankeval.build.join import lookup
from rankeval.build.lists import Lists
from rankeval.io.encode import pair_keys

if TYPE_CHECKING:
    from rankeval.build.users import Codes, Selection
    from rankeval.io.load import Truth

DEFAULT_DEPTH = 10  # trec_eval's relstring without a parameter


def depth(parameter: str) -> int:
    """The N of ``relstring.N`` (the setting's text; "" for the bare name), as trec_eval reads
    it: C's ``(long) atof``, below 0 read as 0."""
    if not parameter:
        return DEFAULT_DEPTH
    return max(int(float(parameter)), 0)


def relstrings(lists: Lists, codes: Codes, truth: Truth, sel: Selection, n: int) -> pa.Array:
    """Each evaluated user's string (in compact code order; "" for a user without a list).
    ``lists`` are carried by their item codes."""
    users = sel.counts.evaluated
    top = lists.keep(lists.pos <= n)
    # every truth pair of the evaluated users: 1 + its grade when judged (>= 0), -1 when in
    # the pool unjudged; absent (0 from the lookup): outside the pool
    user = sel.compact[codes.t_user]
    mine = np.flatnonzero(user >= 0)
    keys = pair_keys(user[mine], codes.t_item[mine], codes.n_items)
    order = np.argsort(keys, kind="stable")
    rel = truth.relevance[mine][order]
    found = lookup(keys[order], np.where(rel >= 0, rel + 1.0, -1.0), top.su, top.rows, None,
                   codes.n_items)
    grade = np.floor(np.maximum(found - 1.0, 0.0))
    chars = np.where(found < 0, ord("."), np.where(
        found == 0, ord("-"), np.where(grade > 9, ord(">"), ord("0") + np.minimum(grade, 9))))
    offsets = np.zeros(users + 1, np.int64)
    np.cumsum(np.bincount(top.su, minlength=users), out=offsets[1:])
    return pa.LargeStringArray.from_buffers(
        users, pa.py_buffer(offsets.tobytes()), pa.py_buffer(chars.astype(np.uint8).tobytes()))
