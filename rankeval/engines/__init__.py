"""Engines: where an evaluation runs (this machine, Spark, ...), behind one interface.

An engine reads the inputs and scores them (``score``); everything after that, the
distribution over users, segments and intervals, is one pipeline (``run``) shared by every
engine, by the command line and by the library. ``--engine`` and ``evaluate(engine=...)``
take their choices from ``ENGINES``: a new engine is one module with an ``Engine`` subclass
and one ``register`` call (tests/test_engines.py registers one that scores in partitions).
"""

from rankeval.engines.interface import EXTRA, Engine, Job
from rankeval.engines.pipeline import run
from rankeval.engines.registry import ENGINES, engine_options, get, register
from rankeval.engines.signals import ON_SIGNAL, signal_handlers_kept

__all__ = ["ENGINES", "EXTRA", "ON_SIGNAL", "Engine", "Job", "engine_options", "get",
           "register", "run", "signal_handlers_kept"]
