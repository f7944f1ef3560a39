"""An interleaving log read and checked (``rankeval interleave score``, SPEC §13): one row per
shown slot of an interleaved list, or, as OpenSearch's User Behavior Insights (UBI) stores
them, one row per event (the slots shown, the clicks) with an ``action_name``.

The columns are rows of ``LOG_COLUMNS``: each its default name and the names other tools give
it, found case-insensitively. UBI's ``ubi_events`` index names the impression ``query_id``
(one id per query executed), the item ``object_id`` (``event_attributes.object.object_id``
once flattened), the position ``ordinal`` (``event_attributes.position.ordinal``), the user
``client_id`` and the query's text ``user_query``; a click is an event whose ``action_name``
is ``click``. A ranker's per-slot chance (probabilistic interleaving) is a column named for
its team with a prefix (``p_<team>``), an item's rank in a ranker's list (balanced
interleaving) likewise (``rank_<team>``): ``PREFIXES``.

OpenSearch's search-relevance plugin serves a team-draft interleaving (its A/B test search,
``ab_tests/{id}/_search``) whose every hit names the configuration that drafted it in
``_search_configuration_id`` (a per-test UUID of the configuration); the Search Relevance
dashboards record a click on such a hit as a UBI event with the item in
``event_attributes.object.id`` and the team in
``event_attributes.object.search_configuration_uuid``. Those names are aliases of the item
and team rows.

Every problem is one ``InputError`` naming the file, the column and example rows: a slot
without a team, a position twice in one impression, an item twice in one impression, a
click on an item the impression did not show, an impression in two queries, a clicked value
that is not a yes or no, a negative dwell time, a chance outside [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, OptionError
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import finite_column, id_column, read_typed, whole_column
from rankeval.io.encode import factorize


@dataclass(frozen=True)
class LogColumn:
    """One column of a log: its role, default name, the names other tools give it, the type
    it is read as, and what it is for (``--help`` and the docs)."""

    role: str
    default: str
    aliases: tuple[str, ...]
    kind: str  # "id", "int", "text", "float"
    help: str


LOG_COLUMNS: dict[str, LogColumn] = {c.role: c for c in (
    LogColumn("impression", "impression_id",
              ("impression", "query_id", "request_id", "search_id", "query_response_id",
               "slate_id"),
              "id", "one showing of an interleaved list (UBI: query_id)"),
    LogColumn("query", "query", ("user_query", "qid", "query_text", "keywords"),
              "id", "the query the list answered (UBI: user_query)"),
    LogColumn("user", "user_id", ("user", "client_id", "userId"), "id",
              "who was shown it (UBI: client_id)"),
    LogColumn("position", "position",
              ("ordinal", "event_attributes.position.ordinal", "rank", "pos", "slot"),
              "int", "the slot's place in the list (UBI: ordinal)"),
    LogColumn("item", "item_id",
              ("item", "object_id", "event_attributes.object.object_id",
               "event_attributes.object.id", "doc_id", "docno", "docid", "doc"),
              "id", "the item shown (UBI: object_id)"),
    LogColumn("team", "team",
              ("ranker", "interleaving_team", "team_id", "_search_configuration_id",
               "search_configuration_id", "search_configuration_uuid",
               "event_attributes.object.search_configuration_uuid", "search_configuration",
               "search_config", "config_id", "variant", "attribution"),
              "id", "the ranker the slot is credited to (team-draft; OpenSearch A/B tests: "
              "_search_configuration_id)"),
    LogColumn("clicked", "clicked", ("click", "is_click", "clicks"), "text",
              "whether the slot was clicked: 1/0, true/false, yes/no, or a click count"),
    LogColumn("action", "action_name", ("action", "event_type", "event_name"), "text",
              "an event log's kind of event (UBI: action_name): a click, or a slot shown"),
    LogColumn("dwell", "dwell", ("dwell_time", "dwell_seconds", "time_on_page"), "float",
              "seconds spent on a clicked item (for --min-dwell)"),
    LogColumn("timestamp", "timestamp", ("time", "ts", "event_time", "@timestamp"), "text",
              "when the event happened (orders the clicks for --clicks last)"),
)}
# per-ranker columns: role -> the prefix of a column named for its team
PREFIXES = {"chance": "p_", "rank_of": "rank_"}
# an event log's action_name values: a click, or a slot shown (every other action is
# counted and named in the report, never used)
CLICK_ACTIONS = ("click",)
SHOWN_ACTIONS = ("impression", "view", "shown", "display", "exposure", "slot")
# a clicked column's words (any other non-negative whole number is a count of clicks)
_YES_NO = {"1": True, "true": True, "yes": True, "y": True, "t": True,
           "0": False, "false": False, "no": False, "n": False, "f": False}
_TYPES = {"id": ID, "int": pa.int64(), "text": pa.string(), "float": pa.float64()}


@dataclass(frozen=True)
class SlotLog:
    """A checked log, one entry per shown slot, sorted by impression then position: codes
    for impressions (0..impressions-1), groups (the query or user each impression belongs
    to) and teams (``teams`` names them), each slot's position, item code and click, and
    where the log has them its dwell, its clicks' order in time, each ranker's chance of the
    slot (slots x rankers) and each ranker's rank of its item (``inf``: not listed)."""

    path: str
    impression: np.ndarray
    group: np.ndarray
    position: np.ndarray
    item: np.ndarray
    team: np.ndarray | None
    clicked: np.ndarray
    teams: tuple[str, ...]
    impressions: int
    groups: int
    rows: int
    columns: dict[str, str]  # role -> the column read
    group_by: str
    dwell: np.ndarray | None = None
    order: np.ndarray | None = None  # each slot's click order in time (-1: no time)
    arrival: np.ndarray | None = None  # each impression's place in the log (first row, or
    # earliest time when the log has times): 0 the first shown
    chance: np.ndarray | None = None
    rank_of: np.ndarray | None = None
    other_events: int = 0  # event rows neither a click nor a slot shown


