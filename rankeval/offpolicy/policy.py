"""A new policy's probabilities of the logged slots (SPEC section 10), whatever form the
policy comes in:

- a ranked run (one list per user): the probability of a slot is 1 when the list puts the
  logged item there, of a slate's top k when the list's top k is the logged one;
- sampled rankings (a ``sample`` column): the share of the user's samples that do so (the
  policy that draws one of them at random);
- its probabilities (``probability``: of the item at the position; ``cascade_probability``:
  of the logged top k; ``slate_probability``; ``conditional_probability``: of the item at the
  position given the logged items above it, for every item the policy may put there).

With a reward model, also what the policy expects to earn: per slot, given the logged items
above it (the control variate of cascade-DR), and per slate (the direct method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankeval.errors import InputError, plural
from rankeval.offpolicy.inputs import Log, Rankings, Table


@dataclass(frozen=True)
class Target:
    """Per log row: the policy's probability of the item at its position (``marginal``), of
    the slate's top k (``cascade``), of the whole slate (``slate``, repeated on its rows);
    None where the policy's form does not give it. With a reward model: per row, its expected
    predicted reward at that position given the logged items above (``expected``); per slate,
    at every position (``direct``). ``covered``: per slate, whether the policy has anything
    for it."""

    marginal: np.ndarray | None
    cascade: np.ndarray | None
    slate: np.ndarray | None
    covered: np.ndarray
    expected: np.ndarray | None = None
    direct: np.ndarray | None = None
    observed: np.ndarray | None = None  # per row, the model's prediction for the logged item


@dataclass(frozen=True)
class RewardModel:
    """Predicted rewards by (context, position, item): contexts are slates when the model
    has a slate column, else users."""

    keys: np.ndarray  # sorted
    values: np.ndarray
    by_slate: bool
    width: int  # positions + 1
    n_items: int
    label: str

    def context(self, log: Log, slate: np.ndarray) -> np.ndarray:
        return slate if self.by_slate else log.slate_user[slate]

    def at(self, log: Log, slate: np.ndarray, position: np.ndarray, item: np.ndarray,
           what: str) -> np.ndarray:
        """The predictions at (slate, position, item); an item code below 0 (no item) earns
        0; a missing prediction is an error naming examples."""
        out = np.zeros(len(slate))
        shown = item >= 0
        key = _key(self.context(log, slate[shown]), position[shown], item[shown], self.width,
                   self.n_items)
        at = np.searchsorted(self.keys, key)
        at = np.minimum(at, len(self.keys) - 1)
        found = self.keys[at] == key if len(self.keys) else np.zeros(len(key), bool)
        if not found.all():
            missing = np.flatnonzero(~found)
            raise InputError(self.label, f"no predicted reward for {len(missing):,} (context, "
                             f"position, item) {what} needs; it needs one for every item "
                             "the log or the policy puts at a position")
        out[shown] = self.values[at]
        return out


def _key(context: np.ndarray, position: np.ndarray, item: np.ndarray | int, width: int,
         n_items: int) -> np.ndarray:
    return (context.astype(np.int64) * width + position) * n_items + item


def reward_model(table: Table, user: np.ndarray | None, item: np.ndarray,
                 slate: np.ndarray | None, log: Log, n_items: int) -> RewardModel:
    """``table``'s predictions keyed by (context, position, item): by slate when it has a
    slate column (``slate``: the log's slates), else by user."""
    by_slate = slate is not None
    width = max(log.longest, int(table.values["rank"].max(initial=0))) + 1
    context = _context(user, slate)
    keys = _key(context, table.values["rank"].astype(np.int64), item, width, n_items)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        raise InputError(table.label, "(context, position, item) predicted more than once")
    return RewardModel(keys, table.values["predicted_reward"][order], by_slate, width,
                       n_items, table.label)


def from_rankings(log: Log, rk: Rankings, n_users: int, model: RewardModel | None) -> Target:
    """The probabilities of a ranked run or of sampled rankings (the share of a user's
    samples), each slate against every list of its user."""
    depth = log.longest
    lists = np.bincount(rk.user, minlength=n_users)
    first = np.concatenate([[0], np.cumsum(lists)[:-1]])
    count = lists[log.slate_user]
    pair_slate = np.repeat(np.arange(log.n), count)
    within = np.arange(len(pair_slate)) - np.repeat(np.cumsum(count) - count, count)
    pair_list = first[log.slate_user][pair_slate] + within
    shown = np.full((len(pair_list), depth), -1, dtype=np.int64)
    cut = min(depth, rk.items.shape[1])
    shown[:, :cut] = rk.items[pair_list, :cut]
    logged = log.matrix(log.item, -2)[pair_slate]  # -2 past a slate's end: never shown
    same = shown == logged
    prefix = np.logical_and.accumulate(same, axis=1)
    share = 1.0 / np.maximum(count, 1)[pair_slate]
    marginal, cascade = (np.stack([np.bincount(pair_slate, m[:, k] * share, minlength=log.n)
                                   for k in range(depth)], axis=1) if depth else
                         np.zeros((log.n, 0)) for m in (same, prefix))
    rows = (log.slate, log.position - 1)
    target = Target(marginal[rows], cascade[rows], cascade[log.slate, log.length[log.slate] - 1],
                    count > 0)
    if model is None:
        return target
    k = np.broadcast_to(np.arange(1, depth + 1), shown.shape)
    slate_of = np.broadcast_to(pair_slate[:, None], shown.shape)
    inside = k <= log.length[pair_slate][:, None]
    q = np.zeros(shown.shape)
    q[inside] = model.at(log, slate_of[inside], k[inside], shown[inside],
                         "the direct and doubly robust estimates")
    before = np.concatenate([np.ones((len(prefix), 1), bool), prefix[:, :-1]], axis=1)
    weight = before * share[:, None]  # the samples whose top k-1 is the logged one
    got = np.stack([np.bincount(pair_slate, (q * weight)[:, j], minlength=log.n)
                    for j in range(depth)], axis=1) if depth else np.zeros((log.n, 0))
    mass = np.stack([np.bincount(pair_slate, weight[:, j], minlength=log.n)
                     for j in range(depth)], axis=1) if depth else np.zeros((log.n, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(mass > 0, got / mass, 0.0)
    direct = np.bincount(pair_slate, (q * share[:, None]).sum(axis=1), minlength=log.n)
    return Target(target.marginal, target.cascade, target.slate, target.covered,
                  expected[rows], direct, _logged(log, model))


def from_probabilities(log: Log, policy: Table, user: np.ndarray | None, item: np.ndarray,
                       slate: np.ndarray | None, n_items: int, model: RewardModel | None
                       ) -> Target:
    """A policy given as probabilities, keyed by slate (with a slate column: ``slate``, the
    log's slates; its user column, if any, checked against the log's) or by user."""
    v = policy.values
    position = v["rank"].astype(np.int64)
    width = max(log.longest, int(position.max(initial=0))) + 1
    context = _context(user, slate)
    keys = _key(context, position, item, width, n_items)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        raise InputError(policy.label, "(context, position, item) given more than once")
    _check_sums(policy, v, context, position)
    log_context = np.arange(log.n) if slate is not None else log.slate_user
    if slate is None and {"cascade_probability", "slate_probability",
                          "conditional_probability"} & set(v):
        several = np.bincount(log.slate_user)
        if (several > 1).any():
            raise InputError(policy.label, "probabilities given the logged items above (of "
                             "the top k, of the slate, conditional) need a slate column: "
                             "the log shows some users several slates")
    row_keys = _key(log_context[log.slate], log.position, log.item, width, n_items)

    def per_row(name: str) -> np.ndarray | None:
        if name not in v:
            return None
        at = np.minimum(np.searchsorted(keys, row_keys), max(len(keys) - 1, 0))
        found = keys[at] == row_keys
        return np.where(found, v[name][order][at], 0.0)

    given = {name: per_row(name) for name in ("probability", "cascade_probability",
                                              "slate_probability", "conditional_probability")}
    cascade = given["cascade_probability"]
    if cascade is None and given["conditional_probability"] is not None:
        cascade = _running_product(given["conditional_probability"], log)
    slate_p = given["slate_probability"]
    if slate_p is None and cascade is not None:
        slate_p = cascade[(log.start + log.length - 1)[log.slate]]
    covered = np.zeros(log.n, bool)
    present = np.isin(log_context, context)
    covered[present] = True
    expected = direct = None
    if model is not None:
        ctx_of = context[order]
        pos_of, item_of = position[order], item[order]
        slate_of_ctx = _slates_of(log, ctx_of, slate is not None)
        # on single slots, the probability of an item is its probability given nothing above
        conditional = "conditional_probability" if "conditional_probability" in v else (
            "probability" if log.longest == 1 and "probability" in v else None)
        if conditional is not None:
            cond = v[conditional][order]
            q = model.at(log, slate_of_ctx[0], pos_of[slate_of_ctx[1]],
                         item_of[slate_of_ctx[1]], "cascade-DR")
            key_row = _key(log_context[slate_of_ctx[0]], pos_of[slate_of_ctx[1]], 0, width, 1)
            wanted = _key(log_context[log.slate], log.position, 0, width, 1)
            expected = _sum_by(key_row, cond[slate_of_ctx[1]] * q, wanted)
        if "probability" in v:
            prob = v["probability"][order]
            inside = pos_of[slate_of_ctx[1]] <= log.length[slate_of_ctx[0]]
            s, r = slate_of_ctx[0][inside], slate_of_ctx[1][inside]
            q = model.at(log, s, pos_of[r], item_of[r], "the direct method")
            direct = np.bincount(s, prob[r] * q, minlength=log.n)
    return Target(given["probability"], cascade, slate_p, covered, expected, direct,
                  None if model is None else _logged(log, model))


def _context(user: np.ndarray | None, slate: np.ndarray | None) -> np.ndarray:
    """The key of a policy's or a reward model's rows: the slate when given, else the user
    (``columns.ONE_OF``: a table has one of them)."""
    context = slate if slate is not None else user
    assert context is not None  # resolve_role refuses a table with neither
    return context


def _check_sums(policy: Table, v: dict, context: np.ndarray, position: np.ndarray) -> None:
    """A policy's probabilities of the items at one position (given nothing, or given the
    items above) sum to at most 1: over all its items, one is shown there at most."""
    for name in ("probability", "conditional_probability"):
        if name not in v or not len(position):
            continue
        _, group = np.unique(np.stack([context, position.astype(np.int64)]), axis=1,
                             return_inverse=True)
        group = group.ravel()
        total = np.bincount(group, v[name])
        over = np.flatnonzero(total > 1 + 1e-9)
        if len(over):
            rows = [int(np.flatnonzero(group == g)[0]) + 1 for g in over[:3]]
            shown = ", ".join(f"row {r} (sum {total[g]:.6g})"
                              for r, g in zip(rows, over[:3], strict=True))
            raise InputError(policy.label, f"column {policy.columns[name]!r}: the "
                             f"probabilities of one position sum to more than 1 for "
                             f"{plural(len(over), 'position')} of a user or slate, e.g. "
                             f"the position of {shown}")


def _logged(log: Log, model: RewardModel) -> np.ndarray:
    return model.at(log, log.slate, log.position, log.item, "the doubly robust estimate")


def _running_product(values: np.ndarray, log: Log) -> np.ndarray:
    """Per row, the product of ``values`` over its slate's rows up to it."""
    out = np.empty_like(values)
    for k in range(1, log.longest + 1):  # positions, not users: a handful of passes
        at = np.flatnonzero(log.position == k)
        out[at] = values[at] if k == 1 else out[at - 1] * values[at]
    return out


def _slates_of(log: Log, context: np.ndarray, by_slate: bool) -> tuple[np.ndarray, np.ndarray]:
    """(slate, policy row) of every pair whose context is the slate's (by user: each of the
    user's slates)."""
    if by_slate:
        rows = np.flatnonzero(context >= 0)  # -1: a slate the log does not have
        return context[rows], rows
    order = np.argsort(log.slate_user, kind="stable")
    users = log.slate_user[order]
    lo, hi = np.searchsorted(users, context, "left"), np.searchsorted(users, context, "right")
    count = hi - lo
    rows = np.repeat(np.arange(len(context)), count)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(count) - count, count)
    return order[np.repeat(lo, count) + within], rows


def _sum_by(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each of ``wanted``, the sum of ``values`` whose key equals it (0 when none)."""
    uniq, inverse = np.unique(keys, return_inverse=True)
    sums = np.bincount(inverse, values, minlength=len(uniq))
    at = np.minimum(np.searchsorted(uniq, wanted), max(len(uniq) - 1, 0))
    return np.where(len(uniq) and uniq[at] == wanted, sums[at] if len(uniq) else 0.0, 0.0)
