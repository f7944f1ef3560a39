"""Input roles and their columns: which columns each kind of input has, the names and aliases
they are found by, and how a file's columns are matched to them. Pure Python, so that the
command line's column options derive from ``COLUMNS`` without loading pyarrow."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankeval.errors import InputError, plural

if TYPE_CHECKING:
    from collections.abc import Mapping

# column -> (default name, aliases); every name is matched case-insensitively.
COLUMNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "user": ("user_id", ("user", "userId", "qid", "query_id", "query", "q_id", "user_id:token")),
    "item": ("item_id", ("item", "itemId", "doc_id", "docno", "docid", "doc", "item_id:token")),
    "rank": ("rank", ("position", "pos", "rank_among_sampled")),
    "score": ("score", ("prediction", "pred", "pred_score", "prob", "probability")),
    "relevance": ("relevance", ("rel", "rating", "label", "grade", "rating:float",
                                "label:float")),
    "count": ("count", ("weight", "interactions", "n_interactions", "plays", "clicks")),
    # the truth's subtopic (intent, aspect) of a judgement, read by the intent-aware metrics;
    # a qrels file's second field
    "subtopic": ("subtopic", ("intent", "aspect", "subtopic_id", "iteration", "iter")),
    # which of a user's sampled rankings a prediction row belongs to (a stochastic run);
    # a TREC run's second field
    "sample": ("sample", ("sample_id", "draw", "ranking_id")),
    # An interaction log (``rankeval ope``): one row per shown slot. Its position is the
    # rank column; the slate names one showing when a user was shown several.
    "slate": ("slate_id", ("impression_id", "request_id", "impression", "round_id")),
    "reward": ("reward", ("click", "clicked", "purchase", "conversion", "outcome")),
    # the logging policy's probability of the item at that position (its marginal), of the
    # slate's top k (the cascade's prefix), of the whole slate
    "propensity": ("propensity", ("pscore", "p0", "pscore_item_position",
                                  "logging_propensity", "behavior_propensity")),
    "cascade_propensity": ("cascade_propensity", ("pscore_cascade", "prefix_propensity")),
    "slate_propensity": ("slate_propensity", ("pscore_slate", "slate_pscore")),
    # A new policy's probabilities of the logged slots (``rankeval ope``), in place of a run
    "probability": ("probability", ("pi", "policy_probability")),
    "cascade_probability": ("cascade_probability", ("pi_cascade", "prefix_probability")),
    "slate_probability": ("slate_probability", ("pi_slate",)),
    # pi(item at the position | the logged items above it), for every item it may put there
    "conditional_probability": ("conditional_probability", ("pi_conditional",)),
    # a reward model's prediction (``rankeval ope --reward-model``)
    "predicted_reward": ("predicted_reward", ("q_hat", "reward_hat", "expected_reward")),
}
# role -> (required columns, optional columns). Later roles (training interactions, item
# features, segments) are rows here.
ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "predictions": (("user", "item"), ("rank", "score", "sample")),
    "truth": (("user", "item"), ("relevance", "subtopic")),
    "train": (("user", "item"), ("count",)),  # training interactions (--train)
    "catalog": (("item",), ()),  # the item universe (--catalog)
    "item_features": (("item",), ()),  # every other column is a feature (--item-features)
    "item_groups": (("item",), ()),  # every other column is a group column (--item-groups)
    "segments": (("user",), ()),  # user attributes (--segments)
    # P(observed) per item, or per (user, item) with a user column (--propensity)
    "propensity": (("item", "propensity"), ("user",)),
    "exclude": (("user", "item"), ()),  # (user, item) pairs to mask from the lists (--exclude)
    "log": (("user", "item", "rank", "reward"), ("slate", "propensity", "cascade_propensity",
                                                  "slate_propensity")),
    "policy": (("item", "rank"), ("user", "slate", "probability", "cascade_probability",
                                  "slate_probability", "conditional_probability")),
    "reward_model": (("item", "rank", "predicted_reward"), ("user", "slate")),
}
# role -> columns of which the role needs at least one (among its optional ones): a new
# policy's probabilities and a reward model are keyed by the context of a slot, its user,
# its slate (the log's slate ids, as Open Bandit Pipeline keys its slates) or both
ONE_OF: dict[str, tuple[str, ...]] = {"policy": ("user", "slate"),
                                      "reward_model": ("user", "slate")}
# The roles only ``rankeval ope`` reads (its own column options)
OPE_ROLES = ("log", "policy", "reward_model")
# The optional inputs beside the run and the truth (each an option of its own, --train ...)
EXTRA = ("train", "catalog", "item_features", "item_groups", "propensity", "exclude")
_SCORED = {column for role, parts in ROLES.items() if role not in OPE_ROLES
           for part in parts for column in part}
OPE_COLUMNS = tuple(column for column in COLUMNS if column not in _SCORED)
# user_col, item_col, ...: the column options of the commands that score runs against a truth
COLUMN_OPTIONS = tuple(f"{column}_col" for column in COLUMNS if column in _SCORED)


def _flag(column: str) -> str:
    return f"{{opt:{column}_col}}"


def resolve_column(
    columns: list[str], role: str, override: str | None, label: str, required: bool
) -> str | None:
    """The column playing ``role``: the override, else the one column named by the default
    or an alias (case-insensitively). Two candidates, or a chosen name the header holds
    twice, are an error naming them: a guess could score the wrong column."""
    if override:
        exact = [c for c in columns if c == override]
        found = exact or [c for c in columns if c.lower() == override.lower()]
        if not found:
            raise InputError(
                label,
                f"no column {override!r} (from {_flag(role)}); columns found: {_list(columns)}",
            )
    else:
        default, aliases = COLUMNS[role]
        names = {n.lower() for n in (default, *aliases)}
        found = [c for c in columns if c.lower() in names]
    if len(set(found)) > 1:
        raise InputError(label, f"columns {_list(sorted(set(found), key=found.index))} could "
                         f"each be the {role} column; choose one with {_flag(role)}")
    if len(found) > 1:
        raise InputError(label, f"the header has {plural(len(found), 'column')} named "
                                f"{found[0]!r}: "
                         "rename them so that each name is used once")
    if found:
        return found[0]
    if not required:
        return None
    default, aliases = COLUMNS[role]
    looked_for = ", ".join((default, *aliases))
    hint = _delimiter_hint(columns)
    raise InputError(
        label,
        f"no {role} column (looked for {looked_for}); columns found: {_list(columns)}; "
        f"name it with {_flag(role)}" + (f" ({hint})" if hint else ""),
    )


def _list(columns: list[str]) -> str:
    shown = ", ".join(repr(c) for c in columns[:10])
    return shown + (f" and {len(columns) - 10} more" if len(columns) > 10 else "")


def _delimiter_hint(columns: list[str]) -> str | None:
    if len(columns) != 1:
        return None
    for sep, name in ((";", "semicolon"), ("\t", "tab"), ("|", "pipe"), (",", "comma")):
        if sep in columns[0]:
            sep_text = "\\t" if sep == "\t" else sep
            return (
                f"the whole header is one column: is the file {name}-separated? Name the "
                f"separator with {{opt:delimiter}} '{sep_text}'"
            )
    return None


def resolve_role(
    columns: list[str], role: str, overrides: Mapping[str, str | None], label: str
) -> dict[str, str | None]:
    """Every column of ``role`` (``ROLES``) found in a file: column -> file column, None for an
    absent optional one. One file column cannot play two parts."""
    required, optional = ROLES[role]
    found = {c: resolve_column(columns, c, overrides.get(f"{c}_col"), label, required=True)
             for c in required}
    found |= {c: resolve_column(columns, c, overrides.get(f"{c}_col"), label, required=False)
              for c in optional}
    group = ONE_OF.get(role, ())
    if group and not any(found[c] for c in group):
        looked_for = "; ".join(f"{c}: " + ", ".join((COLUMNS[c][0], *COLUMNS[c][1]))
                               for c in group)
        raise InputError(label, f"no {' or '.join(group)} column (looked for {looked_for}); "
                         f"columns found: {_list(columns)}; name one with "
                         + " or ".join(_flag(c) for c in group))
    named = [(c, name) for c, name in found.items() if name is not None]
    for i, (a, name) in enumerate(named):
        for b, other in named[i + 1:]:
            if name == other:
                raise InputError(label, f"column {name!r} cannot be both the {a} and the {b} "
                                 f"column (see {_flag(a)} and {_flag(b)})")
    return found
