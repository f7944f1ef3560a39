"""The documentation stays true: the README and every page under docs/ are checked.

Every ``console`` example is run and its output compared line by line; every option of every
command is on the command's page; the metric reference's table is the registry's; the site
builds with ``mkdocs build --strict`` (offline: no plugin fetches anything).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from rankeval.cli import cli, metrics_markdown
from rankeval.foreign_names import EQUAL, PEER_TABLE
from rankeval.io.columns import COLUMN_OPTIONS
from rankeval.presets import PRESETS
from rankeval.registry import REGISTRY
from rankeval.report.catalog import presets_markdown
from rankeval.settings import TABLE

from .conftest import ROOT

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
# The README first: its first example is `make run`'s command.
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
COMMANDS = sorted(cli.commands)


def _generator():
    """docs/generate.py, what `make docs` runs to write the generated parts of the pages."""
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()
GENERATED = [p for p in PAGES if GENERATE.PART.search(p.read_text())]
MODULE_MAP = GENERATE  # its modules_markdown writes development.md's module map


def _name(page) -> str:
    return str(page.relative_to(ROOT))


def _between_markers(text: str, name: str = "metrics") -> str:
    start, end = text.index(f"<!-- {name}:start"), text.index(f"<!-- {name}:end -->")
    return text[text.index("\n", start) + 1:end]


def test_metric_reference_table_is_the_registry():
    """`make docs` regenerates it; a metric added to the registry must be in the page."""
    assert _between_markers((DOCS / "metrics.md").read_text()) == metrics_markdown()


def test_the_presets_table_is_the_settings_table():
    """Every claim that a preset reproduces a tool is a row the code reads (`make docs`
    regenerates the page's table from it)."""
    page = _between_markers((DOCS / "conventions.md").read_text(), "presets")
    assert page == presets_markdown()
    for name in PRESETS:
        assert f"`{name}`" in page


def test_the_module_map_is_the_docstrings():
    """development.md's module map is `make docs`'s (docs/generate.py): a module added, moved
    or given another job without running it fails here."""
    page = _between_markers((DOCS / "development.md").read_text(), "modules")
    assert page == MODULE_MAP.modules_markdown()
    listed = re.findall(r"^\| `([^`]+)` \|", page, re.M)
    assert listed == sorted(
        (p.relative_to(ROOT / "rankeval").as_posix() for p in (ROOT / "rankeval").rglob("*.py")),
        key=lambda name: name.split("/"))


def test_the_module_map_follows_a_docstring_and_wants_one(tmp_path):
    """Planted: a docstring changed changes the map; a module without one stops `make docs`."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package. More about it."""\n')
    (package / "sub" / "__init__.py").write_text('"""A sub-package (Smith et al. 2019).\n\nOn."""')
    (package / "a.py").write_text('"""One job,\nover two lines. Another sentence."""\n')
    table = MODULE_MAP.modules_markdown(package)
    assert table.splitlines()[2:] == [
        "| `__init__.py` | The package. |", "| `a.py` | One job, over two lines. |",
        "| `sub/__init__.py` | A sub-package (Smith et al. 2019). |"]
    (package / "a.py").write_text('"""Another job: a | b."""\n')
    assert "| `a.py` | Another job: a \\| b. |" in MODULE_MAP.modules_markdown(package)
    (package / "b.py").write_text("x = 1\n")
    with pytest.raises(SystemExit, match=r"b\.py has no docstring"):
        MODULE_MAP.modules_markdown(package)


# Each answer of "Where a new piece goes": its title, then the files it names (paths from the
# repository's root, in code spans); these five must be answered.
ANSWERS = ["a metric", "an input format", "a report format", "an engine", "a verb"]


def _answers() -> dict[str, list[str]]:
    text = (DOCS / "development.md").read_text()
    section = text[text.index("### Where a new piece goes"):]
    section = section[:section.index("\n## ")]
    items = re.findall(r"^- \*\*(.+?)\*\*:(.*?)(?=^- \*\*|\Z)", section, re.M | re.S)
    return {title: re.findall(r"`(rankeval/[^`\s]*|[\w/]+\.py)`", " ".join(body.split()))
            for title, body in items}


def test_where_a_new_piece_goes_names_one_or_two_files_that_exist():
    answers = _answers()
    assert set(ANSWERS) <= set(answers), set(ANSWERS) - set(answers)
    for title, files in answers.items():
        assert 1 <= len(set(files)) <= 2, (title, files)
        for name in files:
            assert (ROOT / name).exists(), (title, name)
def test_a_mapping_table_says_which_names_are_not_equal():
    """A name the table does not mark equal is marked in the page, never left bare."""
    pages = "".join((DOCS / page).read_text() for page in ("trec-eval.md", "recommenders.md"))
    for p in PEER_TABLE:
        if p.status != EQUAL:
            assert f"`{p.name.replace('{k}', '10')}` ({p.status})" in pages, p


def test_readme_is_a_front_page():
    assert len(README.splitlines()) < 300
    assert "make test" in README and "make docs" in README
    # the number of metrics it announces is the registry's
    assert f"**{len(REGISTRY)} metrics" in README


def test_readme_links_every_page_and_every_link_resolves():
    links = set(re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#\s]*)", README))
    for link in links:
        assert (ROOT / link).exists(), link
    # the site's home page repeats the README; its changelog page includes CHANGELOG.md
    pages = {_name(p) for p in DOCS.rglob("*.md")} - {"docs/index.md", "docs/changelog.md"}
    assert pages <= links, pages - links
    assert "CHANGELOG.md" in links


def test_the_home_page_names_every_command():
    """The site's home page once listed five of eight commands: its list is held to the CLI's."""
    home = (DOCS / "index.md").read_text()
    listed = re.findall(r"^    - \[`([a-z-]+)`\]\(commands/([a-z-]+)\.md\): \S", home, re.M)
    assert sorted(name for name, _ in listed) == COMMANDS
    assert all(name == page for name, page in listed)


def test_first_screen_has_the_two_commands_and_an_example():
    first = README[: README.index("## ")]
    assert "make run" in first
    assert "make test" in first
    assert "rankeval score sample_data/preds.csv" in first


@pytest.mark.parametrize("page", GENERATED, ids=[_name(p) for p in GENERATED])
def test_generated_parts_are_what_make_docs_writes(page):
    """Command help, usage lines, command outputs and tables between `<!-- KIND:start -->`
    markers are what docs/generate.py writes from the code: a page edited by hand, or code
    changed without `make docs`, fails here."""
    text = page.read_text()
    assert GENERATE.render(text) == text, f"{_name(page)}: run make docs"


def test_every_command_and_subcommand_has_its_help_on_its_page():
    """Each command (a group's subcommands too) has a page, docs/commands/NAME.md, holding its
    usage and its whole `--help`; no page holds the help of a command that does not exist."""
    paths = set(GENERATE.command_paths())
    assert {p[0] for p in paths} == set(COMMANDS) and len(paths) > len(COMMANDS)
    shown = set()
    for page in sorted((DOCS / "commands").glob("*.md")):
        parts = GENERATE.parts(page.read_text())
        helps = {tuple(args) for kind, args in parts if kind == "help"}
        assert all(p[0] == page.stem for p in helps), _name(page)
        assert [page.stem] in [args for kind, args in parts if kind == "usage"], _name(page)
        shown |= helps
    assert shown == paths, (paths - shown, shown - paths)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_is_in_the_help_on_its_command_page(name):
    """The generator at work: every option a reader can give is in the page's help."""
    page = (DOCS / "commands" / f"{name}.md").read_text()
    helps = "".join(m.group(4) for m in GENERATE.PART.finditer(page) if m.group(2) == "help")
    commands = [cli.commands[name]]
    commands += list(getattr(commands[0], "commands", {}).values())
    # hidden options are the old spellings, named in score's "One vocabulary" section
    for param in [p for c in commands for p in c.params if not getattr(p, "hidden", False)]:
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", helps), \
                    f"{name}: {opt}"


def test_a_generated_part_is_checked_and_an_unknown_one_refused():
    """The check can fail: a help block with a line changed differs from what is written,
    and a marker naming no generator stops `make docs`."""
    page = (DOCS / "commands" / "score.md").read_text()
    changed = page.replace("  -k, --k K[,K...]", "  -k, --cutoffs K[,K...]", 1)
    assert changed != page and GENERATE.render(changed) == page
    with pytest.raises(SystemExit, match="no generator"):
        GENERATE.render("<!-- nothing:start -->\n<!-- nothing:end -->")
    with pytest.raises(SystemExit, match="no command"):
        GENERATE.render("<!-- help:start frobnicate -->\n<!-- help:end -->")


def test_metric_json_sample_and_its_keys_are_the_commands():
    """docs/commands/metrics.md shows `rankeval metrics -f json`'s first object as the command
    prints it, and its table names every key of it, and no other."""
    page = (DOCS / "commands" / "metrics.md").read_text()
    sample = re.search(r"\$ rankeval metrics -f json\n(.*?)\n  \.\.\.\n```", page, re.S)
    assert sample
    first = json.loads(sample.group(1).rstrip(",") + "]")[0]
    table = page[page.index("| key | meaning |"):]
    table = table[:table.index("\n\n")]
    keys = {k for row in table.splitlines()[2:]
            for k in re.findall(r"`(\w+)`", row.split(" | ")[0])}
    assert keys == set(first)


def test_no_page_says_one_with_a_plural():
    """`1 lines` in docs/inputs.md's example of an error the CLI prints as `1 line`: no page
    puts 1 before the plural of a noun rankeval counts with `errors.plural` (the nouns are
    read from the code; CHANGELOG.md quotes old wordings, so it is left out)."""
    nouns = set()
    for path in (ROOT / "rankeval").rglob("*.py"):
        nouns |= set(re.findall(r"plural\([^,()]+, [\"']([a-z ]+)[\"']", path.read_text()))
    nouns.discard("query")  # its plural is queries, below
    assert {"user", "row", "line", "item"} <= nouns
    slips = re.compile(r"(?<![\d.,@=/\w-])1 (?:" + "|".join(sorted(nouns)) + r")s\b|"
                       r"(?<![\d.,@=/\w-])1 queries\b")
    found = [f"{_name(page)}: {m.group(0)}" for page in PAGES
             for m in slips.finditer(page.read_text())]
    assert found == []


def test_every_setting_is_on_the_api_page():
    page = (DOCS / "api.md").read_text()
    for name in [s.name for s in TABLE] + list(COLUMN_OPTIONS):
        assert f"`{name}`" in page, name


def _console_examples() -> list[tuple[str, str, list[str]]]:
    """Every ``console`` block of every page: the page, the command and the lines it prints."""
    examples = []
    for page in PAGES:
        text = page.read_text()
        blocks = re.findall(r"```console\n(.*?)```", text, re.S)
        for block in blocks:
            first, _, shown = block.partition("\n")
            assert first.startswith("$ rankeval "), f"{_name(page)}: {first!r}"
            examples.append((_name(page), first[2:], shown.splitlines()))
    return examples


EXAMPLES = _console_examples()


def test_console_examples_of_every_command():
    commands = {command.split()[1] for _, command, _ in EXAMPLES}
    assert {"score", "compare", "validate", "convert"} <= commands
    assert any(page == "README.md" for page, _, _ in EXAMPLES)


@pytest.mark.parametrize("page, command, shown", EXAMPLES,
                         ids=[f"{p}:{c.split()[1]}" for p, c, _ in EXAMPLES])
def test_console_example_output_is_real(run_cli, tmp_path, monkeypatch, page, command, shown):
    """Run each example from a folder holding sample_data/, as a reader would."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    r = run_cli(*shlex.split(command)[1:])  # as a shell reads it, quotes and all
    assert r.exit_code in (0, 1), r.stderr  # 1: an example of a failing gate
    printed = [line.rstrip() for line in (r.stdout + r.stderr).splitlines()]
    assert [line.rstrip() for line in shown] == printed, page


def _python_examples() -> list[tuple[str, str]]:
    """Every ``python`` block that reads the bundled sample data: the page and the code."""
    return [(_name(page), block) for page in PAGES
            for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
            if "sample_data/" in block]


PYTHON = _python_examples()


def test_python_examples_exist():
    assert any(page == "docs/comparing-runs.md" for page, _ in PYTHON)


@pytest.mark.parametrize("page, code", PYTHON, ids=[p for p, _ in PYTHON])
def test_python_example_prints_what_its_comments_say(tmp_path, monkeypatch, capsys, page,
                                                      code):
    """Each ``print(...)  # shown`` line prints ``shown`` (``...``: any text)."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+# (.*)$", code, re.M)]
    assert expected, f"{page}: a python example says what it prints"
    exec(compile(code, page, "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(expected), (page, printed)
    for line, want in zip(printed, expected, strict=True):
        pattern = ".*".join(re.escape(part) for part in want.split("..."))
        assert re.fullmatch(pattern, line.strip()), (page, line, want)


def test_make_run_is_the_first_example():
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*\n\t\$\(BIN\)/(rankeval [^\n]+)", makefile, re.M)
    assert run and EXAMPLES[0][0] == "README.md" and run.group(1) == EXAMPLES[0][1]


def test_test_fast_needs_neither_java_nor_chromium():
    """make test-fast leaves out the tests marked spark (a JVM) and browser (Chromium), and
    does not depend on the targets that install them; make test still does."""
    makefile = (ROOT / "Makefile").read_text()
    fast = re.search(r"^test-fast:([^#\n]*).*\n\t([^\n]+)", makefile, re.M)
    assert fast and "browser" not in fast.group(1) and "java" not in fast.group(1)
    assert '-m "not slow and not spark and not browser"' in fast.group(2)
    full = re.search(r"^test:([^#\n]*)", makefile, re.M)
    assert full and "browser" in full.group(1) and "java" in full.group(1)


def test_site_builds_strict_and_offline(tmp_path):
    """`mkdocs build --strict` (what `make docs` runs): a broken link or anchor, a page out of
    the navigation or a docstring that does not render fails it. The API page holds every
    public entry point."""
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "WARNING" not in out.stderr, out.stderr[-3000:]
    # the offline plugin: page.html, not page/index.html (links work opened from disk)
    api = (tmp_path / "site" / "api.html").read_text()
    for name in ("evaluate", "Evaluation", "evaluate_scores", "validate_inputs", "convert",
                 "make_settings"):
        assert f'id="rankeval.{name}"' in api, name
    assert (tmp_path / "site" / "report.png").exists()
    assert not (tmp_path / "site" / "screenshot.py").exists()
