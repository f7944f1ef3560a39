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


# Every HTML report's command on the sample data (compare with --gold, --segments and
# --all-pairs among them): its tables fit a 1,280-pixel window
PAGES = {
    "score": ["score", PREDS, TRUTH, "--k", "1..10"],
    "compare --segments": ["compare", PREDS, POPULAR, TRUTH, "--segments",
                           SAMPLE / "users.csv", "--segment-by", "country"],
    "compare --all-pairs": ["compare", PREDS, POPULAR, SAMPLE / "full_a.csv", TRUTH,
                            "--all-pairs", "--rounds", "500"],
    "compare --gold": ["compare", SAMPLE / "judged_bm25.run", SAMPLE / "judged_llm.run",
                       SAMPLE / "judged_llm.qrels", "--gold", SAMPLE / "judged_human.qrels"],
    "agree": ["agree", SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv", "--runs",
              *(SAMPLE / f"agree_{n}.csv" for n in ("bm25", "dense", "llm")), "-m", "ndcg@10"],
    "interleave score": ["interleave", "score", SAMPLE / "interleave_clicks.csv"],
    "interleave simulate": ["interleave", "simulate", SAMPLE / "interleave_main.csv",
                            SAMPLE / "interleave_candidate.csv",
                            SAMPLE / "interleave_qrels.csv", "--trials", "5"],
    "ope": ["ope", SAMPLE / "log.csv", SAMPLE / "log_candidate.csv"],
    "sampled": ["sampled", SAMPLE / "sampled_a.csv", SAMPLE / "sampled_b.csv", "--candidates",
                "400", "--negatives", "50", "-m", "hit_rate", "-k", "10"],
    "power": ["power", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "--effect", "0.02"],
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_reports_tables_fit_the_window(browser, tmp_path, run_cli, name):
    """compare --gold's table ran past a 1,280-pixel window, its "disagree" column scrolled
    out of sight (every cell kept on one line): headers, words and intervals wrap at their
    spaces now, numbers never. Folded tables are opened; each table is measured against the
    box it lies in."""
    out = tmp_path / "report.html"
    r = run_cli(*PAGES[name], "-q", "-f", "html", "-o", out)
    assert r.exit_code == 0, r.stderr
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(out.as_uri(), wait_until="load")
        page.eval_on_selector_all("details", "ds => ds.forEach(d => d.open = true)")
        tables = page.eval_on_selector_all("table", """ts => ts.map(t => [
            t.closest('section') ? t.closest('section').id : '', t.rows[0].innerText,
            t.getBoundingClientRect().width, t.parentElement.clientWidth])""")
        assert tables
        wide = [(sid, head, width, room) for sid, head, width, room in tables
                if width > room + 1]
        assert wide == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        # a number keeps to one line: "1.512e-72" once broke at its minus
        broken = page.eval_on_selector_all(
            "td:not(.text):not(.wrap)", """cs => cs.filter(c => {
                const r = document.createRange(); r.selectNodeContents(c);
                return new Set([...r.getClientRects()].map(b => Math.round(b.bottom))).size > 1;
            }).map(c => c.innerText)""")
        assert broken == []
    finally:
        context.close()
