"""Counted warnings: ``Notice(code, count, params)``, rendered to a sentence only when shown.

A notice keeps its count as an integer and its parameters as data, so notices from several
partitions of users merge by adding counts (``merge``), and the text is made once, at the end.
Every sentence rankeval can warn with is in ``TEMPLATES``, keyed by the stable ``code``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rankeval.conventions import ROWS
from rankeval.errors import plural
from rankeval.names import k_runs

TIE_WORDS = {
    "trec": "item id descending, as trec_eval",
    "item-asc": "item id ascending",
    "input": "the order of the rows in the file",
    "ranx": "numba's quicksort of the negated scores, as ranx's Run orders them",
    "expected": "the expected value over all orders",
    "optimistic": "relevant items first",
    "pessimistic": "relevant items last",
    "provider": "each metric as its ir_measures provider orders them",
}


def _users(n: int) -> str:
    return plural(n, "user")


def _are(n: int, one: str = "is", many: str = "are") -> str:
    return one if n == 1 else many


def _have(n: int, noun: str = "user") -> str:
    """``1 user has``, ``2 users have``: the counted subject of most sentences."""
    return f"{plural(n, noun)} {_are(n, 'has', 'have')}"


def _where_seen(p: dict[str, Any]) -> str:
    """Where a dropped row's pair was: the files named (``from``), else in training."""
    return f"in {p['from']}" if "from" in p else "seen in training"


def _by_score(p: dict[str, Any], o: Spell) -> str:
    """A run's ranks set aside: its score column orders the lists."""
    return (f"the {p['column']!r} column orders the lists ({o('order_by', 'score')}, as "
            f"trec_eval, pytrec_eval and ir_measures order them; {p['rank']!r} is not used)")


def _options(p: dict[str, Any], o: Spell) -> str:
    """The options that masked pairs from the lists (``--exclude-seen``, ``--exclude``)."""
    return " and ".join(o(name) for name in p.get("options", ["exclude_seen"]))


Spell = Callable[..., str]  # (setting name, value=...) -> how the option reads


def keyword(name: str, value: Any = None) -> str:
    """The library's spelling of an option: ``ties='trec'``, ``skip_missing_users=True`` (a
    flag), ``catalog`` (an argument named without a value)."""
    if value is not None:
        return f"{name}={value!r}"
    return f"{name}=True" if name in ROWS and ROWS[name].is_flag else name


