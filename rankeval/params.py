"""Metric parameters: ``name(param=value, ...)@K``, ir_measures' grammar (``P(rel=2)@10``,
``RBP(p=0.8)``, ``nDCG(dcg='exp-log2')@10``) for one metric at a time.

A parameter either sets a convention of ``conventions.TABLE`` for that metric alone (``rel`` is
its relevance threshold, ``p`` its RBP persistence) or is read by the metric's kernel
(``beta`` of set_f1). ``PARAMS`` says which metrics take which parameter; a new parameter is one
row here, and a kernel parameter is read from ``Sums.params``.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rankeval.errors import OptionError, plural

if TYPE_CHECKING:  # settings is made of these parameters' metrics: it imports this module
    from rankeval.names import MetricSpec
    from rankeval.settings import Settings

Value = bool | int | float | str
Params = tuple[tuple[str, Value], ...]  # in the order written, as ir_measures keeps them

# Metrics by what they read: which items count as relevant (a threshold), the list as ranked
# (condensed lists), the gain of each grade.
_ALPHA = ("alpha_ndcg", "alpha_dcg", "err_ia", "nerr_ia", "nrbp", "nnrbp")
_DIVERSITY = (*_ALPHA, "p_ia", "map_ia", "subtopic_recall")
_GROUPS = ("awrf", "exposure_ratio")
_IPS = ("ips_recall", "ips_precision", "ips_dcg", "ips_ndcg")
POP_RECALL_BETA = 0.5
# The propensity key of an ips_ metric written without gamma=: --propensity FILE's
FROM_FILE = "file"
_EXPOSURE = ("ee_l", "ee_d", "ee_r", "ee_l_norm", "ee_d_norm", "ee_r_norm")
_THRESHOLD = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "r_precision",
              "r_precision_mult", "iprec", "iprec_11pt", "bpref", "gm_bpref", "gm_map",
              "set_precision", "set_recall", "set_f1", "set_map", "set_relative_precision",
              "relative_precision", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "inf_ap",
              "rbp", "rbp_residual", "utility", "yaap", "bin_g", "ndcg_rel", "compat", *_DIVERSITY)
# cwl_eval's measures: gains scaled to [0, 1] by min_rel and max_rel
CWL = ("sdcg", "inst", "insq", "bpm", "nerr8", "nerr9", "nerr10", "nerr11")
_GAIN = ("ndcg", "dcg", "idcg", "g", "ndcg_rel", "r_ndcg")
_LIST = ("precision", "recall", "f1", "hit_rate", "mrr", "map", "r_precision",
         "r_precision_mult", "iprec", "iprec_11pt", "ndcg", "dcg", "idcg", "gm_map", "err",
         "rbp", "unjudged", "judged", "bin_g", "g", "ndcg_rel", "r_ndcg", "compat", *_DIVERSITY)


@dataclass(frozen=True)
class Param:
    """One parameter: its name as written, what it means, the metrics that take it, its
    check, and the settings it gives the metric (``{}``: the kernel reads the value)."""

    name: str
    help: str
    metrics: tuple[str, ...]
    check: Callable[[Any], Value]
    settings: Callable[[Value, str], dict[str, Any]] = lambda value, metric: {}
    default: Any = None  # a kernel parameter's value when not given
    defaults: dict[str, Any] = dataclasses.field(default_factory=dict)  # per metric, if other
    value: Callable[[Any], Any] = lambda v: v  # what two values are compared by


def _from_minus_one(value: Any) -> Value:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value >= -1):
        raise OptionError(f"gamma= must be a number of at least -1, got {value!r}")
    return value


def exponent(name: str, given: dict[str, Any]) -> float | str | None:
    """Where a propensity-weighted metric's weights come from: the exponent of
    popularity^-exponent, (gamma + 1) / 2 (Yang et al.) or beta (pop_recall, Steck);
    ``FROM_FILE`` for an ips_ metric without gamma= (--propensity FILE); None for other
    metrics. ``given``: the kernel parameters as written (defaults left out)."""
    if "gamma" in given:
        return (float(given["gamma"]) + 1.0) / 2.0
    if name in _IPS:
        return FROM_FILE
    if name == "pop_recall":
        return float(given.get("beta", POP_RECALL_BETA))
    return None


def _positive(name: str) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                math.isfinite(value) and value > 0):
            raise OptionError(f"{name}= must be a number > 0, got {value!r}")
        return value
    return check


def _unit(name: str) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise OptionError(f"{name}= must be a number in [0, 1], got {value!r}")
        return float(value)
    return check


def _whole(name: str) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise OptionError(f"{name}= must be a whole number (a grade), got {value!r}")
        return int(value)
    return check


def _probability(value: Any) -> Value:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise OptionError(f"p= must be a number in (0, 1), got {value!r}")
    return float(value)


def _flag_named(name: str) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if not isinstance(value, bool):
            raise OptionError(f"{name}= must be True or False, got {value!r}")
        return value
    return check


_flag = _flag_named("judged_only")


def _name(name: str) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if not isinstance(value, str) or not value:
            raise OptionError(f"{name}= must be a column name in quotes, got {value!r}")
        return value
    return check


def _distribution(name: str, relevant: bool) -> Callable[[Any], Value]:
    """A group distribution: 'catalog', shares 'GROUP=SHARE,...' (kept canonically: groups
    sorted), and for a target 'relevant' (per user; a background is one for all users)."""
    words = ("relevant", "catalog") if relevant else ("catalog",)

    def check(value: Any) -> Value:
        if value in words:
            return str(value)
        shares = target_shares(value) if isinstance(value, str) else None
        if not shares:
            raise OptionError(f"{name}= must be {' or '.join(map(repr, words))} or shares "
                              f"'GROUP=SHARE,...' (each share >= 0, one > 0), got {value!r}")
        return ",".join(f"{g}={v:g}" for g, v in sorted(shares.items()))
    return check


def target_shares(text: str) -> dict[str, float] | None:
    """``'acme=2,beta=1'`` -> {acme: 2.0, beta: 1.0}; None when not such a list."""
    out: dict[str, float] = {}
    for part in text.split(","):
        group, eq, share = part.rpartition("=")
        try:
            v = float(share)
        except ValueError:
            return None
        if not eq or not group.strip() or not math.isfinite(v) or v < 0:
            return None
        out[group.strip()] = out.get(group.strip(), 0.0) + v
    return out if sum(out.values()) > 0 else None


def _choice(name: str, choices: tuple[str, ...]) -> Callable[[Any], Value]:
    def check(value: Any) -> Value:
        if value not in choices:
            raise OptionError(f"{name}= must be one of {', '.join(map(repr, choices))}, "
                              f"got {value!r}")
        return str(value)
    return check


_DCG = {"log2": "linear", "exp-log2": "exponential"}


def _dcg(value: Any) -> Value:
    if value not in _DCG:
        raise OptionError(f"dcg= must be 'log2' (gain r) or 'exp-log2' (gain 2^r - 1), "
                          f"got {value!r}")
    return str(value)


def parse_gains(value: Any) -> str | None:
    """``'1=3, 2=9'`` (or ``1:3``) -> ``'1=3,2=9'``: a gain per grade, sorted by grade; the
    gains are >= 0, and 0 for a grade <= 0 (a grade not named keeps its value)."""
    if value is None:
        return None
    pairs: dict[float, float] = {}
    for part in str(value).replace(":", "=").split(","):
        grade, eq, gain = part.partition("=")
        try:
            g, v = float(grade), float(gain)
        except ValueError:
            g = v = math.nan
        if not eq or not (math.isfinite(g) and math.isfinite(v)) or v < 0 or (g <= 0 < v):
            raise OptionError("{option} takes GRADE=GAIN pairs, each gain >= 0 and a grade <= 0 "
                              f"earning 0 (e.g. 1=1,2=3), got {value!r}", "gains")
        pairs[g] = v
    return ",".join(f"{g:g}={v:g}" for g, v in sorted(pairs.items()))


def gain_pairs(text: str) -> tuple[list[float], list[float]]:
    """The grades and gains of a ``parse_gains`` text."""
    pairs = [part.split("=") for part in text.split(",")]
    return [float(g) for g, _ in pairs], [float(v) for _, v in pairs]


def _gains(value: Any) -> Value:
    """A dict of grade -> gain, kept as its canonical text (``1=3,2=9``)."""
    if isinstance(value, dict):
        value = ",".join(f"{k!r}={v!r}" for k, v in value.items())
    out = parse_gains(value)
    assert out is not None
    return out


def numbers(text: str) -> list[float]:
    """The numbers of a list parameter's text (``'0.2,0.5'``)."""
    return [float(x) for x in str(text).split(",")]


