"""One vocabulary across commands (#52 item 3): the same option has the same default everywhere
(or a reason its help gives), and stdout is taken wherever a file is."""

from __future__ import annotations

import csv
import io

import pytest

from rankeval.cli import cli

from .conftest import SAMPLE

P, T = SAMPLE / "preds.csv", SAMPLE / "truth.csv"

# (option, command) whose default differs from the other commands' on purpose: the reason is
# in its help (the words given here)
OWN_DEFAULT = {
    ("rounds", "power"): "simulates some 40 to 100 powers",
    # sampled's own options of the same name: other choices, another meaning
    ("metrics", "sampled"): "Metrics of one held-out item",
    ("ties", "sampled"): "held-out item",
}


def _defaults() -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for name, command in cli.commands.items():
        for p in command.params:
            if not getattr(p, "hidden", False):
                out.setdefault(p.name, {})[name] = p.default
    return out


@pytest.mark.parametrize("option", sorted(_defaults()))
def test_an_option_has_one_default_across_commands(option):
    by_command = {c: d for c, d in _defaults()[option].items() if (option, c) not in OWN_DEFAULT}
    assert len({repr(d) for d in by_command.values()}) <= 1, by_command


@pytest.mark.parametrize(("option", "command"), list(OWN_DEFAULT))
def test_a_default_of_its_own_says_why(option, command):
    param = next(p for p in cli.commands[command].params if p.name == option)
    assert OWN_DEFAULT[option, command] in (param.help or "")


def test_ope_resamples_as_often_as_score_and_compare():
    rounds = {c: p.default for c in ("score", "compare", "ope") for p in cli.commands[c].params
              if p.name == "rounds"}
    assert rounds == {"score": 10_000, "compare": 10_000, "ope": 10_000}


@pytest.mark.parametrize("command", ["score", "compare"])
def test_per_user_to_stdout_with_the_table_on_stderr(run_cli, command):
    runs = [P] if command == "score" else [P, P]
    r = run_cli(command, *runs, T, "-m", "ndcg@10", "--per-user", "-", "-q")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) > 1 and all(len(row) > 1 for row in rows)
    assert "ndcg" in r.stderr  # the table went to stderr


@pytest.mark.parametrize("command", ["score", "compare"])
def test_per_user_to_stdout_beside_a_json_report_on_stdout_is_one_line(run_cli, command):
    runs = [P] if command == "score" else [P, P]
    r = run_cli(command, *runs, T, "-m", "ndcg@10", "--per-user", "-", "-f", "json")
    assert r.exit_code == 2
    assert r.stderr.strip() == ("rankeval: error: --per-user - takes stdout: write the report "
                                "elsewhere with -o FILE")
