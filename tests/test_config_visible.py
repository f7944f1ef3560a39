"""Configuration you can see (#52 item 4): the configuration file in use is named in every
report of score, compare and validate (table footer, JSON settings, Markdown, HTML, JUnit), an
exit 1 from a gate the file set says so, and ``rankeval config [COMMAND]`` prints every option
in effect with its source (default, file, environment, option)."""

from __future__ import annotations

import json
import shutil

import click
import pytest

from rankeval.cli import cli

from .conftest import ROOT

SAMPLE = ROOT / "sample_data"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A working directory with a run, its truth and a rankeval.toml that sets a gate."""
    for name in ("preds.csv", "truth.csv"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    shutil.copy(SAMPLE / "preds.csv", tmp_path / "b.csv")
    (tmp_path / "rankeval.toml").write_text('k = [5]\nfail_under = {"ndcg@5" = 0.99}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_score_names_the_file_in_every_report(run_cli, here):
    table = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q")
    assert table.exit_code == 1
    assert "config rankeval.toml" in table.stdout.splitlines()[3]  # the settings footer
    assert "gates set in rankeval.toml: --fail-under" in table.stderr
    doc = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q", "-f", "json").json()
    assert doc["settings"]["config"] == "rankeval.toml"
    md = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q", "-f", "markdown")
    assert "config rankeval.toml" in md.stdout
    run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q", "--html", "s.html",
            "--junit", "j.xml")
    assert "config rankeval.toml" in (here / "s.html").read_text()
    assert '<property name="rankeval.config" value="rankeval.toml" />' in (
        here / "j.xml").read_text()


def test_without_a_file_no_report_names_one(run_cli, here):
    (here / "rankeval.toml").unlink()
    r = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q", "-f", "json")
    assert r.exit_code == 0 and r.json()["settings"]["config"] is None
    assert "config" not in run_cli("score", "preds.csv", "truth.csv", "-q").stdout
    assert "gates set in" not in r.stderr


def test_a_gate_typed_on_the_command_line_is_not_blamed_on_the_file(run_cli, here):
    r = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q",
                "--fail-under", "ndcg@5=0.99")
    assert r.exit_code == 1 and "gates set in" not in r.stderr


def test_an_explicit_config_is_named_as_given(run_cli, here, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere") / "ci.toml"
    other.write_text("k = [3]\n")
    doc = run_cli("score", "preds.csv", "truth.csv", "-m", "ndcg", "-q", "-f", "json",
                  "--config", str(other)).json()
    assert doc["settings"]["config"] == str(other) and doc["k"] == [3]


@pytest.mark.parametrize("command", ["compare", "validate"])
def test_compare_and_validate_name_the_file(run_cli, here, command):
    files = ["preds.csv", "b.csv", "truth.csv"] if command == "compare" else [
        "preds.csv", "truth.csv"]
    doc = run_cli(command, *files, "-m", "ndcg", "-q", "-f", "json").json()
    assert (doc["settings"] if command == "compare" else doc)["config"] == "rankeval.toml"
    assert "options from rankeval.toml" in run_cli(command, *files, "-q").stdout


def test_config_says_each_options_source(run_cli, here, monkeypatch):
    monkeypatch.setenv("RANKEVAL_DEBUG", "1")
    doc = run_cli("config", "-f", "json", "score", "--gain", "exponential").json()
    assert doc["config"] == "rankeval.toml"
    rows = {r["option"]: r for r in doc["options"]}
    assert rows["--k"]["source"] == "file" and rows["--k"]["value"] == ["5"]
    assert rows["--fail-under"]["source"] == "file"
    assert rows["--gain"] == {"option": "--gain", "value": "exponential", "source": "option",
                              "group": "Conventions"}
    assert rows["--ap-denominator"]["source"] == "default"
    assert rows["--ap-denominator"]["value"] == "min"  # the setting in effect, not None
    assert rows["--debug"]["source"] == "environment"
    table = run_cli("config", "score").stdout
    assert table.startswith("rankeval score: configuration file: rankeval.toml")
    assert any(line.split()[:3] == ["--k", "5", "file"] for line in table.splitlines())


def test_config_under_a_preset_says_so(run_cli, here):
    rows = {r["option"]: r for r in run_cli("config", "-f", "json", "score", "--compat",
                                            "trec_eval").json()["options"]}
    assert rows["--ap-denominator"] == {"option": "--ap-denominator", "value": "relevant",
                                        "source": "default of --compat trec_eval",
                                        "group": "Conventions"}


@pytest.mark.parametrize("name", sorted(set(cli.commands) - {"config"}))
def test_config_lists_every_option_of_every_command_once(run_cli, here, name):
    (here / "rankeval.toml").unlink()  # its k = [5] is a list, which sampled's -k refuses
    r = run_cli("config", "-f", "json", name)
    assert r.exit_code == 0, r.stderr
    listed = [row["option"] for row in r.json()["options"]]
    visible = [max(p.opts, key=len) for p in cli.commands[name].params
               if isinstance(p, click.Option) and not p.hidden and p.expose_value]
    assert listed == visible


def test_config_alone_lists_the_files_keys_and_their_commands(run_cli, here):
    doc = run_cli("config", "-f", "json").json()
    keys = {r["key"]: r for r in doc["keys"]}
    assert doc["config"] == "rankeval.toml"
    assert "score" in keys["fail_under"]["commands"]
    assert "validate" not in keys["fail_under"]["commands"]
    (here / "rankeval.toml").unlink()
    assert run_cli("config").stdout.startswith("configuration file: none (looked for")


def test_config_of_an_unknown_command_is_one_line_exit_2(run_cli, here):
    r = run_cli("config", "scroe")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "scroe" in r.stderr
    assert json.loads(run_cli("config", "-f", "json", "score").stdout)["command"] == "score"


# Every other command that reads a configuration file names it too (#52 item 4): power,
# agree, ope, sampled and interleave score and simulate, in each report format they offer but
# CSV (rows of numbers alone)
INTERLEAVE = [str(SAMPLE / f"interleave_{n}.csv") for n in ("main", "candidate")]
OTHERS = {
    "interleave score": [str(SAMPLE / "interleave_clicks.csv"), "--rounds", "200"],
    "interleave simulate": [*INTERLEAVE, str(SAMPLE / "interleave_qrels.csv"), "--trials",
                            "3", "--impressions", "100"],
    "power": ["preds.csv", "b.csv", "truth.csv", "-m", "ndcg@10", "--effect", "0.02"],
    "agree": [*(str(SAMPLE / f"agree_{n}.csv") for n in ("human", "machine")), "--runs",
              *(str(SAMPLE / f"agree_{n}.csv") for n in ("bm25", "dense", "llm")), "-m",
              "ndcg@10"],
    "ope": [str(SAMPLE / "log.csv"), str(SAMPLE / "log_candidate.csv"), "-e", "iips"],
    "sampled": [str(SAMPLE / "sampled_a.csv"), "--candidates", "400", "--negatives", "50",
                "-m", "hit_rate", "-k", "10"],
}


@pytest.fixture
def other(here):
    """The working directory, its rankeval.toml giving a key no command here has a gate in."""
    (here / "rankeval.toml").write_text("seed = 3\n")
    return here


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json"])
@pytest.mark.parametrize("command", sorted(OTHERS))
def test_every_other_command_names_the_file(run_cli, other, command, fmt):
    r = run_cli(*command.split(), *OTHERS[command], "-q", "-f", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        assert r.json()["config"] == "rankeval.toml"
    else:
        assert "options from rankeval.toml" in r.stdout


@pytest.mark.parametrize("command", sorted(OTHERS))
def test_without_a_file_the_other_commands_name_none(run_cli, other, command):
    (other / "rankeval.toml").unlink()
    r = run_cli(*command.split(), *OTHERS[command], "-q", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["config"] is None
    assert "options from" not in run_cli(*command.split(), *OTHERS[command], "-q").stdout


@pytest.mark.parametrize("present", [True, False])
def test_interleave_make_names_the_file_it_read(run_cli, other, present):
    """make writes lists, not a report: its line on stderr names the file (whose seed it
    took), and no file when there is none."""
    if not present:
        (other / "rankeval.toml").unlink()
    r = run_cli("interleave", "make", *INTERLEAVE, "-o", "lists.csv")
    assert r.exit_code == 0, r.stderr
    assert ("options from rankeval.toml" in r.stderr) is present
    given = run_cli("interleave", "make", *INTERLEAVE, "--seed", "3", "-o", "seed3.csv")
    assert given.exit_code == 0, given.stderr
    same = (other / "lists.csv").read_bytes() == (other / "seed3.csv").read_bytes()
    assert same is present  # the file's seed = 3 was used