def _number_list(name: str, count: int | None, check: Callable[[list[float]], str | None]
                 ) -> Callable[[Any], Value]:
    """A list of numbers, kept as its text (``'0.2,0.5,0.8'``, as trec_eval prints it)."""
    def parse(value: Any) -> Value:
        items = list(value) if isinstance(value, tuple | list) else str(value).split(",")
        try:
            out = [float(x) for x in items]
        except (TypeError, ValueError):
            out = []
        problem = ("a list of numbers, e.g. " + name) if not out or not all(
            math.isfinite(x) for x in out) else check(out)
        if count is not None and len(out) != count:
            problem = f"{plural(count, 'number')}"
        if problem:
            raise OptionError(f"{name.split('=')[0]}= must be {problem}, got {value!r}")
        # as written (trec_eval prints 11pt_avg_.25,.5 as typed); compared by value
        return ",".join(x.strip() for x in items) if isinstance(value, str) else ",".join(
            repr(x) for x in out)
    return parse


def _levels(values: list[float]) -> str | None:
    if not all(0 <= x <= 1 for x in values) or values != sorted(values):
        return "recall levels in [0, 1], ascending (trec_eval reads them in order)"
    return None


def _threshold_settings(value: Value, metric: str) -> dict[str, Any]:
    # RBP's gain is the grade unless a threshold is given (ir_measures' RBP(rel=1))
    return {"relevance_threshold": float(value),
            **({"rbp_gain": "binary"} if metric == "rbp" else {})}


