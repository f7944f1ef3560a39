"""The verbs of ``rankeval interleave`` (SPEC §13): ``make`` (the interleaved lists a serving
system would show), ``score`` (a log of what users clicked on them judged) and ``simulate``
(clicks drawn from the truth under a click model: what an experiment would find, and how many
impressions it needs). Files are read here; ``build.interleave`` makes the lists,
``analysis.interleave_judge`` and ``analysis.interleaving`` judge, ``analysis.clicks`` draws.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from scipy.stats import binomtest

from rankeval.analysis import clicks as click_models
from rankeval.analysis.choices import CLICK_MODELS, CORRECTIONS, MAX_SLOTS
from rankeval.analysis.interleave_judge import (
    METHODS,
    check,
    counted_clicks,
    gates,
    judge,
    trajectory,
)
from rankeval.analysis.interleaving import (
    balanced_credits,
    credits,
    delta,
    impressions_needed,
    outcomes,
    probabilistic_outcomes,
)
from rankeval.api.evaluate import evaluate
from rankeval.build.interleave import NONE, balanced, probabilistic, team_draft
from rankeval.build.ordering import order_rows
from rankeval.errors import InputError, OptionError
from rankeval.io.arrow import from_numpy
from rankeval.io.encode import factorize
from rankeval.io.formats import FORMATS, STDOUT, detect_format
from rankeval.io.formats.trec import check_field
from rankeval.io.interleave_log import PREFIXES, read_log
from rankeval.io.load import load_predictions, load_truth, open_input
from rankeval.io.output import check_distinct, check_writable, write_bytes
from rankeval.io.run_names import run_names
from rankeval.kernels.chunk import segment_positions
from rankeval.results.interleaving import (
    Interleaved,
    InterleaveScore,
    InterleaveSimulation,
    PairResult,
)
from rankeval.settings import ROWS


def _check_make(runs: Sequence[Any], method: str, k: int, tau: float) -> None:
    if method not in METHODS:
        raise OptionError(f"{{option}} must be one of {', '.join(METHODS)}, got {method!r}",
                          "method")
    if len(runs) < 2:
        raise OptionError(f"interleaving needs two runs or more, got {len(runs)}")
    if method == "balanced" and len(runs) != 2:
        raise OptionError(f"balanced interleaving takes two runs, got {len(runs)}: use "
                          "{opt:method} team-draft (team-draft multileaving) for more")
    if not 1 <= k <= MAX_SLOTS:
        raise OptionError(f"{{option}} must lie in 1..{MAX_SLOTS}, got {k}", "k")
    if not (tau > 0 and math.isfinite(tau)):
        raise OptionError(f"{{option}} must be a number above 0, got {tau}", "tau")


class RunLists:
    """Several runs' ranked lists over shared codes: ``lists[run, query, position]`` (item
    codes, ``NONE`` past a list's end), and the ids of the codes."""

    def __init__(self, runs: Sequence[Any], fmt: str | None, reading: Mapping[str, Any] | None,
                 depth: int | None, extra_users: Any = None, extra_items: Any = None):
        preds = [load_predictions(open_input(r, "predictions", fmt, reading)) for r in runs]
        users = [p.user for p in preds] + ([extra_users] if extra_users is not None else [])
        items = [p.item for p in preds] + ([extra_items] if extra_items is not None else [])
        user_codes, self.user_ids = factorize(*users)
        item_codes, self.item_ids = factorize(*items)
        self.extra = (user_codes[len(preds)] if extra_users is not None else None,
                      item_codes[len(preds)] if extra_items is not None else None)
        ties = ROWS["ties"].default
        queries = len(self.user_ids)
        ordered = []
        longest = 1
        for p, u, i in zip(preds, user_codes, item_codes, strict=False):
            order = order_rows(u, i, p.rank, p.score, ties)
            order = np.arange(len(u)) if order is None else order
            pos = segment_positions(u[order])
            ordered.append((u[order], i[order], pos))
            longest = max(longest, int(pos.max(initial=1)))
        self.depth = min(longest, depth) if depth is not None else longest
        self.lists = np.full((len(preds), queries, self.depth), NONE, dtype=np.int64)
        self.has = np.zeros(queries, dtype=bool)
        for r, (u, i, pos) in enumerate(ordered):
            keep = pos <= self.depth
            self.lists[r, u[keep], pos[keep] - 1] = i[keep]
            self.has[u] = True
        self.labels = [p.source.label for p in preds]


