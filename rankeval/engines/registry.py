"""The engines ``--engine`` and ``evaluate(engine=...)`` choose from: ``ENGINES``, filled at
import with the built-in ones (local, Spark, Ray: the order of ``--engine``'s choices), and
``register`` for more."""

from __future__ import annotations

from typing import Any

from rankeval.engines.interface import Engine
from rankeval.engines.local import LocalEngine
from rankeval.engines.ray.engine import RayEngine  # imports ray only when it runs
from rankeval.engines.spark.engine import SparkEngine  # imports pyspark only when it runs
from rankeval.errors import OptionError

ENGINES: dict[str, Engine] = {}


def register(engine: Engine) -> Engine:
    """Add an engine: ``--engine NAME`` and ``evaluate(engine=NAME)`` reach it."""
    ENGINES[engine.name] = engine
    return engine


def get(name: str | None) -> Engine:
    """The engine called ``name`` (None: local), or an OptionError listing them."""
    key = (name or "local").lower()
    if key not in ENGINES:
        raise OptionError(f"{{option}} must be one of {', '.join(ENGINES)}, got {name!r}",
                          "engine")
    return ENGINES[key]


def engine_options(engine: Engine, given: dict[str, Any]) -> dict[str, Any]:
    """Take every engine's options and keywords out of ``given`` (a command's or
    ``evaluate``'s keyword arguments) and return the chosen engine's; another engine's,
    when set, is an error naming the engine it needs. Engines may share a keyword
    (``partitions``): the chosen engine's are taken first."""
    out = {name: given.pop(name, None) for name in [*engine.options, *engine.keywords]}
    for other in ENGINES.values():
        for name in [*other.options, *other.keywords]:
            if given.pop(name, None):
                raise OptionError(f"{{opt:{name}}} needs {{opt:engine}} {other.name}")
    return out


def _builtin() -> None:
    register(LocalEngine())
    register(SparkEngine())
    register(RayEngine())


_builtin()