PARAMS: dict[str, Param] = {p.name: p for p in (
    Param("rel", "relevant when the grade is at least rel (ir_measures' rel=, trec_eval -l)",
          _THRESHOLD, _positive("rel"), _threshold_settings),
    Param("judged_only", "condensed lists: unjudged items dropped before the cut "
          "(trec_eval -J)", _LIST, _flag, lambda v, m: {"judged_only": v}),
    Param("p", "the persistence: RBP's chance of reading on (see --rbp-p); compat's RBO "
          "weight (default 0.95); nerr10's patience (default 0.9); the expected-exposure "
          "reader's patience (see --patience)",
          ("rbp", "rbp_residual", "compat", "nerr10", *_EXPOSURE), _probability,
          lambda v, m: {"rbp_p": v} if m in ("rbp", "rbp_residual") else
          {"patience": v} if m in _EXPOSURE else {}, default=None,
          defaults={"compat": 0.95, "nerr10": 0.9}),
    Param("by", "awrf, exposure_ratio: the group column of --item-groups (default: its "
          "first)", _GROUPS, _name("by"), default=None),
    Param("target", "awrf, exposure_ratio: the group distribution to match: 'relevant' (of "
          "the user's relevant items, the default), 'catalog' (of the items --item-groups "
          "names), or given as 'GROUP=SHARE,...' (shares scaled to sum to 1; a group not "
          "named: 0)", _GROUPS, _distribution("target", True), default="relevant"),
    Param("background", "awrf, exposure_ratio: a distribution mixed into the target as TREC "
          "2022 does, 'catalog' or 'GROUP=SHARE,...': the named groups' part of the target is "
          "spread (1 - mix) as the target, mix as the background; (none) keeps its own",
          _GROUPS, _distribution("background", False), default=None),
    Param("mix", "awrf, exposure_ratio: the background's weight (default 0.5, TREC 2022's)",
          _GROUPS, _unit("mix"), default=0.5),
    Param("model", "the expected-exposure reader: 'rbp' (exposure p^(rank-1), the default) "
          "or 'dcg' (1/log2(rank+1))", _EXPOSURE, _choice("model", ("rbp", "dcg")),
          default="rbp"),
    Param("T", "the gain the reader wants (default 1.0): INST, INSQ, BPM and nerr11",
          ("inst", "insq", "bpm", "nerr11"), _positive("T"), default=1.0),
    Param("min_rel", "the grade that gains 0 (default 0): gains are (clip(grade, min_rel, "
          "max_rel) - min_rel) / (max_rel - min_rel)", CWL, _whole("min_rel"), default=0),
    Param("max_rel", "the grade that gains 1 (default 1; ir_measures requires it)", CWL,
          _whole("max_rel"), default=1),
    Param("normalize", "compat: divided by the ideal ranking's own RBO, so that it reaches 1 "
          "(default True); False divides by the weights to the depth, as RBO does",
          ("compat",), _flag_named("normalize"), default=True),
    Param("dcg", "the gain: 'log2' for r, 'exp-log2' for 2^r - 1 (the discount is log2)",
          _GAIN, _dcg, lambda v, m: {"gain": _DCG[str(v)]}),
    Param("gains", "the gain of each grade, as {grade: gain} (trec_eval's ndcg.1=3,2=9)",
          _GAIN, _gains, lambda v, m: {"gains": v}),
    Param("beta", "set_f1: the weight of recall, (1 + beta) P R / (beta P + R), beta "
          "unsquared, as trec_eval's set_F and ir_measures' SetF (default 1); nrbp: the "
          "chance of reading on (default 0.5); pop_recall: each relevant item weighs "
          "popularity^-beta (Steck 2011; default 0.5)", ("set_f1", "nrbp", "nnrbp", "pop_recall"),
          _positive("beta"), default=1.0,
          defaults={"nrbp": 0.5, "nnrbp": 0.5, "pop_recall": POP_RECALL_BETA}),
    Param("gamma", "the propensity-weighted metrics: P(observed) proportional to training "
          "popularity^((gamma + 1) / 2) (Yang et al. 2018), which needs --train; -1: equal "
          "weights; without gamma=, the probabilities of --propensity FILE",
          _IPS, _from_minus_one, default=None),
    Param("sn", "the propensity-weighted metrics: weights rescaled to a mean of 1 over the "
          "user's relevant items (self-normalised, the default); False: as they are (IPS)",
          _IPS, _flag_named("sn"), default=True),
    Param("alpha", "the intent-aware metrics' redundancy penalty: a subtopic's gain falls by "
          "(1 - alpha) each time it is covered again (default 0.5, ndeval's)", _ALPHA,
          _unit("alpha"), default=0.5),
    Param("levels", "the recall levels iprec_11pt averages over, as '0.2,0.5,0.8' (trec_eval's "
          "11pt_avg.0.2,0.5,0.8); 0, 0.1, ..., 1 when not given", ("iprec_11pt",),
          _number_list("levels='0.2,0.5,0.8'", None, _levels), default=None, value=numbers),
    Param("coefficients", "utility's a,b,c,d: a (relevant retrieved) + b (non-relevant "
          "retrieved) + c (relevant missed) + d (non-relevant not retrieved, which needs "
          "the collection's size: --collection-size, trec_eval -N), as trec_eval's "
          "utility.1,-1,0,0", ("utility",),
          _number_list("coefficients='1,-1,0,0'", 4, lambda v: None), default="1,-1,0,0",
          value=numbers),
)}


