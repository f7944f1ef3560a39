"""The settings are typed where IDEs, help() and mypy see them: the Settings dataclass and the
keywords of make_settings and evaluate are the settings table, row for row."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import typing

import rankeval
from rankeval.settings import TABLE, EvaluateOptions, SettingOptions, Settings, make_settings


def test_the_settings_dataclass_is_the_table():
    fields = [f for f in dataclasses.fields(Settings) if f.init]  # specs: parsed from them
    names = [f.name for f in fields]
    after = ["compat", "compat_overrides", "runid", "relstring", "preference_measures",
             "tie_rules", "config", "chosen"]
    assert names[:2] == ["metrics", "k"] and names[-len(after):] == after
    assert names[2:-len(after)] == [s.name for s in TABLE]
    for f, s in zip(fields[2:-len(after)], TABLE, strict=True):
        assert f.default == s.default, s.name
    assert make_settings() == Settings(metrics=make_settings().metrics, k=(10,))
    assert Settings.__dataclass_params__.frozen


def test_the_specs_are_parsed_once_and_follow_a_copy():
    settings = make_settings("ndcg,P(rel=2)", [5, 10])
    assert settings.specs is settings.specs  # parsed when made, not on every read
    assert [str(s) for s in settings.specs] == list(settings.metrics)
    copy = dataclasses.replace(settings, metrics=("map@5",), k=(5,))
    assert [str(s) for s in copy.specs] == ["map@5"]
    assert dataclasses.replace(settings, gain="exponential").specs == settings.specs
    assert pickle.loads(pickle.dumps(settings)).specs == settings.specs  # to Spark and Ray
    # derived, so neither compared nor written: the JSON settings block is the fields given
    assert make_settings("ndcg", 10) == Settings(metrics=("ndcg@10",), k=(10,))
    # which settings were chosen rather than defaulted says nothing of the numbers: not written
    assert list(settings.to_dict()) == [f.name for f in dataclasses.fields(Settings)
                                        if f.init and f.name != "chosen"]
    assert "specs" not in settings.to_dict() and "specs" not in repr(settings)


def test_the_keywords_are_the_table():
    hints = typing.get_type_hints(SettingOptions)
    assert list(hints) == [s.name for s in TABLE]
    for s in TABLE:  # flags take bools, choices text, free values numbers (gains: pairs)
        want = bool if s.is_flag else str if (s.choices or s.name == "gains"
                                              or getattr(s.parse, "text", False)) else (
            int if getattr(s.parse, "integer", False) else float)
        assert hints[s.name] == want | None, s.name
    assert set(typing.get_type_hints(EvaluateOptions)) >= set(hints)


def test_help_lists_every_setting_without_patching_the_signature():
    doc = " ".join(rankeval.evaluate.__doc__.split())
    for s in TABLE:
        assert " ".join(s.describe().split()) in doc, s.name
    # the signature is the function's own: no rewritten __signature__
    assert "__signature__" not in vars(rankeval.evaluate)
    params = inspect.signature(rankeval.evaluate).parameters
    assert params["options"].kind is inspect.Parameter.VAR_KEYWORD