def find_columns(names: list[str], given: dict[str, str], label: str) -> dict[str, str]:
    """role -> the column of ``names`` that plays it: the one ``given`` (``--column
    ROLE=NAME``), else the one named by the row's default or an alias; two candidates are an
    error naming them (a guess could read the wrong column)."""
    unknown = sorted(set(given) - set(LOG_COLUMNS))
    if unknown:
        raise OptionError(f"{{option}}: no column role {unknown[0]!r} (roles: "
                          f"{', '.join(LOG_COLUMNS)})", "column")
    lower = {n.lower(): n for n in names}
    out: dict[str, str] = {}
    for role, row in LOG_COLUMNS.items():
        if role in given:
            if given[role].lower() not in lower:
                raise InputError(label, f"no column {given[role]!r} (from --column "
                                 f"{role}={given[role]}); columns found: {_shown(names)}")
            out[role] = lower[given[role].lower()]
            continue
        found = [n for n in names if n.lower() in {a.lower() for a in (row.default,
                                                                        *row.aliases)}]
        taken = set(out.values())
        found = [n for n in found if n not in taken]
        if len(found) > 1:
            raise InputError(label, f"columns {_shown(found)} could each be the {role} "
                             f"column; choose one with --column {role}=NAME")
        if found:
            out[role] = found[0]
    return out


def _shown(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names[:10]) + (" ..." if len(names) > 10 else "")


def prefixed(names: list[str], prefix: str, taken: set[str]) -> dict[str, str]:
    """team -> its column for a per-ranker prefix (``p_a`` -> ``a``)."""
    return {n[len(prefix):]: n for n in names
            if n.lower().startswith(prefix) and len(n) > len(prefix) and n not in taken}