def literal(shown: str, text: str) -> list[tuple[str, Any]]:
    """``'rel=2, judged_only=True'`` -> ``[('rel', 2), ('judged_only', True)]``, as written:
    Python literals (numbers, quoted strings, True/False, {grade: gain} dicts)."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        assert isinstance(call, ast.Call) and not call.args
        pairs = [(kw.arg, ast.literal_eval(kw.value)) for kw in call.keywords]
        assert all(name is not None for name, _ in pairs)
    except (SyntaxError, ValueError, AssertionError):
        raise OptionError(f"{shown}: parameters are name=value pairs, e.g. rel=2 or "
                          "dcg='exp-log2'") from None
    return [(str(name), value) for name, value in pairs]


def check(metric: str, pairs: list[tuple[str, Any]], shown: str) -> Params:
    """Parameters checked against what ``metric`` takes, in the order written; an
    OptionError names what is wrong."""
    out: dict[str, Value] = {}
    for name, value in pairs:
        param = PARAMS.get(name)
        if param is None or metric not in param.metrics:
            raise OptionError(f"{shown}: {metric} takes no parameter {name!r}; "
                              f"{taken(metric)}")
        try:
            out[name] = param.check(value)
        except OptionError as e:
            raise OptionError(f"{shown}: {e}") from None
    low, high = float(out.get("min_rel", 0)), float(out.get("max_rel", 1))  # checked ints
    if metric in CWL and not low < high:
        raise OptionError(f"{shown}: min_rel= ({low:g}) must be below max_rel= ({high:g})")
    return tuple(out.items())


def taken(metric: str) -> str:
    names = [p.name for p in PARAMS.values() if metric in p.metrics]
    return f"it takes {', '.join(names)}" if names else "it takes none"


def text(params: Params) -> str:
    """The spelling of ``params`` as ir_measures writes them: ``rel=2,dcg='exp-log2'``,
    ``gains={1:0,2:3}``."""
    return ",".join(f"{name}={_value(v, name)}" for name, v in params)


def _value(v: Value, name: str) -> str:
    if name == "gains":
        return "{" + ",".join(f"{g}:{x}" for g, x in (pair.split("=") for pair in
                                                         str(v).split(","))) + "}"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, str):
        return repr(v)
    return repr(v)


def settings_of(params: Params, metric: str) -> dict[str, Any]:
    """The conventions the parameters set for ``metric``."""
    out: dict[str, Any] = {}
    for name, value in params:
        out.update(PARAMS[name].settings(value, metric))
    return out


def kernel_params(params: Params, metric: str) -> dict[str, Value]:
    """The parameters ``metric``'s kernel reads (those setting no convention)."""
    return {name: v for name, v in params if not PARAMS[name].settings(v, metric)}


