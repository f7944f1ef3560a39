"""The report model's unit: a ``Section``, a titled table with notes below it, and the
sections every report shares (the configuration file, the warnings). ``sections`` and its
companions build them; each format draws them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One block of a report: ``title`` (where it holds ``{}``, the ``subject`` goes: a path
    or a run's name, data), a table (``head``, ``rows`` of text), then ``notes``.

    ``left``: the text columns (the others hold numbers, right-aligned); ``data``: the
    columns whose cells come from the input (ids, run names), shown as written; ``tones``:
    per row and cell, 1 better or passed, -1 worse or failed, 0 plain (colour, marks);
    ``passed``: set on a verdict (gates) section, whether every gate passed."""

    key: str
    head: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    title: str = ""
    subject: str = ""
    notes: tuple[str, ...] = ()
    left: frozenset[int] = frozenset({0})
    data: frozenset[int] = frozenset()
    tones: tuple[tuple[int, ...], ...] = ()
    passed: bool | None = None

    def tone(self, row: int, column: int) -> int:
        return self.tones[row][column] if self.tones else 0

    def heading(self, show=str) -> str:
        """The title with its subject shown by ``show`` (each format's way to show data)."""
        before, _, after = self.title.partition("{}")
        return before + show(self.subject) + after if self.subject else self.title


def config_section(config: str | None) -> list[Section]:
    """The configuration file whose keys gave option defaults, named as score's, compare's
    and validate's reports name it (``options from rankeval.toml``); none without one."""
    return [Section("config", notes=(f"options from {config}",))] if config else []


def warnings_section(messages) -> list[Section]:
    """The warnings of a report (its notices' sentences) as a one-column list, after the
    tables: for a report that travels without its stderr (Markdown in a pull request);
    none without one."""
    shown = [[m] for m in messages]
    return [table("warnings", ["warning"], shown, title="Warnings")] if shown else []


def table(key: str, head, rows, **kw) -> Section:
    """A section from lists (``head``, ``rows``) and the other fields by keyword."""
    return Section(key, tuple(head), tuple(tuple(r) for r in rows), **kw)
