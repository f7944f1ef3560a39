"""The input option groups of every verb and engine, as frozen dataclasses: ``Columns`` (the
column names: ``user_col`` ...), ``Reading`` (delimiter, decimal mark, encodings,
tag separator) and ``ExtraInputs``
(``train``, ``catalog`` ... and their formats). Each reads as the mapping the loaders take
(``get``, ``[]``, iteration over its fields), so ``load_inputs(..., job.columns)`` and an
engine written for the dictionaries keep working. Pure Python: the command line imports it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any, Self

from rankeval.io.columns import EXTRA


class _Group(Mapping[str, Any]):
    """A frozen dataclass read as the mapping of its fields (equality and hashing stay the
    dataclass's: two groups are equal when their fields are)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))  # type: ignore[arg-type]

    @classmethod
    def take(cls, given: dict[str, Any]) -> Self:
        """The group's values taken out of ``given`` (a verb's keywords: removed from it);
        one not given is None."""
        return cls(**{name: given.pop(name, None) for name in cls.names()})

    @classmethod
    def of(cls, given: Mapping[str, Any] | None) -> Self:
        """The group from a mapping of some of its fields (None: every field None); a name
        that is not one of its fields is a TypeError, as for a keyword."""
        return cls(**dict(given or {}))

    def __getitem__(self, name: str) -> Any:
        if name not in self.names():
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


@dataclass(frozen=True)
class Columns(_Group):
    """The names of the input columns, when the defaults and their aliases are not in the
    files (``io.columns.COLUMN_OPTIONS``: the commands' ``--user-col`` ...)."""

    user_col: str | None = None
    item_col: str | None = None
    rank_col: str | None = None
    score_col: str | None = None
    relevance_col: str | None = None
    count_col: str | None = None
    subtopic_col: str | None = None
    sample_col: str | None = None
    propensity_col: str | None = None


# How text inputs are read, each a row: the option for every input, and the run's and the
# truth's own over it (a run and its truth often come from different systems). Every other
# input takes the general option.
OWN: dict[str, dict[str, str]] = {
    "delimiter": {"predictions": "preds_delimiter", "truth": "truth_delimiter"},
    "decimal": {"predictions": "preds_decimal", "truth": "truth_decimal"},
    "encoding": {"predictions": "preds_encoding", "truth": "truth_encoding"},
}
# ... and the item features' tag separator (--tag-separator)
READING = (*(n for name, own in OWN.items() for n in (name, *own.values())), "tag_separator")


def own_option(name: str, role: str) -> str:
    """The option that sets ``name`` (a row of ``OWN``) for the input ``role``, as
    ``{opt:...}``."""
    return "{opt:" + OWN[name].get(role, name) + "}"


@dataclass(frozen=True)
class Reading(_Group):
    """How to read text inputs (``READING``): the delimiter and decimal mark of delimited
    text, the encoding of every input, the predictions' and the truth's own over them, and
    the separator of the tags of --item-features."""

    delimiter: str | None = None
    preds_delimiter: str | None = None
    truth_delimiter: str | None = None
    decimal: str | None = None
    preds_decimal: str | None = None
    truth_decimal: str | None = None
    encoding: str | None = None
    preds_encoding: str | None = None
    truth_encoding: str | None = None
    tag_separator: str | None = None


@dataclass(frozen=True)
class ExtraInputs(_Group):
    """The optional inputs beside the run and the truth (``io.columns.EXTRA``: paths or
    in-memory tables) and each one's format, as ``io.extras.load_extras`` takes them."""

    train: Any = None
    catalog: Any = None
    item_features: Any = None
    item_groups: Any = None
    propensity: Any = None
    exclude: Any = None
    train_format: str | None = None
    catalog_format: str | None = None
    item_features_format: str | None = None
    item_groups_format: str | None = None
    propensity_format: str | None = None
    exclude_format: str | None = None

    def given(self) -> set[str]:
        """The extra inputs given (what ``io.extras.check_needs`` weighs)."""
        return {name for name in EXTRA if getattr(self, name) is not None}