TEMPLATES: dict[str, Callable[[int, dict[str, Any], Spell], str]] = {
    "duplicates_dropped": lambda n, p, o: (
        f"{plural(n, 'repeated (user, item) row')} in {p['path']} {_are(n, 'was', 'were')} "
        f"dropped ({o('dedupe')} kept the best-ranked of each)"
    ),
    "extra_fields": lambda n, p, o: (
        f"{plural(n, 'line')} of {p['path']} {_are(n, 'has', 'have')} fields past the TREC "
        "layout's: they were not read (as trec_eval reads only the first ones)"
    ),
    "rank_gaps": lambda n, p, o: (
        f"{_have(n)} gaps in their ranks (a missing rank, as 3 in 1, 2, 4): ranks give the "
        "order, and positions are counted 1, 2, 3, ... in that order"
    ),
    "scores_disagree_with_ranks": lambda n, p, o: (
        f"{_have(n)} scores that tie or do not fall with their ranks; the file is written in "
        "rank order, but trec_eval and ranx will order by score"
        if p.get("written")
        else f"{_have(n)} scores that rise as their ranks fall: the rank column orders the "
        f"lists ({p['column']!r} is not used); tools that order by score (trec_eval, ranx) "
        f"will disagree ({o('order_by', 'score')} orders by score)"
    ),
    "score_orders": lambda n, p, o: (
        f"{_have(n)} ranks that disagree with their scores: {_by_score(p, o)}"
    ),
    "ranks_repeated": lambda n, p, o: (
        f"{_have(n)} repeated ranks (one rank given to several items): {_by_score(p, o)}"
    ),
    "ties_at_cutoff": lambda n, p, o: (
        f"{_have(n)} tied scores across a cut-off K, so their values depend on the tie-break "
        f"({o('ties', p['ties'])}: {TIE_WORDS[p['ties']]}; {o('ties', 'expected')} scores "
        "them fairly)"
    ),
    "ties_reordered": lambda n, p, o: (
        f"{_have(n)} tied scores, written in the order of {o('ties', p['ties'])} "
        f"({TIE_WORDS[p['ties']]}); {o('ties', 'input')} keeps the file's order"
    ),
    "seen_dropped": lambda n, p, o: (
        f"{plural(n, 'prediction row')} of {p['path']} {_are(n, 'was', 'were')} "
        + _where_seen(p)
        + f" and dropped ({_options(p, o)}); later items moved up"
    ),
    "short_after_exclusion": lambda n, p, o: (
        f"{_users(n)} had at least {plural(p['k'], 'prediction')} but fewer than {p['k']} after "
        f"{_options(p, o)} (their input lists were too short to fill the top {p['k']})"
    ),
    "train_holds_truth": lambda n, p, o: (
        f"{plural(n, 'relevant truth pair')} of {p['path']} ({n / max(p['of'], 1):.1%} of "
        f"{p['of']:,}) {_are(n, 'is', 'are')} in "
        + (f"the training interactions {p['train']}: the test leaks into training"
           if "options" not in p else f"{p['train']}, the pairs {_options(p, o)} masks")
        + (f", and {_options(p, o)} drops {_are(n, 'that item', 'those items')} from the "
           "lists, so scores fall toward 0" if p.get("seen") else "")
        + "; is it the whole interactions file, not the training split?"
    ),
    "seen_truth_dropped": lambda n, p, o: (
        f"{plural(n, 'truth row')} of {p['path']} {_are(n, 'was', 'were')} "
        + _where_seen(p)
        + f" and dropped ({o('exclude_seen_truth')})"
    ),
    "unseen_items": lambda n, p, o: (
        f"{plural(n, 'recommended item')} {_are(n, 'never appears', 'never appear')} in "
        "training: novelty counts "
        f"{_are(n, 'it', 'them')} as log2(training users + 1)"
    ),
    "one_tag_with_spaces": lambda n, p, o: (
        f"every item of {p['path']} has one tag, {n:,} of them with a space ('Action "
        f"Comedy'): if spaces separate the tags, say so with {o('tag_separator')} ' '"
    ),
    "catalog_fallback": lambda n, p, o: (
        f"no {o('catalog')}: the catalog is the {plural(n, 'item')} of {o('train')} and the "
        "predictions (coverage and gini are over those)"
    ),
    "outside_catalog": lambda n, p, o: (
        f"{plural(n, 'predicted item')} {_are(n, 'is', 'are')} not in {p['path']}: "
        f"{_are(n, 'it joins', 'they join')} the catalog"
    ),
    "not_scored": lambda n, p, o: (
        f"{p['metric']} has no value for {_users(n)} ({p['rule']}): its mean is over the "
        f"other {_users(p['scored'])}"
    ),
    "undefined": lambda n, p, o: (
        f"{p['metric']} is undefined: {p['rule']}" if p.get("corpus") else
        f"{p['metric']} is undefined: "
        + ("the one user evaluated has" if n == 1 else f"none of the {_users(n)} evaluated has")
        + f" a value ({p['rule']})"
    ),
    "k_past_lists": lambda n, p, o: (
        f"no list reaches K = {k_runs(p['ks'])} (the longest has {plural(n, 'item')}): "
        f"precision@K still divides by K, and every metric at such a K counts no more items "
        f"than at K = {n}"
    ),
    "judgment_group_pairs": lambda n, p, o: (
        f"{plural(n, '(user, judgment group) pair')} scored as users, then averaged into "
        f"{plural(p['users'], 'user')} ({o('judgment_groups')}): the warnings about the lists "
        "count pairs and their rows"
    ),
    "zscores_undefined": lambda n, p, o: (
        f"{plural(n, '(user, metric) pair')} without a z-score: {p['path']} has no line for "
        "the pair, a nan mean or standard deviation, or a standard deviation of 0 with the "
        "value off the mean; their means are over the others (trec_eval prints -1000000, or "
        "nan, and sums it in: -f trec does under its presets)"
    ),
    "ties_at_list_end": lambda n, p, o: (
        f"the lists of {_users(n)} end inside a group of tied scores: items past the end may share "
        "that score, so the tie-aware values cover the submitted items only"
    ),
    "padded_ids": lambda n, p, o: (
        f"{_have(n, 'row')} ids with leading or trailing whitespace; ids are compared exactly "
        "as written (' u1' and 'u1' are different users)"
    ),
    "users_without_relevant": lambda n, p, o: (
        f"{_have(n, 'truth user')} no relevant item and "
        + (
            f"{_are(n)} scored 0 and averaged in ({o('zero_relevant_users', 'zero')})"
            if p["policy"] == "zero"
            else f"{_are(n)} not evaluated ({o('zero_relevant_users', 'zero')} scores them 0)"
        )
    ),
    "users_without_predictions": lambda n, p, o: (
        f"{_have(n)} relevant items but no predictions and "
        + (
            f"{_are(n)} skipped ({o('skip_missing_users')})"
            if p["skip"]
            else f"score 0 on every metric ({o('skip_missing_users')} excludes them)"
        )
    ),
    "users_only_in_predictions": lambda n, p, o: (
        f"{_users(n)} of {p['predictions']} {_are(n)} not in {p['truth']} and {_are(n)} not "
        "evaluated"
    ),
    "all_judged_relevant": lambda n, p, o: (
        f"every judged item of {p['path']} is relevant and the grades differ: if they are "
        f"ratings (1-5 stars), set {o('relevance_threshold', 4)} (for example) so that low "
        "ratings do not count as relevant"
    ),
    "graded_gains": lambda n, p, o: (
        f"{p['metrics']}: the gains are the grades of {p['path']}'s column {p['column']!r} "
        f"({p['lowest']:g} to {p['highest']:g}; {plural(n, 'row')} with a positive grade other "
        f"than 1), as no gain was chosen and {o('gain', ROWS['gain'].default)} is the default; "
        f"{o('gain', 'binary')} counts every relevant item as 1, and choosing "
        f"{o('gain', ROWS['gain'].default)} keeps the grades with no notice"
    ),
    "large_sample": lambda n, p, o: (
        f"{p['metric']}: with {_users(n)} compared, a difference of {p['mde']:.4g} "
        f"({p['share']:.2%} of the baseline's mean) is found significant four times in five: "
        f"judge by the difference and its interval, not by p ({o('min_effect')} marks the "
        "differences too small to matter)"
    ),
    "baseline_undefined": lambda n, p, o: (
        f"{p['metric']} is undefined in the baseline {p['baseline']} ({p['why']}): "
        f"{plural(n, 'test')} against it left out of the correction, which counts "
        f"{plural(p['family'], 'test') if p['family'] else 'no test'} "
        + ("across every metric and K" if p.get("across") == "metrics" else f"for {p['metric']}")
    ),
    "users_not_shared": lambda n, p, o: (
        f"{_users(n)} evaluated in {p['run']} {_are(n)} left out of the comparison because "
        "another run does not evaluate them"
    ),
    "few_gold": lambda n, p, o: (
        f"only {plural(n, 'gold query', 'gold queries')} in {p['path']} (fewer than 30): "
        "the normal intervals of the gold estimates are rough; judge more queries by hand "
        f"({o('gold_plan')} says how many)"
    ),
    "gold_left_out": lambda n, p, o: (
        f"{plural(n, 'gold query', 'gold queries')} of {p['path']} left out of {p['metric']}: "
        "undefined under the machine or the human judgments (no relevant item under one of "
        f"them, or not in the evaluated queries; {o('zero_relevant_users', 'zero')} scores "
        "them 0)"
    ),
    "agree_grades_differ": lambda n, p, o: (
        f"the two qrels use different grades ({p['human']}: {p['human_grades']}; "
        f"{p['machine']}: {p['machine_grades']}): their values are compared as given"
    ),
    "agree_pairs_one_side": lambda n, p, o: (
        f"{plural(n, 'pair')} judged by the {p['side']} qrels alone: counted, and left out of "
        "the label agreement"
    ),
    "agree_queries_beyond": lambda n, p, o: (
        f"{plural(n, 'query', 'queries')} evaluated under the {p['side']} qrels but not under "
        "both for every run: left out of the system orderings"
    ),
}

