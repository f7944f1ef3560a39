"""Judgment groups (``judgment_groups``; trec_eval's -R qrels_jg): the truth's second field
(a qrels file's, or a subtopic column) names the judge of each judgment. Each (user, group)
pair becomes a user of its own, numbered here: its judgments are the group's, its list the
user's; ``engines.groups`` averages their values back per user.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import id_column, read_typed
from rankeval.io.columns import resolve_role
from rankeval.io.load import Predictions, Truth, load_truth, open_both


@dataclass(frozen=True)
class Groups:
    """The pairs' users and what the per-user counts need of the inputs as given."""

    user: pa.Array  # the user of each pair, by pair number (strings)
    truth_user: pa.Array  # the truth's users, row by row, and their grades
    relevance: np.ndarray
    run_user: pa.Array  # the run's users, row by row


def load_grouped(predictions: Any, truth: Any, columns: Mapping[str, str | None] | None,
                 preds_format: str | None, truth_format: str | None,
                 reading: Mapping[str, Any] | None
                 ) -> tuple[Predictions, Truth, pa.ChunkedArray]:
    """Both inputs loaded (``load.load_inputs``) and the group of each judgment, to be
    checked as given, then ``split``."""
    cols = columns or {}
    preds, truth_table = open_both(predictions, truth, cols, preds_format, truth_format, reading)
    if preds.sample is not None:
        raise InputError(preds.source.label, "a stochastic run (a sample column) cannot be "
                         "scored by judgment groups; drop {opt:judgment_groups}")
    # the second field is the group, read below, not subtopic judgements
    judged = load_truth(truth_table, {**cols, "subtopic_col": None})
    label = truth_table.label
    name = resolve_role(truth_table.columns, "truth", cols, label)["subtopic"]
    if name is None:
        raise InputError(label, "judgment groups need a group column: a qrels file's second "
                         "field, or a column named subtopic (name it with "
                         "{opt:subtopic_col})")
    group = id_column(read_typed(truth_table, {name: ID}), name, label)
    return preds, judged, group


def split(preds: Predictions, truth: Truth, group: pa.ChunkedArray
          ) -> tuple[Predictions, Truth, Groups]:
    """``preds`` and ``truth`` over (user, group) pairs: each pair a user numbered in the
    order of (user, group) as byte strings, the run's list given to every pair of its user
    (a user the truth lacks: one pair, with no group)."""
    t_user, t_group, p_user = (c.cast(pa.string()).combine_chunks()
                               for c in (truth.user, group, preds.user))
    pairs = pa.table({"q": t_user, "g": t_group}).group_by(["q", "g"]).aggregate([])
    lone = pc.unique(p_user)
    lone = lone.filter(pc.invert(pc.is_in(lone, value_set=t_user)))
    pairs = pa.concat_tables([pairs, pa.table({"q": lone, "g": pa.nulls(len(lone),
                                                                         pa.string())})])
    pairs = pairs.sort_by([("q", "ascending"), ("g", "ascending")])
    n = pairs.num_rows
    pairs = pairs.append_column("pair", pa.array(np.arange(n, dtype=np.int64)))
    # pair numbers as ids whose byte order is their order (zero-padded)
    ids = pc.utf8_lpad(pc.cast(pairs.column("pair"), pa.string()), len(str(max(n - 1, 0))),
                       "0").combine_chunks()

    def named(numbers: np.ndarray) -> pa.ChunkedArray:
        return pa.chunked_array([ids.take(from_numpy(numbers)).dictionary_encode()
                                 .cast(ID)])

    rows = pa.table({"q": t_user, "g": t_group,
                     "row": pa.array(np.arange(len(t_user), dtype=np.int64))})
    t_pair = to_numpy(rows.join(pairs, ["q", "g"]).sort_by("row").column("pair"))
    listed = pa.table({"q": p_user, "row": pa.array(np.arange(len(p_user), dtype=np.int64))})
    joined = listed.join(pairs.select(["q", "pair"]), "q").sort_by(
        [("row", "ascending"), ("pair", "ascending")])
    take = to_numpy(joined.column("row"))
    p_pair = to_numpy(joined.column("pair"))
    text = preds.score_text
    grouped_preds = Predictions(
        user=named(p_pair), item=preds.item.take(from_numpy(take)),
        rank=None if preds.rank is None else preds.rank[take],
        score=None if preds.score is None else preds.score[take],
        source=preds.source, columns=preds.columns,
        score_text=None if text is None else (lambda: text().take(from_numpy(take))))
    grouped_truth = Truth(user=named(t_pair), item=truth.item, relevance=truth.relevance,
                          source=truth.source, columns=truth.columns)
    return grouped_preds, grouped_truth, Groups(
        user=pairs.column("q").combine_chunks(), truth_user=t_user,
        relevance=truth.relevance, run_user=p_user)
