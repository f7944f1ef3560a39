"""Every numeric option of every command is bounded where it is declared: out-of-range values
(0, -1, 1e20, 2^62) give exit 0 or one line with exit 2, quickly, never an internal error or a
hang. The options are found from the commands' own parameters, so a new one is walked too."""

from __future__ import annotations

import contextlib
import signal
import time

import click
import pytest

from rankeval.cli import cli
from rankeval.cli.param_types import numeric

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "spec_example3_preds.csv", SAMPLE / "spec_example3_truth.csv"

# A small valid invocation of every command that has a numeric option.
BASE = {
    "score": [PREDS, TRUTH, "-f", "json"],
    "compare": [PREDS, SAMPLE / "spec_example3_preds.csv", TRUTH, "--name", "a", "--name", "b",
                "-f", "json"],
    "power": [PREDS, PREDS, TRUTH, "-f", "json"],
    "validate": [PREDS, TRUTH],
    "sampled": [SAMPLE / "sampled_a.csv", "--candidates", "400", "--negatives", "50",
                "-f", "json"],
    "ope": [SAMPLE / "log.csv", SAMPLE / "log_candidate.csv", "-f", "json"],
    "agree": [SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv", "--runs",
              SAMPLE / "agree_bm25.csv", SAMPLE / "agree_dense.csv", "-f", "json"],
    "interleave make": [SAMPLE / "interleave_main.csv", SAMPLE / "interleave_candidate.csv",
                        "-o", "-"],
    "interleave score": [SAMPLE / "interleave_clicks.csv", "-f", "json"],
    "interleave simulate": [SAMPLE / "interleave_main.csv", SAMPLE / "interleave_candidate.csv",
                            SAMPLE / "interleave_qrels.csv", "--impressions", "100",
                            "--trials", "3", "-f", "json"],
}
VALUES = ["0", "-1", "1e20", str(2**62), "nan"]
SECONDS = 120  # per run: generous for a busy machine; a hang is minutes to hours


def _commands(group: click.Group = cli, prefix: str = ""):
    """Every command that runs, a group's subcommands by their full name ("interleave make")."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield prefix + name, command


def _numeric_options() -> list[tuple[str, str]]:
    return [(name, max(p.opts, key=len)) for name, command in _commands() for p in command.params
            if isinstance(p, click.Option) and not p.hidden and numeric(p)]


OPTIONS = _numeric_options()


def test_the_walk_finds_the_numeric_options():
    flags = {f"{c} {f}" for c, f in OPTIONS}
    for expected in ("score --rounds", "score --k", "score --max-depth",
                     "score --collection-size", "compare --rounds", "compare --top-changes",
                     "power --rounds", "power --systems", "sampled --candidates",
                     "sampled --negatives", "sampled --k", "ope --rounds", "ope --clip",
                     "interleave score --rounds", "interleave simulate --trials"):
        assert expected in flags, expected
    assert {c for c, _ in OPTIONS} <= set(BASE), "a command with numeric options has no BASE"


@pytest.mark.parametrize("command", sorted(BASE))
def test_every_base_invocation_works(run_cli, command):
    """Else the walk below would see only its errors."""
    r = run_cli(*command.split(), *BASE[command])
    assert r.exit_code == 0, r.stderr
    assert r.stdout


class _Hang(BaseException):
    pass


@contextlib.contextmanager
def _deadline(seconds: int):
    def hang(signum, frame):
        raise _Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize(("command", "flag"), OPTIONS, ids=[f"{c}{f}" for c, f in OPTIONS])
@pytest.mark.parametrize("value", VALUES)
def test_every_numeric_option_is_bounded(run_cli, command, flag, value):
    start = time.monotonic()
    with _deadline(SECONDS):
        r = run_cli(*command.split(), *BASE[command], flag, value)
    assert time.monotonic() - start < SECONDS
    errors = [line for line in r.stderr.splitlines() if line.startswith("rankeval: error:")]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    if r.exit_code == 2:
        assert len(errors) == 1 and r.stderr.strip().endswith(errors[0]), r.stderr
    else:
        assert r.exit_code == 0 and not errors, (r.exit_code, r.stderr)


@pytest.mark.parametrize(("n", "m"), [(2, 1), (10, 3), (10, 9), (400, 50), (3706, 100)])
def test_the_sampled_ranks_law_is_the_hypergeometric(n, m):
    """The law built from ratios of consecutive probabilities, which replaced scipy's
    hypergeom (whose time grows with the pool: --candidates 2^62 ran for hours), agrees with
    it wherever scipy is quick."""
    import numpy as np
    from scipy.stats import hypergeom

    from rankeval.analysis.sampled import sampled_pmf

    ranks = np.arange(1, n + 1, dtype=np.float64)
    ours = sampled_pmf(ranks, n, m, replacement=False)
    theirs = hypergeom.pmf(np.arange(m + 1)[None, :], n - 1, ranks[:, None] - 1, m)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize(("n", "m"), [(2, 1), (10, 9), (3706, 999), (10**6, 999),
                                      (10**12, 999), (10**12, 20_000)])
def test_the_sampled_ranks_law_with_replacement_is_the_binomial(n, m):
    """With replacement, the law is scipy's binomial at every catalogue size: the first and
    last true ranks (all mass on one end), ranks whose mode is far from both ends, and ranks
    near the ends of a huge catalogue, where each row's window holds probabilities spanning
    hundreds of orders of magnitude."""
    import numpy as np
    from scipy.stats import binom

    from rankeval.analysis.sampled import sampled_pmf

    ranks = np.unique(np.concatenate([
        np.arange(1, min(n, 50) + 1), n - np.arange(min(n, 50)),
        np.linspace(1, n, 200).round(), [n // 3, n // 2]]).clip(1, n)).astype(np.float64)
    ours = sampled_pmf(ranks, n, m, replacement=True)
    theirs = binom.pmf(np.arange(m + 1)[None, :], m, (ranks[:, None] - 1) / (n - 1))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-14)


def test_a_huge_catalogue_is_quick(run_cli):
    r = run_cli("sampled", SAMPLE / "sampled_a.csv", "--candidates", str(10**12),
                "--negatives", "50", "-f", "json")
    assert r.exit_code == 0, r.stderr
    over = run_cli("sampled", SAMPLE / "sampled_a.csv", "--candidates", str(10**12 + 1),
                   "--negatives", "50")
    assert over.exit_code == 2 and "--candidates" in over.stderr and "1000000000000" in over.stderr