def _ranks_in(lists: np.ndarray, query: np.ndarray, item: np.ndarray) -> np.ndarray:
    """Each (query, item)'s rank in each run's list (slots x runs; ``inf``: not listed)."""
    runs = lists.shape[0]
    width = int(max(lists.max(initial=0), item.max(initial=0))) + 1
    out = np.full((len(query), runs), np.inf)
    wanted = query.astype(np.int64) * width + item
    for r in range(runs):
        q, p = np.nonzero(lists[r] >= 0)
        keys = q.astype(np.int64) * width + lists[r, q, p]
        order = np.argsort(keys, kind="stable")
        keys, ranks = keys[order], p[order] + 1
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        found = (keys[at] == wanted) if len(keys) else np.zeros(len(wanted), dtype=bool)
        out[found, r] = ranks[at[found]]
    return out


def make(runs: Sequence[Any], *, method: str = "team-draft", k: int = 10, seed: int = 0,
         tau: float = 3.0, names: Sequence[str] | None = None, run_format: str | None = None,
         output: str | None = None, output_format: str | None = None,
         reading: Mapping[str, Any] | None = None) -> Interleaved:
    """The interleaved list of every query the runs rank, as a serving system would show it:
    ``method`` team-draft (team-draft multileaving for more than two runs), balanced or
    probabilistic (softmax exponent ``tau``), at most ``k`` slots, seeded by ``seed``. Each
    run is a path, ``-`` or a table (pandas, polars, Arrow); ``names`` name the teams (default:
    the files' stems). With ``output`` (``-``: stdout) the lists are written as a run with a
    ``team`` column (and ``p_<team>`` chances for probabilistic, ``rank_<team>`` ranks for
    balanced) in ``output_format`` (default: from the extension; CSV on stdout)."""
    runs = list(runs)
    _check_make(runs, method, k, tau)
    teams = run_names(runs, names)
    target_format = None
    if output is not None:
        target_format = _check_output(output, output_format, method, teams,
                                      [r for r in runs if isinstance(r, str)])
    data = RunLists(runs, run_format, reading, None if method == "probabilistic" else k)
    rng = np.random.default_rng(seed)
    chances = None
    if method == "team-draft":
        items, team = team_draft(data.lists, k, rng)
    elif method == "balanced":
        items = balanced(data.lists, k, rng)
        team = np.full(items.shape, NONE, dtype=np.int16)
    else:
        items, team, chances = probabilistic(data.lists, k, rng, tau)
    q, slot = np.nonzero(items >= 0)
    columns: dict[str, Any] = {
        "user_id": data.user_ids.take(from_numpy(q)),
        "item_id": data.item_ids.take(from_numpy(items[q, slot])),
        "rank": from_numpy((slot + 1).astype(np.int64)),
    }
    if method != "balanced":
        codes = from_numpy(team[q, slot].astype(np.int32))  # one text per team, not per slot
        columns["team"] = pa.DictionaryArray.from_arrays(codes, pa.array(list(teams))).cast(
            pa.string())
    if chances is not None:
        for r, name in enumerate(teams):
            columns[f"{PREFIXES['chance']}{name}"] = from_numpy(chances[q, slot, r])
    if method == "balanced":
        ranks = _ranks_in(data.lists, q, items[q, slot])
        for r, name in enumerate(teams):
            values = ranks[:, r]
            columns[f"{PREFIXES['rank_of']}{name}"] = pa.array(
                np.where(np.isfinite(values), values, 0).astype(np.int64),
                mask=~np.isfinite(values))
    table = pa.table(columns)
    result = Interleaved(table, method, tuple(teams), k, seed,
                         tau if method == "probabilistic" else None, int(data.has.sum()))
    if output is not None and target_format is not None:
        write(result, output, target_format)
    return result


