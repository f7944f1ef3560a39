"""The one exception family, with its exit code, and the collector that ``validate`` uses.

Checks call ``report(error)``: it raises, unless the caller is inside ``collecting()``, in which
case the error is recorded and the check carries on (``rankeval validate`` shows every problem
at once). No collect-or-raise flag is threaded through the code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

EXIT_OK = 0
EXIT_GATE_FAILED = 1  # reserved for quality gates: no error path may use it
EXIT_USAGE = 2  # usage or input error, and unexpected internal errors


class RankevalError(Exception):
    """An error the user can fix; the CLI prints ``rankeval: error: <message>`` and exits 2.

    The message names options as ``{opt:NAME}``: the library shows the keyword
    (``ap_denominator``), the command line its flag (``--ap-denominator``), through ``render``.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str = ""):
        self.template = message
        super().__init__(self.render())

    def render(self, spell: Callable[[str], str] = str) -> str:
        return name_options(self.template, spell)


class OptionError(RankevalError):
    """Options that cannot work together or have bad values, found before any data is read.

    ``setting`` is the option at fault; ``{option}`` in the message stands for it.
    """

    def __init__(self, message: str, setting: str | None = None):
        self.setting = setting
        super().__init__(message.replace("{option}", f"{{opt:{setting}}}") if setting else message)


_OPTION = re.compile(r"\{opt:([a-z_]+)\}")


def name_options(text: str, spell: Callable[[str], str] = str) -> str:
    """``text`` with each ``{opt:NAME}`` written as ``spell`` names options: the library's
    keyword (``train``) by default, the command line's flag (``--train``)."""
    return _OPTION.sub(lambda m: spell(m.group(1)), text)


def flag(name: str, value: Any = None) -> str:
    """How the command line spells a library option: ``--ties trec``, ``--dedupe``.

    Every option's parameter name is its library name, so the flag follows from it (what
    ``render`` takes to write an error for the command line)."""
    text = "--" + name.replace("_", "-")
    return text if value is None else f"{text} {value}"


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (a library's multi-line text inside ours), or its
    type's name when it says nothing."""
    return " ".join(str(exc).split()) or type(exc).__name__


def _show(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 user``, ``2 users``, ``1,000 lines``."""
    return f"{count:,} {word if count == 1 else words or word + 's'}"


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
        problem = _singular(self.problem) if self.count == 1 else self.problem
        text = where + (f"{self.count:,} {problem}" if self.count is not None else problem)
        if self.examples:
            shown = ", ".join(
                f"{self.unit} {row} ({_show(value)})" for row, value in self.examples
            )
            text += f", e.g. {shown}"
        if self.hint:
            text += f" ({self.hint})"
        return text


_NOUNS = {"pairs": "pair", "triples": "triple", "values": "value", "users": "user",
          "lines": "line", "ranks": "rank", "ids": "id", "rows": "row", "entries": "entry",
          "numbers": "number", "scores": "score", "integers": "integer",
          "probabilities": "probability", "propensities": "propensity",
          "positions": "position", "slates": "slate"}
_VERBS = ((" are ", " is "), (" have ", " has "), (" were ", " was "))


def _singular(problem: str) -> str:
    """A problem phrased for several (``ranks that are not whole numbers``) said of one."""
    words = problem.split(" ")
    for i, word in enumerate(words[:4]):  # the counted noun comes first, after adjectives
        if word in _NOUNS:
            words[i] = _NOUNS[word]
            text = " ".join(words)
            for many, one in _VERBS:
                text = text.replace(many, one, 1)
            for many, one in (("not whole numbers", "not a whole number"),
                              ("not finite numbers", "not a finite number"),
                              ("not numbers", "not a number")):
                text = text.replace(many, one)
            return text
    return problem


_collector: ContextVar[list[InputError] | None] = ContextVar("rankeval_problems", default=None)


@contextmanager
def collecting() -> Iterator[list[InputError]]:
    """Within the block, ``report`` records input errors instead of raising them."""
    found: list[InputError] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)


def report(error: InputError) -> None:
    """Raise ``error``, or record it when a caller is ``collecting()`` and let the check go on."""
    found = _collector.get()
    if found is None:
        raise error
    found.append(error)


def is_collecting() -> bool:
    """Whether a caller is ``collecting()`` (a check may then carry on past bad values)."""
    return _collector.get() is not None
