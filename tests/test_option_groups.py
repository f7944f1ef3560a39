"""The option groups (#47, S15): each group's fields are its table's, every one of them an
option of the commands that take the group, and each reads as the mapping the loaders took
before (get, [], iteration) while staying a frozen dataclass (equality, hashing, pickling)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from rankeval.cli import cli
from rankeval.engines.interface import Breakdown, Inputs, Job
from rankeval.io.columns import COLUMN_OPTIONS, EXTRA
from rankeval.io.options import OWN, READING, Columns, ExtraInputs, Reading
from rankeval.settings import make_settings

TABLES = {
    Columns: COLUMN_OPTIONS,
    Reading: READING,
    ExtraInputs: (*EXTRA, *(f"{n}_format" for n in EXTRA)),
}


@pytest.mark.parametrize("group", TABLES)
def test_each_group_holds_its_table(group):
    assert group.names() == tuple(TABLES[group])


def test_reading_is_each_row_of_own_with_the_inputs_own_and_the_tag_separator():
    assert set(READING) == {*OWN, *(n for own in OWN.values() for n in own.values()),
                            "tag_separator"}


@pytest.mark.parametrize("command", ["score", "validate", "compare"])
@pytest.mark.parametrize("group", TABLES)
def test_each_field_is_an_option_of_the_commands_that_take_it(group, command):
    params = {p.name for p in cli.commands[command].params}
    assert set(group.names()) <= params


@pytest.mark.parametrize("group", TABLES)
def test_a_group_reads_as_a_mapping_and_stays_a_frozen_dataclass(group):
    first, *_, last = group.names()
    g = group(**{first: "a", last: "b"})
    assert g[first] == "a" and g.get(last) == "b" and g.get("nothing", 7) == 7
    assert list(g) == list(group.names()) and len(g) == len(group.names())
    assert dict(g) == {n: {first: "a", last: "b"}.get(n) for n in group.names()}
    assert first in g and "nothing" not in g
    with pytest.raises(KeyError):
        g["nothing"]
    same = group(**{first: "a", last: "b"})
    assert g == same and hash(g) == hash(same) and g != group()
    assert len({g, same, group()}) == 2
    assert pickle.loads(pickle.dumps(g)) == g
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(g, first, "c")


@pytest.mark.parametrize("group", TABLES)
def test_take_removes_the_group_from_a_verbs_keywords(group):
    first = group.names()[0]
    given = {first: "x", "gain": "linear"}
    taken = group.take(given)
    assert taken[first] == "x" and all(taken[n] is None for n in group.names()[1:])
    assert given == {"gain": "linear"}
    assert group.of({first: "x"}) == taken and group.of(None) == group()
    with pytest.raises(TypeError):
        group.of({"gain": "linear"})


def test_extra_inputs_given_names_the_inputs_given():
    assert ExtraInputs(train="t.csv", catalog_format="csv").given() == {"train"}


def test_a_job_reads_its_groups_as_engines_read_it():
    job = Job(Inputs("p.csv", "t.csv", "csv", None), make_settings(),
              Columns(user_col="u"), Reading(delimiter=";"), ExtraInputs(train="train.csv"),
              {"parts": 2}, Breakdown("median", "users.csv", ("country",), True))
    assert (job.predictions, job.truth, job.preds_format, job.truth_format) == (
        "p.csv", "t.csv", "csv", None)
    assert (job.stats, job.segments, job.segment_by, job.gaps) == (
        "median", "users.csv", ("country",), True)
    assert job.columns.get("user_col") == "u" and job.reading["delimiter"] == ";"
    assert job.paths == ["p.csv", "t.csv", "train.csv", "users.csv"]
    bare = Job(Inputs("p.csv", "t.csv"), make_settings())
    assert bare.columns == Columns() and bare.extras == ExtraInputs()
    assert bare.breakdown == Breakdown() and bare.options == {}
