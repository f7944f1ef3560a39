"""The one exception family (with its exit code) and the counted warnings the library returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_GATE_FAILED = 1  # reserved for quality gates: no error path may use it
EXIT_USAGE = 2  # usage or input error, and unexpected internal errors


class RankevalError(Exception):
    """An error the user can fix; the CLI prints ``rankeval: error: <message>`` and exits 2."""

    exit_code = EXIT_USAGE


class OptionError(RankevalError):
    """Options that cannot work together or have bad values, found before any data is read."""


def _show(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


class InputError(RankevalError):
    """Bad input data. The message names the file, the column, how many rows and up to 5 examples.

    The parts are kept as fields so that tests can check them without parsing the wording.
    """

    def __init__(
        self,
        path: str,
        problem: str,
        column: str | None = None,
        count: int | None = None,
        examples: Sequence[tuple[object, object]] = (),
        hint: str | None = None,
        unit: str = "row",
    ):
        self.path = path
        self.column = column
        self.problem = problem
        self.count = count
        self.examples = list(examples)[:5]
        self.hint = hint
        self.unit = unit  # "row" (data rows, after the header), "line", "user", ...
        super().__init__(self._format())

    def _format(self) -> str:
        where = f"{self.path}: column '{self.column}': " if self.column else f"{self.path}: "
        text = where + (
            f"{self.count:,} {self.problem}" if self.count is not None else self.problem
        )
        if self.examples:
            shown = ", ".join(
                f"{self.unit} {row} ({_show(value)})" for row, value in self.examples
            )
            text += f", e.g. {shown}"
        if self.hint:
            text += f" ({self.hint})"
        return text


@dataclass(frozen=True)
class Notice:
    """A counted warning: something was ignored, guessed or is worth a look.

    ``code`` is a stable identifier for scripts; ``message`` is the sentence shown to people.
    """

    code: str
    message: str
    count: int = 0

    def __str__(self) -> str:
        return self.message


class Problems:
    """Collects input errors where a check would raise the first one (``rankeval validate``)."""

    def __init__(self) -> None:
        self.errors: list[InputError] = []

    def __bool__(self) -> bool:
        return bool(self.errors)


def report(error: InputError, problems: Problems | None) -> None:
    """Raise ``error``, or record it and let the caller carry on when collecting."""
    if problems is None:
        raise error
    problems.errors.append(error)
