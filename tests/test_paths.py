"""One rule for every output path (#46.11): no output may be an input, a configuration file,
another output or the step summary's file, compared by identity (any name of the file: a
symlink, a hard link); ``/dev/stdout`` and FIFOs are streams; a stream is read once.

Every output option of every command is walked (from the click commands' parameters) against
each forbidden target; a path parameter with no role in ``io.paths`` fails the walk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import click
import pytest

from rankeval.cli import cli
from rankeval.integrations.action import COMMANDS as SUMMARY_COMMANDS
from rankeval.io.paths import INPUTS, OUTPUTS, WORDS

from .conftest import SAMPLE

FILES = ("FILE", "PREDS", "TRUTH", "IN", "OUT", "LOG", "REPORT.json")


def _path_params(command: click.Command) -> list[click.Parameter]:
    """The parameters that name files: arguments of file metavars, options of FILE-like
    metavars (any new one without a role in io.paths is caught below)."""
    out = []
    for p in command.params:
        metavar = p.metavar or ""
        if p.name and not p.name.startswith("_") and p.name not in WORDS and (
                isinstance(p, click.Argument) or metavar in FILES):
            out.append(p)
    return out


def test_every_path_parameter_has_a_role():
    for name, command in cli.commands.items():
        for p in _path_params(command):
            if p.name == "config":
                continue  # a configuration file: read by the option's callback
            assert (p.name in INPUTS) != (p.name in OUTPUTS), (name, p.name)


# command -> the arguments that parse (the rule is checked before the command's own code)
BASE = {
    "score": ["score", "P", "T"],
    "compare": ["compare", "P", "Q", "T"],
    "ope": ["ope", "L", "P"],
    "power": ["power", "P", "Q", "T"],
    "sampled": ["sampled", "P", "--candidates", "1000", "--negatives", "10"],
    "validate": ["validate", "P", "T"],
    "convert": ["convert", "P", "OUT"],
    "metrics": ["metrics"],
    "agree": ["agree", "T", "P"],
    "config": ["config"],
    "interleave": ["interleave", "score", "L"],  # a group: its subcommands' files are theirs
}


def _outputs() -> list[tuple[str, str]]:
    """(command, output parameter) for every output of every command."""
    return [(name, p.name) for name, command in sorted(cli.commands.items())
            for p in command.params if p.name in OUTPUTS]


def test_every_command_has_its_base_arguments():
    assert set(BASE) == set(cli.commands)


def _option(command: str, param: str) -> list[str]:
    p = next(p for p in cli.commands[command].params if p.name == param)
    return [] if isinstance(p, click.Argument) else [max(p.opts, key=len)]


def _args(command: str, param: str, target: str, files: dict[str, str]) -> list[str]:
    args = [files.get(a, a) for a in BASE[command]]
    if param == "target":  # convert's OUT is an argument
        return [*args[:-1], target]
    return [*args, *_option(command, param), target]


@pytest.fixture
def files(tmp_path, monkeypatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    out = {}
    for key, name in (("P", "preds.csv"), ("Q", "popular.csv"), ("T", "truth.csv"),
                      ("L", "log.csv")):
        (tmp_path / name).write_bytes((SAMPLE / name).read_bytes())
        out[key] = str(tmp_path / name)
    out["OUT"] = str(tmp_path / "converted.jsonl")
    return out


FORBIDDEN = ("an input", "a hard link to an input", "a symlink to an input", "pyproject.toml",
             "rankeval.toml", "the --config file", "the step summary")


def _applies(command: str, forbidden: str) -> bool:
    """Whether ``command`` can meet the target at all (a --config, a step summary)."""
    if forbidden == "the --config file":
        return any(p.name == "config" for p in cli.commands[command].params)
    return forbidden != "the step summary" or command in SUMMARY_COMMANDS


@pytest.mark.parametrize(("command", "param", "forbidden"),
                         [(c, p, f) for c, p in _outputs() for f in FORBIDDEN
                          if _applies(c, f)])
def test_no_output_may_be_a_forbidden_target(run_cli, files, tmp_path, monkeypatch, command,
                                             param, forbidden):
    first = files["L" if command == "ope" else "P"]
    extra: list[str] = []
    if forbidden == "an input":
        target = first
    elif forbidden == "a hard link to an input":
        target = str(tmp_path / "hard.csv")
        os.link(first, target)
    elif forbidden == "a symlink to an input":
        target = str(tmp_path / "sub" / "link.csv")
        (tmp_path / "sub").mkdir()
        os.symlink(first, target)
    elif forbidden in ("pyproject.toml", "rankeval.toml"):
        target = forbidden
        (tmp_path / target).write_text("[project]\nname = 'x'\n" if target == "pyproject.toml"
                                       else "# every default\n")
    elif forbidden == "the --config file":
        target = str(tmp_path / "settings.toml")
        Path(target).write_text("[tool.rankeval]\n")
        extra = ["--config", target]
    else:
        target = str(tmp_path / "summary.md")
        Path(target).write_text("# the job's summary\n")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", target)
    before = Path(target).read_bytes()
    r = run_cli(*_args(command, param, target, files), *extra)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert r.stderr.count("\n") == 1 and "rankeval: error: " in r.stderr, r.stderr
    said = {"an input": "is the input", "pyproject.toml": "is the configuration file",
            "rankeval.toml": "is the configuration file",
            "the --config file": "is the configuration file",
            "the step summary": "is the step summary's file"}
    assert said.get(forbidden, "is the input") in r.stderr, r.stderr
    assert Path(target).read_bytes() == before


@pytest.mark.parametrize(("command", "param"),
                         [(c, p) for c, p in _outputs()
                          if any(c2 == c and p2 != p for c2, p2 in _outputs())])
def test_no_output_may_be_another_output(run_cli, files, tmp_path, command, param):
    others = [p for c, p in _outputs() if c == command and p != param]
    target = str(tmp_path / "same.csv")
    args = _args(command, param, target, files)
    for other in others:
        r = run_cli(*args, *_option(command, other), target)
        assert r.exit_code == 2, (command, param, other, r.stderr)
        assert "is the output of" in r.stderr
    assert not Path(target).exists()


def test_the_step_summary_may_not_be_an_input(run_cli, files, monkeypatch):
    """GITHUB_STEP_SUMMARY=p.csv appended Markdown to the predictions."""
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", files["P"])
    before = Path(files["P"]).read_bytes()
    r = run_cli("score", files["P"], files["T"])
    assert r.exit_code == 2 and "GITHUB_STEP_SUMMARY" in r.stderr, r.stderr
    assert Path(files["P"]).read_bytes() == before


def test_the_commands_with_a_step_summary_are_the_ones_the_rule_knows(run_cli, files,
                                                                      tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    writes = set()
    for command, args in BASE.items():
        summary.write_text("")
        run_cli(*[files.get(a, a) for a in args if a != "OUT"],
                *(["-"] if command == "convert" else []), "-q")
        if summary.read_text():
            writes.add(command)
    assert writes == set(SUMMARY_COMMANDS)


# --- streams ------------------------------------------------------------------------------

def _rankeval(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankeval", *args], capture_output=True,
                          timeout=60, check=False, **kw)


def test_one_fifo_given_as_two_inputs_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "both.csv"
    os.mkfifo(fifo)
    r = _rankeval("score", str(fifo), str(fifo))
    assert r.returncode == 2, r.stderr
    assert b"read only once" in r.stderr and r.stderr.count(b"\n") == 1


def test_a_step_summary_fifo_without_a_reader_is_a_warning_not_a_wait(tmp_path):
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    r = _rankeval("score", str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), "-f", "json",
                  env={**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)})
    assert r.returncode == 0, r.stderr
    assert b"cannot append to GITHUB_STEP_SUMMARY" in r.stderr


def test_a_step_summary_fifo_with_a_reader_gets_the_summary(tmp_path):
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    got: list[bytes] = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, before the run
    reader = threading.Thread(target=lambda: got.append(_read_all(fd)))
    reader.start()
    r = _rankeval("score", str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), "-q",
                  env={**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)})
    reader.join(30)
    assert r.returncode == 0, r.stderr
    assert b"ndcg" in got[0]


def _read_all(fd: int) -> bytes:
    import select
    import time

    os.set_blocking(fd, True)
    data = b""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk and data:
                break
            data += chunk
    os.close(fd)
    return data


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_dev_stdout_is_written_where_stdout_stands(tmp_path, name):
    """``-o /dev/stdout`` opened the file stdout was redirected to again, with O_TRUNC: what
    the shell had written before was lost."""
    if not os.path.exists(name):
        pytest.skip(f"no {name} here")
    target = tmp_path / "log.txt"
    target.write_text("before the report\n")
    with open(target, "a") as out:
        r = subprocess.run([sys.executable, "-m", "rankeval", "score",
                            str(SAMPLE / "preds.csv"), str(SAMPLE / "truth.csv"), "-f", "json",
                            "-q", "-o", name], stdout=out, stderr=subprocess.PIPE,
                           timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    text = target.read_text()
    assert text.startswith("before the report\n{")
    assert "ndcg@10" in json.loads(text.removeprefix("before the report\n"))["metrics"]


def test_a_symlinked_output_stays_a_symlink_to_a_whole_file(run_cli, files, tmp_path):
    real = tmp_path / "reports" / "r.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    r = run_cli("score", files["P"], files["T"], "-f", "json", "-o", str(link), "-q")
    assert r.exit_code == 0, r.stderr
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert real.read_text().startswith("{")
    assert sorted(p.name for p in real.parent.iterdir()) == ["r.json"]


def test_the_per_user_file_may_not_be_the_baseline_per_user_file(run_cli, files, tmp_path):
    """``--per-user X --baseline-per-user X`` wrote the new values over the baseline's."""
    baseline = tmp_path / "base.csv"
    assert run_cli("score", files["P"], files["T"], "--per-user", str(baseline), "-q"
                   ).exit_code == 0
    before = baseline.read_bytes()
    r = run_cli("score", files["P"], files["T"], "--per-user", str(baseline),
                "--baseline-per-user", str(baseline), "--non-inferior", "ndcg@10=1%")
    assert r.exit_code == 2 and "is the input" in r.stderr, r.stderr
    assert baseline.read_bytes() == before
