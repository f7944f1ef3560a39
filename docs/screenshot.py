"""Regenerate docs/report.png, the README's picture of the HTML report (`make docs`).

Runs the issue's compare command on the sample data and photographs the top of the page in
headless Chromium (the system's `chromium`, driven by Playwright), network off.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
COMMAND = ["compare", "preds.csv", "popular.csv", "truth.csv", "--k", "1..20",
           "--segments", "users.csv", "--segment-by", "country", "--ci",
           "-m", "ndcg,recall,map", "-f", "html", "-o"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("make docs: the screenshot needs Chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "report.html"
        subprocess.run([sys.executable, "-m", "rankeval", *COMMAND, str(page_path), "-q"],
                       cwd=SAMPLE, check=True)
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=browser, args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update"])
            context = b.new_context(offline=True, java_script_enabled=False,
                                    viewport={"width": 1100, "height": 1500},
                                    device_scale_factor=1)
            page = context.new_page()
            page.goto(page_path.as_uri())
            # the K curves with their bands and the forest plots: what a reviewer reads first
            top = page.query_selector("#curves").bounding_box()
            page.screenshot(path=str(ROOT / "docs" / "report.png"), full_page=True,
                            clip={"x": 0, "y": top["y"], "width": 1100, "height": 1250})
            b.close()


if __name__ == "__main__":
    main()
