"""Missing output folders are created (#52 item 3): every output option of every command writes
into a folder that does not exist yet, as ``mkdir -p`` would; a folder that cannot be made (a
file in the way) is one line before any work."""

from __future__ import annotations

import pytest

from rankeval.cli import cli

from .conftest import SAMPLE

P, T = SAMPLE / "preds.csv", SAMPLE / "truth.csv"
LOG, POLICY = SAMPLE / "log.csv", SAMPLE / "log_candidate.csv"
SAMPLED = SAMPLE / "sampled_a.csv"
HUMAN, MACHINE = SAMPLE / "agree_human.csv", SAMPLE / "agree_machine.csv"

# (command, option) -> the arguments that send that output to PATH
OUTPUTS = {
    ("score", "output"): lambda path: ["score", P, T, "-f", "json", "-o", path],
    ("score", "per_user"): lambda path: ["score", P, T, "--per-user", path],
    ("score", "junit"): lambda path: ["score", P, T, "--fail-under", "ndcg@10=0.1",
                                      "--junit", path],
    ("score", "html"): lambda path: ["score", P, T, "-k", "10", "--html", path],
    ("compare", "output"): lambda path: ["compare", P, P, T, "-f", "json", "-o", path],
    ("compare", "per_user"): lambda path: ["compare", P, P, T, "-m", "ndcg@10",
                                           "--per-user", path],
    ("compare", "html"): lambda path: ["compare", P, P, T, "-m", "ndcg@10", "--html", path],
    ("validate", "output"): lambda path: ["validate", P, T, "-f", "json", "-o", path],
    ("convert", "target"): lambda path: ["convert", P, path],
    ("sampled", "output"): lambda path: ["sampled", SAMPLED, "--negatives", "100",
                                         "--candidates", "1000", "-o", path],
    ("ope", "output"): lambda path: ["ope", LOG, POLICY, "--rounds", "50", "-o", path],
    ("ope", "per_context"): lambda path: ["ope", LOG, POLICY, "--rounds", "50",
                                          "--per-context", path],
    ("power", "output"): lambda path: ["power", P, P, T, "-m", "ndcg@10", "-o", path],
    ("power", "html"): lambda path: ["power", P, P, T, "-m", "ndcg@10", "--html", path],
    ("agree", "output"): lambda path: ["agree", HUMAN, MACHINE, "-o", path],
    ("agree", "html"): lambda path: ["agree", HUMAN, MACHINE, "--html", path],
}
# the options of each command that name a file it writes
WRITERS = {"output", "per_user", "per_context", "junit", "html", "target"}


def test_the_table_holds_every_output_option_of_every_command():
    found = {(name, p.name) for name, command in cli.commands.items()
             for p in command.params if p.name in WRITERS}
    assert found == set(OUTPUTS)


@pytest.mark.parametrize("output", list(OUTPUTS), ids="-".join)
def test_an_output_in_missing_folders_is_written_there(run_cli, tmp_path, output):
    path = tmp_path / "new" / "deeper" / ("out.parquet" if output[1] == "per_context"
                                          else "out.csv")
    r = run_cli(*OUTPUTS[output](path), "-q")
    assert r.exit_code == 0, r.stderr
    assert path.is_file() and path.stat().st_size > 0


@pytest.mark.parametrize("output", list(OUTPUTS), ids="-".join)
def test_a_file_in_the_way_of_the_folder_is_one_line_before_any_work(run_cli, tmp_path,
                                                                       output):
    (tmp_path / "a_file").write_text("x")
    r = run_cli(*OUTPUTS[output](tmp_path / "a_file" / "sub" / "out.csv"), "-q")
    assert r.exit_code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: "), r.stderr
    assert "a_file is not a directory" in lines[0]
    assert (tmp_path / "a_file").read_text() == "x"