# What a notice is about, when it is not the run scored (its lists, alone or against the
# truth: "run", every other row): an input every run is scored against, the same whichever
# run is scored. A command that scores several runs against one truth (compare) says such a
# notice once, after the input's name (its ``path``), and a run's own after the run's name.
# A row whose notices may be about either side gives the subject per notice (``subject`` in
# its params: extra_fields, of the predictions or of the truth).
RUN = "run"
SUBJECTS: dict[str, str] = {
    "train_holds_truth": "truth",
    "seen_truth_dropped": "truth",
    "one_tag_with_spaces": "item_features",
    "users_without_relevant": "truth",
    "all_judged_relevant": "truth",
    "graded_gains": "truth",
}

# The notice each explicit choice answers (``validate``: an option given on purpose, such as
# --dedupe, acknowledges its notice).
ANSWERS = {"zero_relevant_users": "users_without_relevant",
           "skip_missing_users": "users_without_predictions", "dedupe": "duplicates_dropped"}


@dataclass(frozen=True)
class Notice:
    """A counted warning: something was ignored, guessed or is worth a look.

    ``code`` is a stable identifier for scripts; ``params`` hold what the sentence names.
    """

    code: str
    count: int = 0
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def render(self, spell: Spell | None = None) -> str:
        """The sentence; ``spell`` writes option names: by default the library's keywords, or
        the command line's flags inside ``spelling(flag)`` (set by its error boundary)."""
        return TEMPLATES[self.code](self.count, self.params, spell or _spell.get())

    @property
    def message(self) -> str:
        return self.render()

    def __str__(self) -> str:
        return self.message

    @property
    def subject(self) -> str:
        """What the notice is about: ``"run"``, or the input every run shares (``"truth"``,
        ``"item_features"``; its ``path`` param names it), from its row of ``SUBJECTS``."""
        return str(self.params.get("subject", SUBJECTS.get(self.code, RUN)))

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "count": self.count}


