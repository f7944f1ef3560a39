"""Regenerate docs/report.png, the README's picture of the HTML report (`make docs`).

Runs the issue's compare command on the sample data and photographs the whole page, from its
top to the end of its document (never a crop that could stop mid-chart), in headless Chromium
(the system's `chromium`, driven by Playwright), network and JavaScript off.
tests/test_site.py holds ``shoot`` to a picture as tall as the document.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
OUTPUT = ROOT / "docs" / "report.png"
COMMAND = ["compare", "preds.csv", "popular.csv", "truth.csv", "--k", "1..20",
           "--segments", "users.csv", "--segment-by", "country", "--ci",
           "-m", "ndcg,recall,map", "-f", "html", "-o"]
WIDTH = 1100  # CSS pixels; one device pixel each
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update"]


def report(folder: Path) -> Path:
    """The HTML report of COMMAND on the sample data, written into FOLDER."""
    page_path = folder / "report.html"
    subprocess.run([sys.executable, "-m", "rankeval", *COMMAND, str(page_path), "-q"],
                   cwd=SAMPLE, check=True)
    return page_path


def document_size(page) -> tuple[int, int]:
    """The document's full width and height in CSS pixels (what scrolling reaches)."""
    size = page.evaluate("() => [document.documentElement.scrollWidth,"
                         " document.documentElement.scrollHeight]")
    return int(size[0]), int(size[1])


def shoot(browser, page_path: Path, out: Path) -> tuple[int, int]:
    """Photograph the whole of PAGE_PATH into OUT: a viewport WIDTH wide, as tall as the
    document once laid out, so that the picture holds the page from top to bottom. Returns
    the document's size."""
    context = browser.new_context(offline=True, java_script_enabled=False,
                                  viewport={"width": WIDTH, "height": 800},
                                  device_scale_factor=1)
    try:
        page = context.new_page()
        page.goto(page_path.as_uri(), wait_until="load")
        height = document_size(page)[1]
        # the viewport made as tall as the document: nothing below the fold, nothing cut
        page.set_viewport_size({"width": WIDTH, "height": height})
        size = document_size(page)
        if size != (WIDTH, height):
            raise SystemExit(f"docs/screenshot.py: the report is {size[0]}x{size[1]} px in a "
                             f"{WIDTH}x{height} window: it would be cut")
        page.screenshot(path=str(out), full_page=True)
        return size
    finally:
        context.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("make docs: the screenshot needs Chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser, args=ARGS)
        try:
            shoot(b, report(Path(tmp)), OUTPUT)
        finally:
            b.close()


if __name__ == "__main__":
    main()
