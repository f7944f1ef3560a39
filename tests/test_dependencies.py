"""Each extra's packages against the release range it declares (#46): pyproject.toml's
lines, read back from rankeval's installed metadata (the one copy). A fresh install resolves
within the ranges, so a new release of a dependency is never this test's failure; a package
installed outside its range (by hand, or a range edited without a reinstall) is, and the
failure names the package and both versions. At run time an integration imported at a
release outside its range warns once, in one line."""

from __future__ import annotations

import sys
import warnings
from importlib import metadata

import pytest

from rankeval import dependencies
from rankeval.errors import RankevalError

from .conftest import ROOT

SAMPLE = ROOT / "sample_data"
EXTRAS = metadata.metadata("rankeval").get_all("Provides-Extra") or []
# The integrations' own packages: each held below the release line after the one tested
INTEGRATIONS = {"mlflow": "mlflow-skinny", "wandb": "wandb", "spark": "pyspark", "ray": "ray"}


def test_the_metadata_is_this_checkout():
    """The ranges read at run time are pyproject.toml's (a stale install would hide an edit)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    written = project["optional-dependencies"]
    assert sorted(EXTRAS) == sorted(written), "reinstall: pip install -e '.[test]'"
    for extra, lines in written.items():
        want = sorted(str(r).split(";")[0] for r in map(_req, lines))
        got = sorted(str(r).split(";")[0] for r in map(_req, _direct(extra)))
        assert got == want, f"rankeval[{extra}]: reinstall: pip install -e '.[test]'"


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_installed_releases_lie_in_the_declared_ranges(extra):
    wrong = []
    for req in dependencies.declared(extra):
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{req.name} is not installed (rankeval[{extra}] declares "
                         f"{req.name}{req.specifier})")
            continue
        if not req.specifier.contains(installed, prereleases=True):
            wrong.append(f"{req.name} {installed} is installed; rankeval[{extra}] declares "
                         f"{req.name}{req.specifier}")
    assert not wrong, "; ".join(wrong)


@pytest.mark.parametrize("extra", sorted(INTEGRATIONS))
def test_each_integration_declares_a_tested_range(extra):
    (req,) = [r for r in dependencies.declared(extra) if r.name == INTEGRATIONS[extra]]
    assert any(s.operator == "<" for s in req.specifier), f"{req}: no upper bound"
    assert any(s.operator == ">=" for s in req.specifier), f"{req}: no lower bound"
    tested = {r.name: r.specifier for r in dependencies.declared("test")}
    assert tested[req.name] == req.specifier  # the tests run what the extra declares


@pytest.fixture()
def newer(monkeypatch):
    """``newer(extra)``: the extra's own package reported one release line above its range,
    as after a hand-made upgrade; returns (package, release)."""
    real = metadata.version

    def make(extra: str) -> tuple[str, str]:
        package = INTEGRATIONS[extra]
        (req,) = [r for r in dependencies.declared(extra) if r.name == package]
        upper = next(s.version for s in req.specifier if s.operator == "<")
        monkeypatch.setattr(metadata, "version", lambda name: upper if name == package else
                            real(name))
        monkeypatch.setattr(dependencies, "_warned", set())
        return package, upper

    return make


def _mlflow(monkeypatch) -> None:
    from rankeval.integrations import mlflow

    mlflow.require()


def _wandb(monkeypatch) -> None:
    from rankeval.integrations import wandb

    wandb.require()


def _spark(monkeypatch) -> None:
    """The session as a notebook has one (no JVM started here)."""
    from pyspark.sql import SparkSession

    import rankeval.spark

    active = object()
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: active))
    assert rankeval.spark.session() is active


def _no_ray_running(monkeypatch) -> None:
    """As in a fresh process: a Ray another test of this worker started is not joined."""
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)


def _ray(monkeypatch) -> None:
    """A cluster address where nothing answers: the check comes before any connection."""
    import rankeval.ray

    _no_ray_running(monkeypatch)
    with pytest.raises(RankevalError, match="nothing answers"):
        rankeval.ray.init("127.0.0.1:9")


# How each integration starts, in the library: the tracker's import, the engine's session
START = {"mlflow": _mlflow, "wandb": _wandb, "spark": _spark, "ray": _ray}


def test_every_integration_is_checked_where_it_starts():
    assert sorted(START) == sorted(dependencies.EXTRAS) == sorted(INTEGRATIONS)


@pytest.mark.parametrize("extra", sorted(START))
def test_outside_range_warns_once_naming_the_package_and_both_versions(extra, newer,
                                                                       monkeypatch):
    package, release = newer(extra)
    spec = next(str(r.specifier) for r in dependencies.declared(extra) if r.name == package)
    assert (package, release, spec) in dependencies.outside_range(extra)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        START[extra](monkeypatch)
        START[extra](monkeypatch)  # once per process
    found = [w for w in caught if issubclass(w.category, dependencies.DependencyWarning)]
    assert len(found) == 1, [str(w.message) for w in caught]
    message = str(found[0].message)
    assert f"{package} {release} is installed; rankeval[{extra}] was tested with " \
        f"{package}{spec}" in message and "\n" not in message


def test_score_warns_in_one_line_and_still_logs(newer, run_cli, tmp_path, monkeypatch):
    _, release = newer("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-k", "10", "--wandb")
    assert r.exit_code == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "wandb " + release in line]
    assert len(lines) == 1 and lines[0].startswith("rankeval: warning: "), r.stderr
    assert "logged to W&B run" in r.stderr


def test_an_engine_warns_on_the_command_line_in_one_line(newer, run_cli, monkeypatch):
    """The command line says every DependencyWarning as one line, wherever it is raised."""
    package, release = newer("ray")
    _no_ray_running(monkeypatch)
    r = run_cli("score", "--engine", "ray", "--ray-address", "127.0.0.1:9",
                SAMPLE / "preds.csv", SAMPLE / "truth.csv")
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith(f"rankeval: warning: {package} {release} is installed; ")
    assert lines[1].startswith("rankeval: error: Ray did not start: nothing answers")


def _req(line: str):
    from packaging.requirements import Requirement

    return Requirement(line)


def _direct(extra: str) -> list[str]:
    """The metadata's lines of ``extra`` itself (a named extra not expanded)."""
    out = []
    for line in metadata.requires("rankeval") or []:
        req = _req(line)
        if req.marker is not None and req.marker.evaluate({"extra": extra}) \
                and not req.marker.evaluate({"extra": ""}):
            out.append(line)
    return out