_spell: ContextVar[Spell] = ContextVar("rankeval_spell", default=keyword)


@contextmanager
def spelling(spell: Spell) -> Iterator[None]:
    """Within the block, notices name options as ``spell`` does (the CLI: ``--ties trec``)."""
    token = _spell.set(spell)
    try:
        yield
    finally:
        _spell.reset(token)


def spelled() -> Spell:
    """How options are named here: the library's keywords, or the command line's flags
    inside ``spelling(flag)`` (for an error's ``render``, as notices do by themselves)."""
    return _spell.get()


# Parameters that are counts over a partition's rows, as ``count`` is (the truth pairs a
# share is of): added up by ``merge``, not part of what makes two notices the same
ADDED = ("of",)


def merge(groups: Iterable[Iterable[Notice]]) -> list[Notice]:
    """Notices of several partitions as one list: same code and params, counts added, in the
    order of ``TEMPLATES`` (the order in which the stages find them)."""
    out: dict[tuple[str, str], Notice] = {}
    for notices in groups:
        for n in notices:
            key = (n.code, repr(sorted((k, v) for k, v in n.params.items() if k not in ADDED)))
            seen = out.get(key)
            out[key] = n if seen is None else Notice(
                n.code, seen.count + n.count,
                {k: seen.params[k] + v if k in ADDED else v for k, v in n.params.items()})
    rank = {code: i for i, code in enumerate(TEMPLATES)}
    return sorted(out.values(), key=lambda n: rank[n.code])
