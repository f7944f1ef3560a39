"""Each extra's packages against the release range it declares (#46): pyproject.toml's
lines, read back from rankeval's installed metadata (the one copy). A fresh install resolves
within the ranges, so a new release of a dependency is never this test's failure; a package
installed outside its range (by hand, or a range edited without a reinstall) is, and the
failure names the package and both versions. At run time an integration imported at a
release outside its range warns once, in one line."""

from __future__ import annotations

import warnings
from importlib import metadata

import pytest

from rankeval.integrations import support

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
    for req in support.declared(extra):
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
    (req,) = [r for r in support.declared(extra) if r.name == INTEGRATIONS[extra]]
    assert any(s.operator == "<" for s in req.specifier), f"{req}: no upper bound"
    assert any(s.operator == ">=" for s in req.specifier), f"{req}: no lower bound"
    tested = {r.name: r.specifier for r in support.declared("test")}
    assert tested[req.name] == req.specifier  # the tests run what the extra declares


@pytest.fixture()
def newer(monkeypatch):
    """wandb reported one release line above its range, as after a hand-made upgrade."""
    real = metadata.version
    (req,) = support.declared("wandb")
    upper = next(s.version for s in req.specifier if s.operator == "<")
    monkeypatch.setattr(metadata, "version", lambda name: upper if name == "wandb" else
                        real(name))
    monkeypatch.setattr(support, "_warned", set())
    return upper


def test_outside_range_names_the_package_and_both_versions(newer):
    assert support.outside_range("wandb") == [("wandb", newer, str(support.declared(
        "wandb")[0].specifier))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        support.check_versions("wandb")
        support.check_versions("wandb")  # once per process
    (w,) = caught
    assert issubclass(w.category, support.DependencyWarning)
    assert f"wandb {newer} is installed" in str(w.message) and "<" in str(w.message)
    assert "\n" not in str(w.message)


def test_score_warns_in_one_line_and_still_logs(newer, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "-k", "10", "--wandb")
    assert r.exit_code == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "wandb " + newer in line]
    assert len(lines) == 1 and lines[0].startswith("rankeval: warning: "), r.stderr
    assert "logged to W&B run" in r.stderr


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