def read_log(table: Any, method: str, group_by: str = "query",
             given: dict[str, str] | None = None) -> SlotLog:
    """The log in ``table`` (an opened ``readers.Table`` or ``MemoryTable``) for ``method``
    (``team-draft``, ``balanced``, ``probabilistic``), its impressions grouped by
    ``group_by`` (``query`` or ``user``; an impression alone when the log has neither)."""
    label = table.label
    names = list(table.columns)
    cols = find_columns(names, given or {}, label)
    needed = ["impression", "position", "item"]
    if method == "team-draft":
        needed.append("team")
    for role in needed:
        if role not in cols:
            row = LOG_COLUMNS[role]
            raise InputError(label, f"no {role} column (looked for "
                             f"{', '.join((row.default, *row.aliases))}); columns found: "
                             f"{_shown(names)}; name it with --column {role}=NAME")
    if "clicked" not in cols and "action" not in cols:
        raise InputError(label, "no clicked column (looked for clicked, click, is_click, "
                         "clicks) and no action_name column of click events; columns found: "
                         f"{_shown(names)}")
    taken = set(cols.values())
    per_ranker = {role: prefixed(names, prefix, taken) for role, prefix in PREFIXES.items()}
    wanted = {"probabilistic": "chance", "balanced": "rank_of"}.get(method)
    if wanted is not None and len(per_ranker[wanted]) < 2:
        raise InputError(label, f"{method} interleaving needs a column per ranker named "
                         f"{PREFIXES[wanted]}<team> (found {len(per_ranker[wanted])}); columns "
                         f"found: {_shown(names)}")
    if method == "balanced" and len(per_ranker["rank_of"]) != 2:
        raise InputError(label, "balanced interleaving compares two rankers, found "
                         f"{_shown(list(per_ranker['rank_of'].values()))}")
    group_col = cols.get(group_by)
    if group_col is None:  # the bootstrap's unit: never guessed
        row = LOG_COLUMNS[group_by]
        instead = "user" if group_by == "query" else "query"
        raise InputError(label, f"no {group_by} column (looked for "
                         f"{', '.join((row.default, *row.aliases))}): the interval resamples "
                         f"the impressions of each {group_by} together; name it with --column "
                         f"{group_by}=NAME, or group by {instead} (--by {instead}); columns "
                         "found: "
                         f"{_shown(names)}")
    types = {cols[r]: _TYPES[LOG_COLUMNS[r].kind] for r in cols
             if r in ("impression", "position", "item", "team", "clicked", "action", "dwell",
                      "timestamp") or r == group_by}
    extra = per_ranker[wanted] if wanted else {}
    types |= {c: pa.float64() for c in extra.values()}
    data = read_typed(table, types)
    if "action" in cols and "clicked" not in cols:
        data, other = _events(data, cols, label)
    else:
        other = 0
    return _checked(data, cols, group_col, extra, wanted, method, group_by, label, other)


def _events(data: pa.Table, cols: dict[str, str], label: str) -> tuple[pa.Table, int]:
    """An event log as one row per shown slot: each click event marks the slot of its
    impression that showed its item."""
    action = pc.utf8_lower(data.column(cols["action"]).cast(pa.string()))
    is_click = to_numpy(fill_null(pc.is_in(action, pa.array(CLICK_ACTIONS)), False))
    is_shown = to_numpy(fill_null(pc.is_in(action, pa.array(SHOWN_ACTIONS)), False))
    other = int((~is_click & ~is_shown).sum())
    if not is_shown.any():
        raise InputError(label, f"no event shows a slot (action_name one of "
                         f"{', '.join(SHOWN_ACTIONS)}); the clicks alone cannot say what the "
                         "impressions showed", column=cols["action"])
    imp = data.column(cols["impression"])
    item = data.column(cols["item"])
    (imp_code, item_code), _ = factorize(imp, item)
    key = imp_code.astype(np.int64) * (int(item_code.max(initial=0)) + 1) + item_code
    shown_keys = key[is_shown]
    clicks = np.flatnonzero(is_click)
    found = np.isin(key[clicks], shown_keys)
    if not found.all():
        bad = clicks[~found]
        raise InputError(label, "rows with a click on an item the impression did not show",
                         column=cols["item"], count=len(bad),
                         examples=[(int(i) + 1, f"{imp[int(i)]} {item[int(i)]}")
                                   for i in bad[:5]])
    shown_rows = np.flatnonzero(is_shown)
    clicked = np.isin(key[shown_rows], key[clicks])
    out = data.take(from_numpy(shown_rows))
    out = out.set_column(out.column_names.index(cols["action"]), "clicked",
                         pa.array(np.where(clicked, "1", "0")))
    cols["clicked"] = "clicked"
    if "dwell" in cols or "timestamp" in cols:  # from each slot's first click event
        click_keys, first = np.unique(key[clicks], return_index=True)
        wanted = key[shown_rows]
        at_key = np.minimum(np.searchsorted(click_keys, wanted), max(len(click_keys) - 1, 0))
        hit = (len(click_keys) > 0) & (click_keys[at_key] == wanted) if len(click_keys) else (
            np.zeros(len(wanted), dtype=bool))
        at = np.where(hit, clicks[first[at_key]] if len(click_keys) else 0, -1)
        for role in ("dwell", "timestamp"):
            if role in cols:
                column = data.column(cols[role])
                taken = column.take(from_numpy(np.maximum(at, 0)))
                taken = pc.if_else(pa.array(at >= 0), taken, pa.nulls(len(at), column.type))
                out = out.set_column(out.column_names.index(cols[role]), cols[role], taken)
    return out, other


