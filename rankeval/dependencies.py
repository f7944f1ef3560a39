"""Each optional integration's packages against the release range rankeval declares for it.

``pyproject.toml`` is the one place the ranges are written; they are read back from
rankeval's installed metadata. An installed release outside its range is one warning
(``DependencyWarning``), once per process, when the integration is first used: the tracker
(MLflow, W&B) or the engine (Spark, Ray) starts. The command line says it in one line.
"""

from __future__ import annotations

import warnings

from rankeval.errors import OptionError

EXTRAS = ("mlflow", "wandb", "spark", "ray")  # the optional integrations and engines


def install_hint(extra: str) -> str:
    """How to install an extra's packages: from rankeval's checkout, never by name (an
    unrelated project holds the name ``rankeval`` on PyPI)."""
    return f"pip install -e '.[{extra}]' in rankeval's checkout (the extra rankeval[{extra}])"


def require_tie_package(rule: str, package: str) -> None:
    """Refuse the tie rule ``rule`` when ``package``, the tool's own sort it runs
    (``conventions.TIE_PACKAGES``), is not installed: one line naming it."""
    from importlib.util import find_spec  # --help: its import cost, paid for this rule alone

    if find_spec(package) is None:
        raise OptionError(f"{{option}} {rule} orders ties with the sort that {rule} uses, "
                          f"which needs {package} (not installed): {install_hint(rule)}, or "
                          f"pip install {package}", "ties")


class DependencyWarning(UserWarning):
    """An optional package's installed release is outside the range rankeval was tested with."""


def declared(extra: str) -> list:
    """The requirements (``packaging`` Requirement) of rankeval's ``extra``, from the installed
    metadata, an extra it names (``rankeval[mlflow]``) expanded; empty when rankeval runs from
    a folder it was not installed from."""
    from importlib import metadata  # --help: its import cost, paid when an integration starts

    from packaging.requirements import Requirement  # optional dependency (the trackers')

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
    from importlib import metadata  # --help: its import cost, as above

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
