"""An earlier score report read back: the baseline of ``--baseline`` and ``--max-drop``.

The reader sits below the analysis that gates on it and beside the other readers of files a
user gives; ``report/json.py`` writes what it reads, at the schema version kept here (its
docstring lists what each version holds).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankeval.errors import OptionError
from rankeval.settings import ROWS, Settings, comparable_names
from rankeval.version import __version__

SCHEMA_VERSION = 1  # the JSON report's schema: bump as report/json.py's docstring says


@dataclass(frozen=True)
class Report:
    """An earlier score report, as read back (a gate's baseline)."""

    path: str
    metrics: dict[str, float]  # NaN: undefined in that run (null in its JSON)
    settings: dict[str, Any]


def read_report(path: str, flag: str = "{opt:baseline}") -> Report:
    """A JSON report written by ``score -f json``; anything else is an error naming the file."""
    where = f"{flag} {path}"
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise OptionError(f"{where}: no such file") from None
    except RecursionError:  # arrays in arrays, thousands deep
        raise OptionError(f"{where}: not a readable JSON report (nested too deeply)") from None
    except (OSError, ValueError) as exc:
        raise OptionError(f"{where}: not a readable JSON report ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
        raise OptionError(
            f"{where}: not a rankeval JSON report (no 'metrics'); write one with "
            "rankeval score ... -f json -o FILE"
        )
    schema = doc.get("schema", 1)
    if not isinstance(schema, int) or isinstance(schema, bool) or schema > SCHEMA_VERSION:
        raise OptionError(
            f"{where}: report schema {schema!r} is newer than this rankeval understands "
            f"(schema {SCHEMA_VERSION}, rankeval {__version__}); upgrade rankeval"
        )
    metrics = dict(doc["metrics"])
    gold = doc.get("gold")
    if isinstance(gold, dict) and isinstance(gold.get("estimates"), dict):
        # a report of score --gold: its gates judged the PPI estimates, and so do ours
        for name, row in gold["estimates"].items():
            ppi = row.get("ppi") if isinstance(row, dict) else None
            if not isinstance(ppi, dict) or "value" not in ppi:
                raise OptionError(f"{where}: gold estimate {name!r} has no 'ppi' value")
            metrics[name] = ppi["value"]
    bad = [k for k, v in metrics.items() if v is not None and not _finite_number(v)]
    if bad:
        raise OptionError(f"{where}: metric values that are not finite numbers: {bad[:5]}")
    settings = doc.get("settings", {})
    if not isinstance(settings, dict):
        raise OptionError(f"{where}: 'settings' is not an object")
    # null: undefined in that run (SPEC section 9), kept as NaN; a gate on it is an error
    return Report(path, {k: math.nan if v is None else float(v) for k, v in metrics.items()},
                  settings)


def _finite_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)



def load_baseline(path: str, settings: Settings, allow_settings_change: bool) -> Report:
    """A JSON report of an earlier run; its settings must match unless allowed to differ."""
    report = read_report(path)
    theirs, ours = report.settings, settings.to_dict()
    # A setting absent from an older report had its default then.
    changed = [
        f"{key} {theirs.get(key, ROWS[key].default)!r} -> {ours[key]!r}"
        for key in comparable_names()
        if theirs.get(key, ROWS[key].default) != ours[key]
    ]
    if changed and not allow_settings_change:
        raise OptionError(
            f"{{opt:baseline}} {path} was computed with other settings ({'; '.join(changed)}), "
            "so its numbers are not comparable; use the same options, or "
            "{opt:allow_settings_change}"
        )
    return report