def _check_output(output: str, fmt: str | None, method: str, teams: Sequence[str],
                  inputs: list[str]) -> str:
    """Before reading: the output can be written, in a format that holds what ``method``
    writes (TREC: the team in the tag field, nothing more; JSON's dict of dicts: one value
    per item, no team)."""
    check_writable(output, "{opt:output}")
    check_distinct({"--output": output}, inputs)
    if output == STDOUT and not fmt:
        fmt = "csv"
    name = detect_format(output, fmt, "{opt:output_format}", reading=False)
    if name == "json":
        raise OptionError("{opt:output_format} json (a dict of dicts, one value per item) "
                          "cannot hold each slot's team: write csv, tsv, parquet, jsonl or trec")
    if name == "trec":
        if method != "team-draft":
            raise OptionError(f"{{opt:method}} {method} writes each slot's "
                              f"{'chances' if method == 'probabilistic' else 'ranks'} per "
                              "ranker, which a TREC run cannot hold: write csv, tsv, parquet "
                              "or jsonl")
        check_field("team names", list(teams))
    return name


def write(result: Interleaved, output: str, fmt: str) -> None:
    """The interleaved lists to ``output`` (``-``: stdout) in format ``fmt``: a run with its
    team column; TREC puts each slot's team in the tag field (score ``1 / rank``)."""
    table = result.table
    if fmt == "trec":
        cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", "rank", "team")]
        for label, values in (("query ids", cols[0]), ("item ids", cols[1])):
            check_field(f"interleaved lists: {label}", sorted(set(values)))
        data = "".join(f"{u} Q0 {i} {r} {1 / r!r} {t}\n"
                       for u, i, r, t in zip(*cols, strict=True)).encode()
    else:
        data = FORMATS[fmt].codec().encode(table, fmt, "predictions", "rankeval", output)
    if not FORMATS[fmt].binary and output != STDOUT and output.lower().endswith(".gz"):
        data = gzip.compress(data)
    write_bytes(output, data)


def score(log: Any, *, method: str = "team-draft", clicks: str = "all",
          min_dwell: float | None = None, by: str = "query", level: float = 0.95,
          rounds: int = 10_000, seed: int = 0, correction: str = "holm",
          baseline: str | None = None, fail_if_worse: bool = False,
          non_inferior: float | None = None, plan: float | None = None,
          alpha: float = 0.05, power: float = 0.8, log_format: str | None = None,
          columns: dict[str, str] | None = None,
          reading: Mapping[str, Any] | None = None,
          config: str | None = None) -> InterleaveScore:
    """Judge an interleaving log: one row per shown slot (or UBI-style events), credit by
    ``method``, per-impression wins, losses and ties, and for every pair of teams Delta with
    a bootstrap interval over ``by`` (query or user), the sign test and p-values corrected
    over the pairs (``correction``). ``clicks``: ``all`` or ``last``; ``min_dwell``: seconds
    a click needs to count. ``plan``: the Delta to plan for (impressions needed at ``alpha``
    and ``power``). Gates against ``baseline`` (default: the first team): ``fail_if_worse``,
    ``non_inferior`` (a margin on Delta). ``columns``: role -> column name. ``config``: the
    configuration file the options came from, named in every report."""
    check(method, clicks, by, min_dwell, non_inferior, plan, alpha, power)
    if correction not in CORRECTIONS:
        raise OptionError(f"{{option}} must be one of {', '.join(CORRECTIONS)}", "correction")
    if not 0 < level < 1:
        raise OptionError(f"{{option}} must lie in (0, 1), got {level}", "confidence")
    table = open_input(log, "log", log_format, reading)
    slots = read_log(table, method, by, columns)
    counted = counted_clicks(slots.impression, slots.position, slots.clicked, clicks,
                             slots.dwell, slots.order, min_dwell)
    teams = slots.teams
    base = 0
    if baseline is not None:
        if baseline not in teams:
            raise OptionError(f"{{option}} {baseline!r} is not a team of the log (teams: "
                              f"{', '.join(teams)})", "baseline")
        base = teams.index(baseline)
    pairs, per_pair = judge(method, slots.impression, slots.group, slots.position, counted,
                            slots.impressions, len(teams), slots.team, slots.chance,
                            slots.rank_of, level, rounds, seed, correction, plan, alpha,
                            power)
    group_of = np.zeros(slots.impressions, dtype=np.int64)
    group_of[slots.impression] = slots.group
    verdicts = (gates(pairs, per_pair, group_of, teams, base, fail_if_worse, non_inferior,
                      alpha, rounds, seed) if fail_if_worse or non_inferior is not None
                else [])
    results = [PairResult.named(p, teams) for p in pairs]
    first = pairs[0].preference
    # the checkpoints' intervals from at most 2,000 rounds; the last is the verdict itself
    path = (trajectory(per_pair[first.a, first.b], group_of, slots.arrival, level,
                       min(rounds, 2000), seed)[:-1] if slots.arrival is not None else [])
    path.append((slots.impressions, first.delta, first.low, first.high))
    summary = {"path": slots.path, "rows": slots.rows, "impressions": slots.impressions,
               "groups": slots.groups, "clicks": int(slots.clicked.sum()),
               "counted_clicks": int(counted.sum()), "other_events": slots.other_events,
               "columns": slots.columns}
    return InterleaveScore(summary, method, teams, clicks, min_dwell, slots.group_by, level,
                           rounds, seed, correction, results, verdicts, teams[base], alpha,
                           power, plan, path, config)


