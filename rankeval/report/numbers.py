"""How every report writes a number, and an undefined one (SPEC section 9).

A metric with no user to average over (ild when no list holds 2 items with features) is
*undefined*: NaN inside the library, never 0. Reports show it as a state, each in its own
form: ``n/a`` in tables and Markdown, an empty CSV cell, ``null`` in JSON, "undefined" in the
HTML report. Every number a report prints goes through this module, so no path can print
``nan``, ``inf`` or a made-up ``0.0000``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

UNDEFINED = "n/a"


def defined(value: float | None) -> bool:
    """Whether ``value`` is a number to show (not None, NaN or infinite)."""
    return value is not None and math.isfinite(value)


def fixed(value: float | None, digits: int = 4, sign: bool = False,
          undefined: str = UNDEFINED) -> str:
    """``0.3412``, ``+0.0123`` (``sign``), or ``undefined`` for a value that is not a number."""
    if not defined(value):
        return undefined
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def count(value: float | None, undefined: str = UNDEFINED) -> str:
    """A count summed over users: ``1,204``."""
    return f"{value:,.0f}" if defined(value) else undefined


def exact(value: float | None) -> str:
    """Full precision for CSV (the shortest text that reads back as the same float); an
    empty cell when undefined."""
    return repr(float(value)) if value is not None and defined(value) else ""


def finite(value: float | None) -> float | None:
    """The value, or None when undefined (JSON's null)."""
    return float(value) if value is not None and defined(value) else None


def jsonable(value: Any) -> Any:
    """A copy of a JSON-ready structure with every non-finite float made None (null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def dumps(document: Any) -> str:
    """Strict JSON text (RFC 8259: no NaN or Infinity), undefined values as null."""
    return json.dumps(jsonable(document), indent=2, allow_nan=False) + "\n"
