"""Progress goes to a person at a terminal only, and leaves nothing behind."""

from __future__ import annotations

import io
import time

from rankeval.engines.progress import Stages, wanted


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_only_a_terminal_outside_ci_gets_progress():
    assert wanted(Terminal(), environ={})
    assert not wanted(io.StringIO(), environ={})
    assert not wanted(Terminal(), environ={"CI": "true"})
    assert not wanted(Terminal(), quiet=True, environ={})
    assert not wanted(Terminal(), environ={"RANKEVAL_PROGRESS": "0"})
    assert not wanted(Terminal(), environ={"TERM": "dumb"})


def test_slow_work_shows_its_stage_and_quick_work_shows_nothing():
    slow = Terminal()
    with Stages(slow, enabled=True, delay=0.0) as s:
        s.stage("reading preds.csv")
        time.sleep(0.3)
    assert "reading preds.csv" in slow.getvalue()

    quick = Terminal()
    with Stages(quick, enabled=True, delay=5.0) as s:
        s.stage("reading preds.csv")
    assert quick.getvalue() == ""


def test_the_command_line_prints_no_progress_into_a_pipe(run_cli):
    from .conftest import SAMPLE

    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--quiet")
    assert r.exit_code == 0
    assert "reading" not in r.stderr and "scoring" not in r.stderr