def _model_parameters(model: str, user: str, click: Sequence[float] | None,
                      stop: Sequence[float] | None, examine: Sequence[float] | None
                      ) -> dict[str, Any]:
    if model not in CLICK_MODELS:
        raise OptionError(f"{{option}} must be one of {', '.join(CLICK_MODELS)}, got "
                          f"{model!r}", "click_model")
    if user not in click_models.USERS:
        raise OptionError(f"{{option}} must be one of {', '.join(click_models.USERS)}, got "
                          f"{user!r}", "user")
    preset_click, preset_stop = click_models.USERS[user]
    out: dict[str, Any] = {"user": user, "click": list(click or preset_click)}
    if model == "dcm":
        out["stop"] = list(stop or preset_stop)
    elif model == "cascade":
        out["stop"] = list(stop or [1.0] * len(out["click"]))
    elif stop:
        raise OptionError("{opt:stop} is a parameter of the cascade and DCM models, not pbm")
    if model == "pbm":
        out["examine"] = list(examine) if examine else "1/position"
    elif examine:
        raise OptionError("{opt:examine} is a parameter of the pbm model")
    return out


def grades_of(lists: RunLists, query: np.ndarray, item: np.ndarray,
            truth_user: np.ndarray, truth_item: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """Each shown (query, item)'s grade (0 when not judged; ``NONE`` for an empty slot)."""
    width = int(max(item.max(initial=0), truth_item.max(initial=0))) + 1
    keys = truth_user.astype(np.int64) * width + truth_item
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], grade[order]
    wanted = query.astype(np.int64) * width + np.maximum(item, 0)
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = (keys[at] == wanted) if len(keys) else np.zeros(wanted.shape, dtype=bool)
    out = np.where(found, values[at] if len(keys) else 0, 0).astype(np.int64)
    return np.where(item >= 0, np.maximum(out, 0), click_models.NONE)


