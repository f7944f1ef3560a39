"""MkDocs hook (mkdocs.yml: hooks): the pages read the same on GitHub and on the site.

GitHub's tables need a pipe inside a code span escaped (`--gain linear\\|exponential`), or the
cell splits; Python-Markdown keeps code spans whole and would show the backslash. Inside the
code spans of table rows, the escape is dropped before the page is rendered.
"""

from __future__ import annotations

import re

CODE = re.compile(r"`[^`\n]*`")


def on_page_markdown(markdown: str, **kwargs) -> str:
    return "\n".join(
        CODE.sub(lambda m: m.group(0).replace("\\|", "|"), line) if line.startswith("|") else line
        for line in markdown.split("\n")
    )
