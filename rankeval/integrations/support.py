"""What the trackers (MLflow, W&B) share.

- ``IntegrationError``: a tracker could not log; one line naming the tracker, its store and
  the cause (the innermost exception's message), exit 2 on the command line.
- ``scoped_env``: a tracker's own knobs (MLflow's HTTP retries and timeout) set for one call
  when the user has not set them, and removed afterwards: nothing leaks into the process.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from rankeval.errors import RankevalError

_CAUSE_WIDTH = 600  # MLflow says what to do last (the file store: its opt-in)


class IntegrationError(RankevalError):
    """A tracker (MLflow, W&B) could not log the evaluation."""


def cause(exc: BaseException) -> str:
    """The innermost readable message of the exception's chain, on one line (MLflow wraps
    SQLAlchemy's error, which wraps SQLite's: "attempt to write a readonly database" says
    why); a lookup's bare key (KeyError: 'bogus') is not a reason, the message around it is."""
    seen = {id(exc)}
    inner, nxt = exc, exc.__cause__ or exc.__context__
    while nxt is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        if " ".join(str(nxt).split()) and not isinstance(nxt, LookupError):
            inner = nxt
        nxt = nxt.__cause__ or nxt.__context__
    text = " ".join(str(inner).split()) or type(inner).__name__
    return text if len(text) <= _CAUSE_WIDTH else text[:_CAUSE_WIDTH - 3] + "..."


def failure(tracker: str, store: str, exc: BaseException) -> IntegrationError:
    return IntegrationError(f"{tracker} could not log to {store}: {cause(exc)}")


def shown_uri(uri: str) -> str:
    """A store's URI without the password it may carry (``https://user:pw@host``)."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


@contextmanager
def scoped_env(defaults: Mapping[str, str]) -> Iterator[None]:
    """``defaults`` in os.environ for the block, each only where the user has not set it;
    removed again afterwards (the tracker reads them at call time)."""
    added = [name for name in defaults if name not in os.environ]
    for name in added:
        os.environ[name] = defaults[name]
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


class _Held(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def held_logs(*names: str) -> Iterator[None]:
    """The log records of the loggers ``names`` held for the block: passed on as usual when it
    succeeds, dropped when it fails (MLflow logs a failed write's traceback before raising; the
    failure's one line says it)."""
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg.handlers[:], lg.propagate) for lg in loggers]
    held = _Held()
    for lg in loggers:
        lg.handlers, lg.propagate = [held], False
    ok = False
    try:
        yield
        ok = True
    finally:
        for lg, (handlers, propagate) in zip(loggers, saved, strict=True):
            lg.handlers, lg.propagate = handlers, propagate
        if ok:
            for record in held.records:
                logging.getLogger(record.name).handle(record)