def simulate(runs: Sequence[Any], truth: Any, *, click_model: str = "cascade",
             user: str = "navigational", click: Sequence[float] | None = None,
             stop: Sequence[float] | None = None, examine: Sequence[float] | None = None,
             method: str = "team-draft", k: int = 10, tau: float = 3.0,
             impressions: int = 1000, trials: int = 100, seed: int = 0,
             names: Sequence[str] | None = None, metric: str | None = None,
             alpha: float = 0.05, power: float = 0.8, run_format: str | None = None,
             truth_format: str | None = None, reading: Mapping[str, Any] | None = None,
             config: str | None = None) -> InterleaveSimulation:
    """Simulated interleaving experiments: ``trials`` times, ``impressions`` queries drawn
    uniformly from those the truth judges, each shown its interleaved list (``method``),
    clicked by a simulated user (``click_model`` cascade, pbm or dcm; ``user`` a preset of
    the online learning-to-rank literature, or ``click`` P(click | grade), ``stop``
    P(stop | click, grade), ``examine`` P(examined | position)). Per pair of runs: the mean
    Delta, its spread over trials, how often a trial's sign agreed with the mean's and how
    often its sign test was significant at ``alpha``, the impressions a Delta that size needs
    (at ``power``), and each run's offline ``metric`` (default ndcg@k) under the truth.
    ``config``: the configuration file the options came from, named in every report."""
    runs = list(runs)
    _check_make(runs, method, k, tau)
    params = _model_parameters(click_model, user, click, stop, examine)
    _check_simulate(impressions, trials, alpha, power)
    teams = run_names(runs, names)
    qrels = load_truth(open_input(truth, "truth", truth_format, reading))
    data = RunLists(runs, run_format, reading, None if method == "probabilistic" else k,
                  qrels.user, qrels.item)
    t_user, t_item = data.extra
    assert t_user is not None and t_item is not None
    grade = np.rint(np.asarray(qrels.relevance, dtype=np.float64)).astype(np.int64)
    judged = np.zeros(len(data.user_ids), dtype=bool)
    judged[t_user] = True
    pool = np.flatnonzero(judged & data.has)
    if not len(pool):
        raise InputError(data.labels[0], "no query of the runs is judged by the truth")
    rng = np.random.default_rng(seed)
    rankers = len(runs)
    pairs = [(a, b) for a in range(rankers) for b in range(a + 1, rankers)]
    deltas = {p: np.full(trials, np.nan) for p in pairs}
    significant = {p: np.zeros(trials, dtype=bool) for p in pairs}
    pooled: dict[tuple[int, int], list[np.ndarray]] = {p: [] for p in pairs}
    groups: list[np.ndarray] = []
    for t in range(trials):
        drawn = pool[rng.integers(0, len(pool), impressions)]
        per_pair = simulated_outcomes(data.lists[:, drawn, :], drawn, method, k, tau, rng,
                                      lambda q, i: grades_of(data, q, i, t_user, t_item, grade),
                                      click_model, params)
        groups.append(drawn)
        for p in pairs:
            out = per_pair[p]
            pooled[p].append(out)
            chance = (np.stack([out == v for v in (1, -1, 0)], axis=1) if out.ndim == 1
                      else out)
            w, loss, tie = chance.sum(axis=0)
            deltas[p][t] = float(delta(w, loss, tie))
            if out.ndim == 1 and w + loss:
                significant[p][t] = binomtest(int(w), int(w + loss)).pvalue < alpha
    summaries = [{"a": teams[a], "b": teams[b],
                  **_trials_summary(deltas[a, b], pooled[a, b], groups, alpha, power,
                                    float(significant[a, b].mean())
                                    if method != "probabilistic" else None)}
                 for a, b in pairs]
    metric = metric or f"ndcg@{k}"
    offline = _offline(runs, truth, teams, metric, run_format, truth_format)
    return InterleaveSimulation(method, tuple(teams), click_model, params, impressions,
                                trials, seed, len(pool), summaries, offline, metric, alpha,
                                power, config=config)


def _check_simulate(impressions: int, trials: int, alpha: float, power: float) -> None:
    """The simulation's sizes and levels, each refused in one line."""
    if not 1 <= impressions <= 10_000_000 or not 1 <= trials <= 100_000:
        raise OptionError("{opt:impressions} must lie in 1..10,000,000 and {opt:trials} in "
                          "1..100,000")
    if impressions * trials > 200_000_000:
        raise OptionError("{opt:impressions} x {opt:trials} is past 200,000,000 simulated "
                          "impressions: fewer trials tell the spread as well")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise OptionError("{opt:alpha} and {opt:power} must lie in (0, 1)")