# Conventions the build reads: a metric that sets one is computed on a build of its own (the
# same users, chosen by the evaluation's settings).
BUILD = ("relevance_threshold", "judged_only", "ties")
# --ties values that give each metric a rule of its own (``Settings.tie_rules``, one order
# rule per metric), and the rule of what orders lists for every metric at once: the
# evaluation's own build (its notices, the metrics of that rule), RBO, interleaving.
PER_METRIC_TIES = {"provider": "trec"}


def list_ties(ties: str) -> str:
    """The rule that orders lists shared by every metric under ``ties``."""
    return PER_METRIC_TIES.get(ties, ties)


def tie_rules(settings) -> set[str]:
    """Every rule that orders some metric's lists under ``settings``."""
    return {list_ties(settings.ties), *dict(getattr(settings, "tie_rules", ())).values()}


def _own(spec, settings) -> dict[str, Any]:
    """The conventions ``spec`` sets: its parameters', and its tie rule when each metric
    has one (``Settings.tie_rules``, keyed by the metric's name)."""
    own = settings_of(spec.params, spec.name)
    rules = getattr(settings, "tie_rules", ())
    if rules:
        own["ties"] = dict(rules).get(str(spec), list_ties(settings.ties))
    return own


def build_key(spec: MetricSpec, settings: Settings) -> tuple[tuple[str, Any], ...]:
    """The build conventions ``spec`` sets to other values than ``settings``' own build;
    () for none."""
    own = _own(spec, settings)
    base = {n: getattr(settings, n) for n in BUILD} | {"ties": list_ties(settings.ties)}
    return tuple((n, own[n]) for n in BUILD if n in own and own[n] != base[n])


def group_key(spec: MetricSpec, settings: Settings) -> tuple:
    """Specs with one key share one build and one set of sums."""
    own = _own(spec, settings)
    return (build_key(spec, settings), tuple(sorted(own.items(), key=lambda kv: kv[0])),
            tuple(sorted(kernel_params(spec.params, spec.name).items())))


def settings_for(spec: MetricSpec, settings: Settings) -> Settings:
    """The settings ``spec`` is computed with: the evaluation's, with its parameters' (and
    its own tie rule)."""
    own = _own(spec, settings)
    return dataclasses.replace(settings, **own) if own else settings


def undefined_without_relevant(spec: MetricSpec, settings: Settings) -> bool:
    """A user with no relevant item at ``spec``'s own threshold has no value for it (users
    without relevant items are skipped)."""
    return (settings.zero_relevant_users == "skip"
            and any(n == "relevance_threshold" for n, _ in build_key(spec, settings)))


def drop_defaults(spec: MetricSpec, conventions: Mapping[str, Any]) -> MetricSpec:
    """``spec`` without the parameters that change nothing (``P(rel=1)`` when relevant means
    relevance >= 1 already), so that it is named once. ``conventions``: the settings' values
    by name (``Settings.to_dict()``, or the values ``make_settings`` is making one of)."""
    kept = tuple((name, v) for name, v in spec.params
                 if not _no_change(PARAMS[name], v, spec.name, conventions))
    return spec if kept == spec.params else dataclasses.replace(spec, params=kept)


def _no_change(param: Param, value: Value, metric: str, conventions: Mapping[str, Any]) -> bool:
    own = param.settings(value, metric)
    if not own:
        default = param.defaults.get(metric, param.default)
        return default is not None and param.value(value) == param.value(default)
    return all(conventions[k] == v for k, v in own.items())