def _clicked(data: pa.Table, name: str, label: str) -> np.ndarray:
    """A clicked column as booleans, each distinct word looked up once."""
    text = pc.utf8_lower(pc.utf8_trim_whitespace(data.column(name).cast(pa.string())))
    encoded = cast(pa.DictionaryArray, pc.dictionary_encode(text).combine_chunks())
    words = [str(w) for w in encoded.dictionary.to_pylist()]
    meaning = np.array([int(_YES_NO[w]) if w in _YES_NO else int(w) > 0 if w.isdigit() else -1
                        for w in words] + [-1], dtype=np.int8)  # the last: an empty value
    index = to_numpy(fill_null(encoded.indices, len(words))).astype(np.int64)
    out = meaning[index]
    bad = np.flatnonzero(out < 0)
    if len(bad):
        raise InputError(label, "clicked values that are not 1/0, true/false, yes/no or a "
                         "count of clicks", column=name, count=len(bad),
                         examples=[(int(i) + 1, text[int(i)].as_py() or "")
                                   for i in bad[:5]])
    return out.astype(bool)


# a per-ranker column's rule (role -> how its values are read, which are wrong, what
# the wrong ones are): balanced's ranks, probabilistic's chances
_RANKER_VALUES: dict[str, tuple[Any, Any, str]] = {
    "rank_of": (lambda data, column, label: to_numpy(fill_null(data.column(column), np.inf)),
                lambda v: ~(v >= 1),
                "ranks below 1 or not numbers (empty: not in the ranker's list)"),
    "chance": (finite_column, lambda v: (v < 0) | (v > 1), "values outside [0, 1] (chances)"),
}


def _rows(label: str, problem: str, column: str, bad: np.ndarray, example) -> None:
    """Raise ``problem`` for the rows ``bad`` (if any), the first five shown by ``example``."""
    if len(bad):
        raise InputError(label, problem, column=column, count=len(bad),
                         examples=[(int(i) + 1, example(int(i))) for i in bad[:5]])


def _checked(data: pa.Table, cols: dict[str, str], group_col: str,
             extra: dict[str, str], wanted: str | None, method: str, group_by: str,
             label: str, other: int) -> SlotLog:
    """The log's rows checked in turn (each check one error naming its rows) and sorted by
    impression then position."""
    n = data.num_rows
    imp = id_column(data, cols["impression"], label)
    item = id_column(data, cols["item"], label)
    pos = whole_column(data, cols["position"], label, "positions")
    clicked = _clicked(data, cols["clicked"], label)
    (imp_code, item_code), _ = factorize(imp, item)
    imp_names, imp_code = np.unique(imp_code, return_inverse=True)
    group = id_column(data, group_col, label)
    (group_code,), _ = factorize(group)
    _rows(label, f"rows whose impression is in more than one {group_by}", group_col,
          _in_two(imp_code, group_code), lambda i: f"{imp[i]} {group[i]}")
    group_names, group_code = np.unique(group_code, return_inverse=True)
    for values, what, column in ((pos, "positions shown", cols["position"]),
                                 (item_code, "rows showing an item", cols["item"])):
        _rows(label, f"{what} twice in one impression", column, _twice(imp_code, values),
              lambda i, column=column: f"{imp[i]} {_at(data, column, i)}")
    order = np.lexsort((pos, imp_code))
    team, teams = (_teams(data, cols["team"], imp, item, label)
                   if "team" in cols and method != "balanced" else (None, ()))
    matrix = None
    if wanted is not None:
        names = list(extra)
        if team is not None and set(teams) - set(names):
            raise InputError(label, f"teams {sorted(set(teams) - set(names))!r} have no "
                             f"{PREFIXES[wanted]}<team> column", column=cols["team"])
        if team is not None:  # the team codes in the order of the per-ranker columns
            team = np.array([names.index(t) for t in teams])[team]
        teams = tuple(names)
        read, wrong, problem = _RANKER_VALUES[wanted]
        matrix = np.empty((n, len(names)))
        for j, name in enumerate(names):
            values = read(data, extra[name], label)
            _rows(label, problem, extra[name], np.flatnonzero(wrong(values)),
                  lambda i, values=values: float(values[i]))
            matrix[:, j] = values
        matrix = matrix[order]
    elif team is not None and len(teams) < 2:
        raise InputError(label, f"every slot is credited to one team ({teams[0]!r}): "
                         "interleaving compares two rankers or more", column=cols["team"])
    dwell = None
    if "dwell" in cols:
        values = to_numpy(fill_null(data.column(cols["dwell"]), np.nan)).astype(np.float64)
        _rows(label, "dwell values below 0", cols["dwell"], np.flatnonzero(values < 0),
              lambda i: float(values[i]))
        dwell = values[order]
    timing = (_time_order(data.column(cols["timestamp"]))[order] if "timestamp" in cols
              else None)
    first = np.full(len(imp_names), n, dtype=np.int64)
    np.minimum.at(first, imp_code, timing_rows if (timing_rows := _first_times(
        data, cols, n)) is not None else np.arange(n))
    arrival = np.empty(len(imp_names), dtype=np.int64)
    arrival[np.argsort(first, kind="stable")] = np.arange(len(imp_names))
    return SlotLog(
        path=label, arrival=arrival, impression=imp_code[order], group=group_code[order],
        position=pos[order], item=item_code[order],
        team=team[order] if team is not None else None, clicked=clicked[order],
        teams=teams, impressions=len(imp_names), groups=len(group_names), rows=n,
        columns=dict(cols) | ({f"{PREFIXES[wanted]}{t}": c for t, c in extra.items()}
                              if wanted else {}),
        group_by=group_by, dwell=dwell, order=timing,
        chance=matrix if wanted == "chance" else None,
        rank_of=matrix if wanted == "rank_of" else None, other_events=other)


