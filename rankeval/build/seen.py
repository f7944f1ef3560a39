"""Seen-item exclusion (``--exclude-seen``, ``--exclude-seen-truth``): a stage of the build
(``seen_items``, from ``--train``). It drops the (user, item) pairs present in training from
the ranked lists before the cut, and from the truth when asked."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.lists import Lists
from rankeval.build.ordering import take
from rankeval.errors import InputError, plural
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.io.encode import pair_keys
from rankeval.kernels.chunk import segment_positions
from rankeval.kernels.distinct import distinct
from rankeval.notices import Notice
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.users import Codes
    from rankeval.io.extras import Extras
    from rankeval.io.load import Train, Truth


def seen_items(extras: Extras, codes: Codes, settings: Settings) -> SeenItems | None:
    """The seen-item exclusion stage over ``codes``, when an option asks for it (None: no
    exclusion): the pairs of ``--exclude`` (masked from the lists whenever given), and those
    of ``--train`` with ``--exclude-seen`` (or with ``--exclude-seen-truth`` alone, when
    there is no ``--exclude``); the options' needs: ``io.extras.check_needs``."""
    lists = settings.exclude_seen or extras.exclude is not None
    if not (lists or settings.exclude_seen_truth):
        return None
    use_train = extras.train is not None and (settings.exclude_seen or extras.exclude is None)
    sources = [t for t in (extras.train if use_train else None, extras.exclude)
               if t is not None]
    if not sources:
        return None
    keys = [seen_keys(t, codes.user_ids, codes.item_ids, codes.n_items) for t in sources]
    options = (["exclude_seen"] if use_train and settings.exclude_seen else []) + (
        ["exclude"] if extras.exclude is not None else [])
    return SeenItems(distinct(np.concatenate(keys)), lists, settings.exclude_seen_truth,
                     settings.cut, " and ".join(t.source.label for t in sources),
                     tuple(options))


def seen_keys(train: Train, user_ids: pa.Array, item_ids: pa.Array, n_items: int) -> np.ndarray:
    """Sorted (user, item) keys, in a build's codes, of the training pairs; pairs whose user
    or item the build does not know cannot match a prediction and are left out."""
    u = to_numpy(fill_null(pc.index_in(train.user, value_set=user_ids), -1)).astype(np.int64)
    i = to_numpy(fill_null(pc.index_in(train.item, value_set=item_ids), -1)).astype(np.int64)
    known = (u >= 0) & (i >= 0)
    return distinct(pair_keys(u[known], i[known], n_items))


def is_seen(keys: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Whether each key is among the sorted ``seen`` keys."""
    if not len(seen):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(seen, keys), len(seen) - 1)
    return seen[at] == keys


@dataclass(frozen=True)
class SeenItems:
    """The training pairs in one build's codes, and which side they are dropped from."""

    keys: np.ndarray  # sorted (user, item) keys of the training pairs (``seen_keys``)
    lists: bool  # --exclude-seen: drop them from the ranked lists
    truth: bool  # --exclude-seen-truth: drop them from the truth
    cut: int | None  # the deepest K, for the count of lists left shorter than it
    train: str = "--train"  # the files the pairs come from, for messages
    options: tuple[str, ...] = ("exclude_seen",)  # the options that mask them from the lists

    @classmethod
    def of(cls, train: Train, codes: Codes, settings: Settings) -> SeenItems:
        return cls(seen_keys(train, codes.user_ids, codes.item_ids, codes.n_items),
                   settings.exclude_seen, settings.exclude_seen_truth, settings.cut,
                   train.source.label)

    def _said(self) -> dict[str, object]:
        """What the notices name beyond training's own exclusion: the files and options."""
        if "exclude" not in self.options:
            return {}
        return {"from": self.train, "options": list(self.options)}

    def leaked(self, codes: Codes, truth: Truth) -> list[Notice]:
        """Relevant truth pairs that training holds too: the test's interactions are in the
        training file (it is the whole interactions file, or the split leaked), so the items
        a user should find are the ones excluded as seen. One warning with their count and
        share; none when training holds none."""
        relevant = truth.relevance > 0
        hit = is_seen(pair_keys(codes.t_user[relevant], codes.t_item[relevant], codes.n_items),
                      self.keys)
        n = int(np.count_nonzero(hit))
        if not n:
            return []
        return [Notice("train_holds_truth", n, {"path": truth.source.label, "train": self.train,
                                                "of": int(np.count_nonzero(relevant)),
                                                "seen": self.lists} | self._said())]

    def drop_truth(self, codes: Codes, truth: Truth) -> tuple[Codes, Truth, list[Notice]]:
        """Truth rows whose pair is in training, dropped (``--exclude-seen-truth``); the
        notice counts them (none: nothing was dropped, ``codes`` and ``truth`` are as given).
        Every row in training is an error that says so: nothing would be left to score."""
        hit = is_seen(pair_keys(codes.t_user, codes.t_item, codes.n_items), self.keys)
        n = int(np.count_nonzero(hit))
        if not n:
            return codes, truth, []
        if n == len(hit):
            raise InputError(truth.source.label, f"every one of its {plural(n, 'row')} is a (user, "
                             f"item) pair of the training interactions ({self.train}), so "
                             "{opt:exclude_seen_truth} would drop them all: the training file "
                             "holds the test's interactions (is it the whole interactions file, "
                             "not the training split?)")
        keep = ~hit
        mask = from_numpy(keep)
        if truth.user is None:  # released (release_ids)
            truth = dataclasses.replace(truth, relevance=truth.relevance[keep])
        else:
            truth = dataclasses.replace(truth, user=truth.user.filter(mask),
                                        item=truth.item.filter(mask),
                                        relevance=truth.relevance[keep])
        codes = dataclasses.replace(codes, t_user=codes.t_user[keep], t_item=codes.t_item[keep])
        return codes, truth, [Notice("seen_truth_dropped", n, {"path": truth.source.label,
                                                                **self._said()})]

    def drop(self, codes: Codes, lists: Lists, label: str) -> tuple[Lists, list[Notice]]:
        """Ordered rows whose (user, item) was seen in training, dropped before the cut; the
        rest keep their order and move up. Counts the rows, and the users left with fewer than
        the deepest K items who had that many before. Runs before the build marks judged
        items and tie groups."""
        assert lists.judged is None and lists.tie_start is None
        rows, su = lists.rows, lists.su
        users = codes.p_user if rows is None else codes.p_user[rows]  # full user codes
        hit = is_seen(pair_keys(users, take(codes.p_item, rows), codes.n_items), self.keys)
        n = int(np.count_nonzero(hit))
        if not n:
            return lists, []
        before = np.bincount(su)
        keep = ~hit
        rows = np.flatnonzero(keep) if rows is None else rows[keep]
        su = su[keep]
        notices = [Notice("seen_dropped", n, {"path": label, **self._said()})]
        if self.cut is not None:
            after = np.bincount(su, minlength=len(before))
            short = int(np.count_nonzero((before >= self.cut) & (after < self.cut)))
            if short:
                notices.append(Notice("short_after_exclusion", short,
                                      {"k": self.cut, **self._said()}))
        return dataclasses.replace(lists, rows=rows, su=su, pos=segment_positions(su)), notices
