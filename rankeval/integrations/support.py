"""What the trackers (MLflow, W&B) and the engines' optional packages share.

- ``IntegrationError``: a tracker could not log; one line naming the tracker, its store and
  the cause (the innermost exception's message), exit 2 on the command line.
- ``scoped_env``: a tracker's own knobs (MLflow's HTTP retries and timeout) set for one call
  when the user has not set them, and removed afterwards: nothing leaks into the process.
- ``outside_range`` and ``check_versions``: each extra's packages against the release range
  it declares in rankeval's metadata (``pyproject.toml`` is the one place they are written);
  an installed release outside it is one warning, not an error.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from rankeval.errors import RankevalError

EXTRAS = ("mlflow", "wandb", "spark", "ray")  # the optional integrations and engines
_CAUSE_WIDTH = 600  # MLflow says what to do last (the file store: its opt-in)


class IntegrationError(RankevalError):
    """A tracker (MLflow, W&B) could not log the evaluation."""


class DependencyWarning(UserWarning):
    """An optional package's installed release is outside the range rankeval was tested with."""


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


def declared(extra: str) -> list:
    """The requirements (``packaging`` Requirement) of rankeval's ``extra``, from the installed
    metadata, an extra it names (``rankeval[mlflow]``) expanded; empty when rankeval runs from
    a folder it was not installed from."""
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        lines = metadata.requires("rankeval") or []
    except metadata.PackageNotFoundError:
        return []
    reqs = [Requirement(line) for line in lines]

    def of(name: str, seen: frozenset[str]) -> list:
        out = []
        for req in reqs:
            if req.marker is None or not req.marker.evaluate({"extra": name}) \
                    or req.marker.evaluate({"extra": ""}):
                continue
            if req.name == "rankeval":
                out += [r for e in sorted(req.extras - seen) for r in of(e, seen | {e})]
            else:
                out.append(req)
        return out

    return of(extra, frozenset({extra}))


def outside_range(extra: str) -> list[tuple[str, str, str]]:
    """(package, installed release, declared range) for each installed package of ``extra``
    whose release lies outside the declared range; a package not installed is left to the
    import that needs it."""
    from importlib import metadata

    out = []
    for req in declared(extra):
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            continue
        if not req.specifier.contains(installed, prereleases=True):
            out.append((req.name, installed, str(req.specifier)))
    return out


_warned: set[str] = set()


def check_versions(extra: str) -> None:
    """Warn once per process for each package of ``extra`` outside its tested range."""
    if extra in _warned:
        return
    _warned.add(extra)
    try:
        found = outside_range(extra)
    except ImportError:  # packaging: a dependency of every tracker, but not of rankeval
        return
    for name, installed, spec in found:
        warnings.warn(f"{name} {installed} is installed; rankeval[{extra}] was tested with "
                      f"{name}{spec}: if the {extra} integration fails, install a release in "
                      "that range", DependencyWarning, stacklevel=3)