def _in_two(imp_code: np.ndarray, group_code: np.ndarray) -> np.ndarray:
    """The rows whose impression is in more than one group."""
    pairs = np.unique(np.stack([imp_code, group_code], axis=1), axis=0)
    twice = pairs[np.flatnonzero(pairs[1:, 0] == pairs[:-1, 0]) + 1, 0]
    return np.flatnonzero(np.isin(imp_code, twice))


def _twice(imp_code: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The rows (in file order) whose value an earlier row of its impression has."""
    o = np.lexsort((values, imp_code))
    return np.sort(o[1:][(imp_code[o][1:] == imp_code[o][:-1])
                         & (values[o][1:] == values[o][:-1])])


def _teams(data: pa.Table, name: str, imp: Any, item: Any,
           label: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each row's team code and the teams' names; a row without a team is an error."""
    team_col = data.column(name)
    length = pc.utf8_length(team_col.cast(pa.string()))  # type: ignore[arg-type]
    # pyarrow-stubs: equal takes only Arrow scalars; pyarrow converts a Python number
    blank = pc.equal(length, 0)  # type: ignore[call-overload]
    empty = to_numpy(fill_null(pc.or_kleene(pc.is_null(team_col), blank), True))
    _rows(label, "rows without a team (slots credited to no ranker)", name,
          np.flatnonzero(empty), lambda i: f"{imp[i]} {item[i]}")
    (team_code,), team_dict = factorize(team_col)
    return team_code, tuple(str(t) for t in team_dict.to_pylist())


def _first_times(data: pa.Table, cols: dict[str, str], n: int) -> np.ndarray | None:
    """Each row's place in time, rows without a time after every timed one (in file
    order); None when the log has no times."""
    if "timestamp" not in cols:
        return None
    ranked = _time_order(data.column(cols["timestamp"]))
    return np.where(ranked >= 0, ranked, n + np.arange(n))


def _time_order(stamps: pa.ChunkedArray) -> np.ndarray:
    """Each row's place in time (0 the earliest; -1 no time): numbers (epoch seconds or
    milliseconds) as numbers, else text (ISO 8601 sorts as time)."""
    known = to_numpy(pc.is_valid(stamps))
    try:
        values = pc.cast(stamps, pa.float64()) if not pa.types.is_timestamp(stamps.type) \
            else stamps
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = stamps.cast(pa.string())
    order = to_numpy(pc.array_sort_indices(values.combine_chunks())).astype(np.int64)
    ranked = np.empty(len(order), dtype=np.int64)
    ranked[order] = np.arange(len(order))  # a stable sort: ties in file order
    return np.where(known, ranked, -1)


def _at(data: pa.Table, column: str, i) -> Any:
    return data.column(column)[int(i)].as_py()


def check_method(method: str, methods: tuple[str, ...]) -> None:
    if method not in methods:
        raise OptionError(f"{{option}} must be one of {', '.join(methods)}, got {method!r}",
                          "method")


