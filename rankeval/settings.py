"""Settings: the conventions of one evaluation (the rows of ``conventions.TABLE``) with its
metrics and cut-offs, made and checked by ``make_settings``.

Everything derives from ``TABLE``: the ``Settings`` dataclass, the options of every command,
the config-file keys, the JSON ``settings`` block, the footer, the gates' comparability check,
``--compat`` and the options listed by ``help(evaluate)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from rankeval import irmeasures
from rankeval.compat import measures, translate
from rankeval.conventions import COMPAT, ORDERED_BY, ROWS, TABLE, TIE_AWARE, TIE_PACKAGES
from rankeval.dependencies import require_tie_package
from rankeval.errors import OptionError
from rankeval.foreign_names import preference_words
from rankeval.names import MetricSpec, expand, from_name, parse_ks
from rankeval.params import PER_METRIC_TIES, drop_defaults, list_ties, numbers
from rankeval.presets import PRESETS, UNSET, Setting, preset_of
from rankeval.registry import CORPUS, DEFAULT_K, DEFAULT_METRICS, REGISTRY

# The table's names, for the modules that read them here
__all__ = ["COMPAT", "PRESETS", "ROWS", "TABLE", "UNSET", "Setting", "SettingOptions", "Settings",
           "comparable_names", "footer", "make_settings", "metric_named", "order_words",
           "ties_words"]


@dataclass(frozen=True)
class Settings:
    """Every option that changes a number; reported whole in the JSON ``settings`` block.
    Build one with ``make_settings``. The fields between ``k`` and ``compat`` are the rows of
    ``TABLE``, in its order, with its defaults (a test holds them equal)."""

    metrics: tuple[str, ...]
    k: tuple[int, ...]
    gain: str = "linear"
    ap_denominator: str = "min"
    rr_target: str = "first-relevant"
    relevance_threshold: float | None = None
    ties: str = "trec"
    order_by: str = "rank"
    zero_relevant_users: str = "skip"
    skip_missing_users: bool = False
    missing_user_counts: str = "counted"
    max_depth: int | None = None
    judged_only: bool = False
    rbp_p: float = 0.8
    rbp_gain: str = "binary"
    rbp_residual_tail: str = "always"
    patience: float = 0.5
    gains: str | None = None
    collection_size: int | None = None
    recall_rounding: str = "plus-0.9"
    err_max_grade: float = 4.0
    exclude_seen: bool = False
    exclude_seen_truth: bool = False
    popularity: str = "users"
    tail_share: float = 0.2
    tail_by: str = "popularity"
    novelty_model: str = "discovery"
    novelty_unseen: str = "rarest"
    catalog_padding: int = 0
    entropy_unit: str = "bits"
    entropy_per_item: bool = False
    dedupe: bool = False
    judgment_groups: bool = False
    zscores: str | None = None
    preferences: bool = False
    compat: str | None = None
    # settings given explicitly against the compat preset, which they override
    compat_overrides: tuple[str, ...] = ()
    runid: bool = False  # trec_eval's runid line asked for (-m runid, or its defaults)
    # trec_eval's relstring asked for: its parameter as typed ("" for the bare name, N = 10),
    # a string per user that -f trec prints in its per-query lines; None: not asked for
    relstring: str | None = None
    # under ``preferences``: trec_eval's prefs_* measures asked for, in its order
    # (``foreign_names.preference_words``), computed apart from ``specs`` (empty then)
    preference_measures: tuple[str, ...] = ()
    # under a rule per metric (ties provider): each metric's rule, by its name; else ()
    tie_rules: tuple[tuple[str, str], ...] = ()
    # ``metrics`` over ``k`` parsed, once: here, and again for a copy (dataclasses.replace)
    specs: tuple[MetricSpec, ...] = field(init=False, compare=False, repr=False)
    # The configuration file whose keys gave option defaults (rankeval.toml, pyproject.toml's
    # [tool.rankeval], --config), named in every report; None: no file was read
    config: str | None = None
    # The rows of ``TABLE`` whose values were chosen, by the caller (an option, a config
    # key) or by the compat preset, not left at rankeval's default: a notice says where a
    # default decides something the input suggests otherwise (``graded_gains``). Not compared
    # and not reported: the values are.
    chosen: tuple[str, ...] = field(default=(), compare=False, metadata={"reported": False})

    def __post_init__(self) -> None:
        # no metric: trec_eval's runid or relstring lines alone (``compat.measures``)
        object.__setattr__(self, "specs", tuple(expand(self.metrics, self.k))
                           if self.metrics or not (self.runid or self.relstring is not None
                                                   or self.preference_measures)
                           else ())

    def __getstate__(self) -> dict[str, Any]:  # pickled (to Spark, Ray) as the fields given
        return {k: v for k, v in self.__dict__.items() if k != "specs"}

    def __setstate__(self, state: dict[str, Any]) -> None:  # also a pickle made before specs
        self.__dict__.update(state)
        self.__post_init__()

    @property
    def cut(self) -> int | None:
        """The deepest K, or None when a metric reads whole lists (``@all``)."""
        return None if any(s.k is None for s in self.specs) else max(self.k, default=0)

    def to_dict(self) -> dict[str, Any]:
        """The fields given (the JSON ``settings`` block): ``specs`` is derived from them;
        each metric's tie rule as {metric: rule} (null under one rule for all)."""
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                 if f.init and f.metadata.get("reported", True)}
        return given | {"tie_rules": dict(self.tie_rules) or None}


