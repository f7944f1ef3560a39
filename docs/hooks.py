"""MkDocs hook (mkdocs.yml: hooks): the pages read the same on GitHub and on the site, and the
site works opened from disk.

GitHub's tables need a pipe inside a code span escaped (`--gain linear\\|exponential`), or the
cell splits; Python-Markdown keeps code spans whole and would show the backslash. Inside the
code spans of table rows, the escape is dropped before the page is rendered.

Opened from disk (``file://``), a browser refuses the Web Worker that Material's search runs
in; Material's offline plugin then loads iframe-worker's shim, from the web unless a polyfill
of that name is configured (mkdocs.yml: ``extra.polyfills``). ``make install`` fetches the
shim from the npm registry into the virtualenv (``share/iframe-worker``); it is copied into
the site here, so that the site reads nothing from outside.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

CODE = re.compile(r"`[^`\n]*`")
# An inline code span without a space (a name: `--err-max-grade`, `alpha-nDCG@K`) is marked so
# that a table never breaks it (docs/stylesheets/extra.css); one with spaces (a formula) wraps.
NAME = re.compile(r"<code>(?=[^<\s]+</code>)")
SHIM = Path(sys.prefix) / "share" / "iframe-worker" / "shim" / "index.js"


def on_page_markdown(markdown: str, **kwargs) -> str:
    return "\n".join(
        CODE.sub(lambda m: m.group(0).replace("\\|", "|"), line) if line.startswith("|") else line
        for line in markdown.split("\n")
    )


def on_page_content(html: str, **kwargs) -> str:
    return NAME.sub('<code class="name">', html)


def on_config(config, **kwargs):
    if not SHIM.is_file():
        raise PluginError(f"the offline search needs iframe-worker's shim at {SHIM}: run "
                          "`make install` (it fetches the shim with npm)")
    return config


def on_post_build(config, **kwargs) -> None:
    for polyfill in config.extra.get("polyfills", []):
        target = Path(config.site_dir) / str(polyfill)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHIM, target)
        shutil.copyfile(SHIM.parent.parent / "LICENSE", target.with_name("iframe-worker.LICENSE"))