def _trials_summary(values: np.ndarray, pooled: list[np.ndarray], groups: list[np.ndarray],
                    alpha: float, power: float, significant: float | None) -> dict[str, Any]:
    """One pair's Delta over the trials: its mean, spread, 95% range, how often a trial's
    sign agreed with the mean's, how often its sign test was ``significant``, and the median
    of the trials' plans (impressions needed)."""
    finite = values[np.isfinite(values)]
    mean = float(finite.mean()) if len(finite) else math.nan
    spread = float(finite.std(ddof=1)) if len(finite) > 1 else math.nan
    agree = (float(np.mean(np.sign(finite) == np.sign(mean)))
             if len(finite) and mean else math.nan)
    plan_n = math.nan
    if math.isfinite(mean) and 0 < abs(mean) < 0.5:  # each trial a pilot of its size:
        # the clustering in queries weighs by the impressions per query, so the trials
        # are not pooled; the median of their plans
        plans = [impressions_needed(out, drawn, mean, alpha, power).impressions
                 for out, drawn in zip(pooled, groups, strict=True)]
        finite_plans = [x for x in plans if math.isfinite(x)]
        plan_n = float(np.median(finite_plans)) if finite_plans else math.nan
    return {"delta": mean, "spread": spread,
            "low": float(np.quantile(finite, 0.025)) if len(finite) else None,
            "high": float(np.quantile(finite, 0.975)) if len(finite) else None,
            "agree": agree, "significant": significant, "impressions_needed": plan_n}


def simulated_outcomes(lists: np.ndarray, query: np.ndarray, method: str, k: int, tau: float,
                       rng: np.random.Generator, grade_lookup, click_model: str,
                       params: dict[str, Any]) -> dict[tuple[int, int], np.ndarray]:
    """One batch of impressions (``lists``: runs x impressions x depth, the drawn queries'
    lists): interleaved, clicked under the click model, credited; per pair of runs each
    impression's outcome (codes, or win/loss/tie chances for probabilistic)."""
    rankers, n, _ = lists.shape
    chances = None
    if method == "team-draft":
        items, team = team_draft(lists, k, rng)
    elif method == "balanced":
        items = balanced(lists, k, rng)
        team = None
    else:
        items, team, chances = probabilistic(lists, k, rng, tau)
    grades = grade_lookup(np.repeat(query[:, None], items.shape[1], axis=1), items)
    if click_model == "pbm":
        examine = (None if params["examine"] == "1/position"
                   else np.asarray(params["examine"], dtype=np.float64))
        clicked = click_models.pbm(grades, params["click"], rng, examine)
    else:
        clicked = click_models.cascade(grades, params["click"], params["stop"], rng)
    pairs = [(a, b) for a in range(rankers) for b in range(a + 1, rankers)]
    if method == "probabilistic":
        assert chances is not None
        return {(a, b): probabilistic_outcomes(chances, clicked, a, b) for a, b in pairs}
    if method == "balanced":
        imp, slot = np.nonzero(items >= 0)
        ranks = _ranks_in(lists, imp, items[imp, slot])
        credit = balanced_credits(imp, slot, ranks[:, 0], ranks[:, 1], clicked[imp, slot], n)
    else:
        assert team is not None
        imp, slot = np.nonzero(items >= 0)
        credit = credits(imp, team[imp, slot].astype(np.int64), clicked[imp, slot], n,
                         rankers)
    return {(a, b): outcomes(credit, a, b) for a, b in pairs}


def _offline(runs: Sequence[Any], truth: Any, teams: Sequence[str], metric: str,
             run_format: str | None, truth_format: str | None) -> dict[str, dict[str, float]]:
    """Each run's offline metric under the truth (rankeval's own evaluation)."""
    out = {}
    for run, team in zip(runs, teams, strict=True):
        ev = evaluate(run, truth, metrics=[metric], preds_format=run_format,
                      truth_format=truth_format)
        out[team] = {str(m): float(v) if v is not None else math.nan
                     for m, v in ev.metrics.items()}
    return out