class SettingOptions(TypedDict, total=False):
    """The settings as keywords (``evaluate(..., gain="exponential")``): the rows of
    ``TABLE``; None means the default (a test holds the keys equal to the table)."""

    gain: str | None
    ap_denominator: str | None
    rr_target: str | None
    relevance_threshold: float | None
    ties: str | None
    order_by: str | None
    zero_relevant_users: str | None
    skip_missing_users: bool | None
    missing_user_counts: str | None
    max_depth: int | None
    judged_only: bool | None
    rbp_p: float | None
    rbp_gain: str | None
    rbp_residual_tail: str | None
    patience: float | None
    gains: str | None
    collection_size: int | None
    recall_rounding: str | None
    err_max_grade: float | None
    exclude_seen: bool | None
    exclude_seen_truth: bool | None
    popularity: str | None
    tail_share: float | None
    tail_by: str | None
    novelty_model: str | None
    novelty_unseen: str | None
    catalog_padding: int | None
    entropy_unit: str | None
    entropy_per_item: bool | None
    dedupe: bool | None
    judgment_groups: bool | None
    zscores: str | None
    preferences: bool | None


def comparable_names() -> list[str]:
    """Settings whose difference makes two reports' numbers incomparable."""
    return [s.name for s in TABLE if s.comparable]


def footer(settings: Settings, order: str | None = None) -> str:
    """The conventions that shaped the numbers, as the table footer shows them. ``order``:
    what ordered the run's lists (``InputSummary.order``); where the file's ranks or row
    order did and no tie rule had tied scores to order, the footer says so in the tie
    rule's place (``conventions.ORDERED_BY``)."""
    names = {spec.name for spec in settings.specs}
    parts = [order_words(settings, order) or text if s is TIES else text
             for s in TABLE if (not s.applies_to or names & set(s.applies_to))
             and (text := s.footer(getattr(settings, s.name))) is not None]
    if settings.compat:
        changed = ", ".join(settings.compat_overrides)
        parts.insert(0, f"compat {settings.compat}" + (f" except {changed}" if changed else ""))
    if settings.config:
        parts.append(f"config {settings.config}")
    return "settings: " + " · ".join(parts)


TIES = ROWS["ties"]  # the tie rule's row, whose footer part says what ordered the lists


def order_words(settings: Settings, order: str | None) -> str | None:
    """What ordered a run's lists in the words of the reports, where that was not the tie
    rule (the file's ranks, unless a tie-aware rule scores their tied scores; the file's row
    order); None where the tie rule ordered tied scores, or ``order`` is unknown."""
    if order == "rank" and settings.ties in TIE_AWARE:
        return None
    return ORDERED_BY.get(order or "")


def ties_words(settings: Settings, order: str | None) -> str:
    """The footer's part for the order of the lists: what ordered them, else the tie rule."""
    return order_words(settings, order) or str(TIES.footer(settings.ties))


def make_settings(
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    compat: str | None = None,
    config: str | None = None,
    **options: Unpack[SettingOptions],
) -> Settings:
    """Check options and resolve metric names (``ndcg`` over every K, ``p@5``, ...).

    ``options`` are the names of ``TABLE``; None means "the default". With
    ``compat="trec_eval"`` the defaults are trec_eval's and metric names are read as trec_eval
    measures; an option given explicitly overrides the preset (as trec_eval's own flags do,
    ``-l 4`` for a threshold) and is recorded in ``compat_overrides``.
    """
    unknown = set(options) - set(ROWS)
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    chosen = {s.name: s.default for s in TABLE}
    picked = [name for name, value in options.items() if value is not None]
    if compat is not None:
        compat = str(compat).lower()
        if compat not in COMPAT:
            raise OptionError(f"{{option}} must be one of {', '.join(COMPAT)}, got {compat!r}",
                              "compat")
        preset = {s.name: v for s in TABLE if (v := s.preset(compat)) is not UNSET}
        chosen.update(preset)
        picked += preset
    overrides = []
    for name, value in options.items():
        if value is None:
            continue
        value = ROWS[name].check(value)
        if (compat is not None and ROWS[name].preset(compat) is not UNSET
                and value != chosen[name]):
            overrides.append(name)
        chosen[name] = value
    prefs: tuple[str, ...] = ()
    if chosen["preferences"]:  # trec_eval's prefs_* measures alone, computed apart
        prefs, runid = preference_words(metrics, bool(chosen["judgment_groups"]))
        specs: list[MetricSpec] = []
        relstring = None
    else:
        specs, runid, relstring = _specs(metrics, k, compat, bool(chosen["judgment_groups"]))
    _check_judgment_groups(specs, relstring, bool(chosen["judgment_groups"]))
    if chosen["ties"] == "expected":
        open_form = sorted({s.name for s in specs if not REGISTRY[s.name].tie_expectation})
        if open_form:
            raise OptionError(
                f"{{option}} expected has no closed form for {', '.join(open_form)} (the "
                "expectation over tie orders is not a function of each group's counts); use "
                "{opt:ties} optimistic / pessimistic for bounds", "ties")
    # each checked by its row, so of its field's type (None where the setting allows it)
    values: dict[str, Any] = {name: ROWS[name].check(value) if value is not None else None
                              for name, value in chosen.items()}
    if (package := TIE_PACKAGES.get(values["ties"])) is not None:
        require_tie_package(values["ties"], package)
    # P(rel=1) is P when relevant means relevance >= 1 already: one metric, named once
    specs = list(dict.fromkeys(drop_defaults(s, values) for s in specs))
    _check_collection_size(specs, values["collection_size"])
    return Settings(
        metrics=tuple(str(s) for s in specs),
        k=tuple(sorted({s.k for s in specs if s.k is not None})),
        compat=compat,
        compat_overrides=tuple(overrides),
        runid=runid,
        relstring=relstring,
        preference_measures=prefs,
        config=None if config is None else str(config),
        tie_rules=_tie_rules(specs, values["ties"]),
        chosen=tuple(name for name in ROWS if name in picked),
        **values,
    )


