"""The documentation site as a reader opens it: from disk (``file://``), in headless Chromium
with the network off. Navigation lands on pages (not directory listings), search answers,
nothing is read from outside, and tables and code blocks show all they hold.

Built the way ``make docs`` builds it (``mkdocs build --strict``); Chromium and iframe-worker's
shim come from ``make install`` / ``make test``. A missing one fails: it is never a skip.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["index.html", "metrics.html", "commands/score.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def open_page(browser, path: Path, width: int = 1200):
    """The page from disk, offline; every request that leaves the disk is recorded (and fails:
    the context is offline), and so is every error the page raises."""
    context = browser.new_context(offline=True, viewport={"width": width, "height": 900})
    page = context.new_page()
    seen: dict[str, list[str]] = {"outside": [], "errors": []}
    page.on("request", lambda r: r.url.startswith("file://") or seen["outside"].append(r.url))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.goto(path.as_uri(), wait_until="load")
    return context, page, seen


@pytest.mark.parametrize("name", PAGES)
def test_pages_open_from_disk_and_read_nothing_outside(browser, site, name):
    context, page, seen = open_page(browser, site / name)
    assert page.locator("article.md-content__inner h1").count() == 1
    page.wait_for_timeout(300)
    assert seen == {"outside": [], "errors": []}
    context.close()


def test_a_navigation_link_lands_on_a_page(browser, site):
    """Opened from disk, a link to ``metrics/`` showed the folder's listing: every link of the
    navigation names a file of the site, and following one shows that page."""
    context, page, seen = open_page(browser, site / "index.html")
    hrefs = page.eval_on_selector_all("a.md-nav__link[href]", "xs => xs.map(a => a.href)")
    pages = {h.split("#")[0] for h in hrefs if h.startswith("file://")}
    assert len(pages) >= 20
    for href in pages:
        assert href.endswith(".html"), href
        assert Path(href.removeprefix("file://")).is_file(), href
    page.locator('a.md-nav__link[href="metrics.html"]').first.evaluate("a => a.click()")
    page.wait_for_url("**/metrics.html")
    page.wait_for_load_state("load")
    assert page.title().startswith("Metric reference")
    assert seen == {"outside": [], "errors": []}
    context.close()


def test_search_answers_from_disk(browser, site):
    """Search runs without a server: the index is inlined and the worker is iframe-worker's
    shim, copied into the site (the offline plugin's default loads it from the web)."""
    context, page, seen = open_page(browser, site / "metrics.html")
    page.keyboard.press("s")
    page.keyboard.type("bpref")
    page.wait_for_selector(".md-search-result__item", timeout=20_000)
    links = page.eval_on_selector_all(".md-search-result__link", "xs => xs.map(a => a.href)")
    files = [Path(h.split("#")[0].split("?")[0].removeprefix("file://")) for h in links]
    assert files and all(f.is_file() for f in files)
    assert any("metrics.html" in h for h in links)
    assert seen == {"outside": [], "errors": []}
    context.close()


@pytest.mark.parametrize("width", [1200, 420])
def test_tables_never_break_a_name_and_code_blocks_scroll(browser, site, width):
    """A name in a table (a code span without a space) stays on one line, the table scrolls
    sideways when wider than the page; a code block wider than the page scrolls."""
    for name in ("metrics.html", "trec-eval.html", "commands/interleave.html"):
        context, page, _ = open_page(browser, site / name, width)
        broken = page.eval_on_selector_all(
            ".md-typeset table code",
            "cs => cs.filter(c => !c.textContent.includes(' ') && c.getClientRects().length > 1)"
            ".map(c => c.textContent)")
        assert broken == [], (name, broken[:5])
        tables = page.eval_on_selector_all(
            ".md-typeset__scrollwrap",
            "ws => ws.map(w => [w.scrollWidth > w.clientWidth, getComputedStyle(w).overflowX])")
        assert tables and all(style in ("auto", "scroll") for wide, style in tables if wide)
        blocks = page.eval_on_selector_all(
            ".md-typeset pre > code",
            "cs => cs.filter(c => c.scrollWidth > c.clientWidth)"
            ".map(c => getComputedStyle(c).overflowX)")
        assert all(style in ("auto", "scroll") for style in blocks), (name, blocks)
        context.close()


def _screenshot_tool():
    """docs/screenshot.py, which `make docs` runs to draw the README's picture of the report."""
    spec = importlib.util.spec_from_file_location("docs_screenshot",
                                                  ROOT / "docs" / "screenshot.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_report_screenshot_holds_the_whole_page(browser, tmp_path):
    """The README's picture was cut mid-chart (a fixed 1,250-pixel clip): the picture
    docs/screenshot.py draws is as tall as the document, measured again here in a window of
    its own, and the report's last element ends inside it. Nothing waits on a clock: the page
    is static, JavaScript off."""
    tool = _screenshot_tool()
    page_path = tool.report(tmp_path)
    out = tmp_path / "report.png"
    tool.shoot(browser, page_path, out)
    with out.open("rb") as f:  # a PNG's IHDR: width and height, big-endian, at bytes 16-24
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])

    context = browser.new_context(offline=True, java_script_enabled=False,
                                  viewport={"width": tool.WIDTH, "height": 600},
                                  device_scale_factor=1)
    page = context.new_page()
    page.goto(page_path.as_uri(), wait_until="load")
    scroll = page.evaluate("() => [document.documentElement.scrollWidth,"
                           " document.documentElement.scrollHeight]")
    last = page.evaluate("() => { const s = document.querySelectorAll('body *');"
                         " return s[s.length - 1].getBoundingClientRect().bottom + scrollY; }")
    context.close()
    assert scroll[1] > 2 * 1250  # the report runs far past the old crop
    assert (width, height) == (tool.WIDTH, scroll[1])
    assert last <= height