# What each optional package's absence looks like, and the call that meets it
MISSING = {
    "mlflow": (["mlflow"], lambda: __import__("rankeval.integrations.mlflow",
                                              fromlist=["require"]).require()),
    "wandb": (["wandb"], lambda: __import__("rankeval.integrations.wandb",
                                            fromlist=["require"]).require()),
    "spark": (["pyspark", "pyspark.sql"], lambda: __import__("rankeval.spark",
                                                             fromlist=["session"]).session()),
    "ray": (["ray"], lambda: __import__("rankeval.ray", fromlist=["init"]).init()),
    "report": (["matplotlib"], None),
    # ranx's tie order runs numba's sort: refused before anything is read
    "ranx": (["numba"], lambda: __import__("rankeval.settings", fromlist=["make_settings"])
             .make_settings(["ndcg"], [10], compat="ranx")),
}


def test_every_extra_has_its_missing_case():
    assert sorted(MISSING) == sorted(e for e in EXTRAS if e not in ("test", "docs"))


@pytest.mark.parametrize("extra", sorted(MISSING))
def test_a_missing_package_names_its_extra_as_the_checkout_installs_it(extra, monkeypatch):
    """One hint for every optional package, from the checkout (the name rankeval on PyPI is
    another project's): never 'pip install rankeval...' by name."""
    modules, call = MISSING[extra]
    if call is None:  # the HTML report's charts: matplotlib looked up once, at import
        from rankeval.report import charts, html

        monkeypatch.setattr(charts, "matplotlib", None)
        call = html.check_available
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    with pytest.raises(RankevalError) as caught:
        call()
    assert dependencies.install_hint(extra) in str(caught.value)


def test_no_message_says_install_rankeval_by_name():
    import re

    said = re.compile(r"pip install ['\"]?rankeval")
    for path in (ROOT / "rankeval").rglob("*.py"):
        assert not said.search(path.read_text()), path