def _tie_rules(specs: list[MetricSpec], ties: str) -> tuple[tuple[str, str], ...]:
    """Each metric's tie rule under a rule per metric (``ties="provider"``: its ir_measures
    provider's, ``irmeasures.TIES``; the shared rule for a metric without one); ()
    under one rule for all."""
    if ties not in PER_METRIC_TIES:
        return ()
    return tuple((str(s), irmeasures.tie_rule(s) or list_ties(ties)) for s in specs)


def metric_named(word: str, settings: Settings) -> MetricSpec:
    """One metric named by the user (a gate, a margin, a baseline) as ``settings`` read the
    ``metrics`` words: trec_eval's or ir_measures' names under compat, parameters that change
    nothing dropped. An OptionError when the word names several metrics."""
    words = [word]
    preset = preset_of(settings.compat)
    if preset is not None and preset.trec_measures:
        words = translate([word])
    if len(words) != 1:
        raise OptionError(f"{word}: name one metric with its K, e.g. ndcg@10")
    spec = from_name(words[0], ir_measures=preset is not None and preset.ir_measures_names)
    return drop_defaults(spec, settings.to_dict())


def _check_collection_size(specs: list[MetricSpec], size: int | None) -> None:
    """utility's fourth coefficient counts the non-relevant items not retrieved, which only
    the collection's size tells (trec_eval computes it with 0 items unless given -N)."""
    for spec in specs:
        coefficients = dict(spec.params).get("coefficients")
        if size is None and coefficients is not None and numbers(str(coefficients))[3]:
            raise OptionError(f"{spec}: the fourth coefficient counts the non-relevant items "
                              "not retrieved, which needs the collection's size: give "
                              "{opt:collection_size}", "collection_size")


def _check_judgment_groups(specs: list[MetricSpec], relstring: str | None,
                           groups: bool) -> None:
    """Averaged over judgment groups, a user's value is the mean of per-user values: the
    metrics of the run as a whole, and relstring's text, have none."""
    if not groups:
        return
    whole = [str(s) for s in specs if REGISTRY[s.name].scope == CORPUS]
    if whole or relstring is not None:
        raise OptionError(f"{whole[0] if whole else 'relstring'}: averaged over judgment "
                          "groups, a user's value is the mean of the groups' values; this "
                          "one has none per user (drop it or {opt:judgment_groups})",
                          "judgment_groups")


def _specs(metrics, k, compat: str | None,
           judgment_groups: bool = False) -> tuple[list[MetricSpec], bool, str | None]:
    """Metric words over the K list, whether trec_eval's ``runid`` is asked for and its
    ``relstring``'s parameter (under compat a name without a K takes ``k``, else trec_eval's
    cut-offs: ``compat.measures``)."""
    if isinstance(k, int | str):
        k = [k]
    given = parse_ks(str(x) for x in k) if k else None
    if isinstance(metrics, str):
        metrics = [metrics]
    preset = preset_of(compat)
    if preset is None or not preset.trec_measures:
        words = list(metrics) if metrics else list(DEFAULT_METRICS)
        return expand(words, given or list(DEFAULT_K),
                      preset is not None and preset.ir_measures_names), False, None
    return measures(metrics, given, preset.name, judgment_groups)


class EvaluateOptions(SettingOptions, total=False):
    """``evaluate``'s keywords: the settings, the column names, the extra inputs' formats."""

    user_col: str | None
    item_col: str | None
    rank_col: str | None
    score_col: str | None
    relevance_col: str | None
    count_col: str | None
    propensity_col: str | None
    train_format: str | None
    catalog_format: str | None
    item_features_format: str | None
    item_groups_format: str | None
    propensity_format: str | None
    exclude_format: str | None
