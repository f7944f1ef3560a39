"""The HTML report as a person sees it: rendered by headless Chromium with the network off.

Chromium comes from the system (the Makefile installs Debian's `chromium` when missing);
Playwright drives it. A missing browser fails these tests: it is never a skip.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from .conftest import SAMPLE

# Marked browser: make test-fast leaves them out (no Chromium needed there).
pytestmark = pytest.mark.browser

PREDS, POPULAR, TRUTH = SAMPLE / "preds.csv", SAMPLE / "popular.csv", SAMPLE / "truth.csv"
def open_report(browser, path, scheme="light"):
    """The page, loaded offline; every request that is not the file itself is recorded and
    refused; console errors and page errors are collected."""
    context = browser.new_context(offline=True, color_scheme=scheme,
                                  viewport={"width": 1200, "height": 900},
                                  java_script_enabled=False)
    page = context.new_page()
    seen = {"requests": [], "errors": []}

    def route(r):
        if r.request.url == path.as_uri():
            r.continue_()
        else:
            seen["requests"].append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    return context, page, seen


def pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The issue's command, on the sample data (plus the inputs of every other section)."""
    from click.testing import CliRunner

    from rankeval.cli import cli

    out = tmp_path_factory.mktemp("report") / "report.html"
    args = ["compare", PREDS, POPULAR, TRUTH, "--k", "1..20", "--segments",
            SAMPLE / "users.csv", "--segment-by", "country", "--ci", "--rounds", "500",
            "--train", SAMPLE / "train.csv", "--catalog", SAMPLE / "catalog.csv",
            "-m", "ndcg,recall,map,coverage", "--top-changes", "3", "-f", "html", "-o", out,
            "-q"]
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == 0, r.stderr
    return out


EXPECTED = ["verdict", "summary", "curves", "chart-curve-ndcg", "chart-curve-recall",
            "chart-curve-map", "forest", "chart-forest-ndcg", "chart-win-tie-loss",
            "differences", "chart-diff-ndcg-10", "distributions", "chart-dist-ndcg-10",
            "segments", "chart-seg-country-ndcg-10", "popularity", "chart-lorenz",
            "chart-popularity-groups", "top-changes", "notices", "conventions"]


def test_report_renders_offline_with_every_section(browser, report):
    context, page, seen = open_report(browser, report)
    try:
        assert seen["requests"] == []  # nothing leaves the file
        assert seen["errors"] == []
        for sid in EXPECTED:
            element = page.query_selector(f"#{sid}")
            assert element is not None, sid
            box = element.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 20, sid
        charts = page.query_selector_all("figure svg")
        assert len(charts) >= 15
        for svg in charts:  # every chart is drawn at a readable size, with its text
            box = svg.bounding_box()
            assert box["width"] > 250 and box["height"] > 80
            assert svg.query_selector("text") is not None
        shot = pixels(page.screenshot(full_page=True))
        background = shot[5, 5]
        ink = np.abs(shot - background).sum(axis=2) > 60
        assert ink.mean() > 0.03  # not blank: text, tables and charts cover the page
        colours = {tuple(c) for c in shot[::7, ::7].reshape(-1, 3)}
        assert len(colours) > 50  # charts in colour, not a page of one tone
    finally:
        context.close()


def test_dark_style_and_print(browser, report):
    light_ctx, light, _ = open_report(browser, report, "light")
    dark_ctx, dark, seen = open_report(browser, report, "dark")
    try:
        assert seen["errors"] == []
        bg = "getComputedStyle(document.body).backgroundColor"
        fg = "getComputedStyle(document.body).color"
        assert light.evaluate(bg) == "rgb(255, 255, 255)"
        assert dark.evaluate(bg) != light.evaluate(bg)
        assert dark.evaluate(fg) != light.evaluate(fg)
        # chart text follows the page: light on dark
        fill = "getComputedStyle(document.querySelector('figure svg text')).fill"
        assert dark.evaluate(fill) != light.evaluate(fill)
        dark_px = pixels(dark.screenshot())
        assert dark_px[5, 5].sum() < 150  # a dark page
        dark.emulate_media(media="print")
        assert dark.evaluate(bg) == "rgb(255, 255, 255)"  # printed light, whatever the screen
        pdf = light.pdf()
        assert pdf.startswith(b"%PDF") and len(pdf) > 50_000
    finally:
        light_ctx.close()
        dark_ctx.close()


def test_score_report_in_the_browser(browser, tmp_path, run_cli):
    out = tmp_path / "score.html"
    r = run_cli("score", PREDS, TRUTH, "--k", "1..10", "--fail-under", "ndcg@10=0.9",
                "--html", out, "-q")
    assert r.exit_code == 1  # the gate fails, the page is written
    context, page, seen = open_report(browser, out)
    try:
        assert seen["requests"] == [] and seen["errors"] == []
        assert "the gate failed" in page.inner_text("#gates")  # one gate: no plural
        assert page.query_selector("#chart-curve-ndcg svg") is not None
    finally:
        context.close()
