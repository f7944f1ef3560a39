"""Delimited text as it comes (#52 item 2): ``--delimiter`` and ``--decimal`` for every input,
each with the run's and the truth's own over it (``--preds-delimiter``, ``--truth-decimal``);
the tab as the hint writes it (``'\\t'``); a decimal-comma file without ``--decimal`` is one
line naming the option."""

from __future__ import annotations

import pytest

PREDS = [("u1", "a", "0.9"), ("u1", "b", "0.5"), ("u1", "c", "0.25"), ("u2", "a", "1.5"),
         ("u2", "c", "0.75")]
TRUTH = [("u1", "a", "1"), ("u1", "c", "2.5"), ("u2", "c", "1")]


def _text(header: tuple[str, ...], rows, sep: str, decimal: str = ".") -> str:
    lines = [header, *[(u, i, v.replace(".", decimal)) for u, i, v in rows]]
    return "".join(sep.join(line) + "\n" for line in lines)


def _files(tmp_path, psep, tsep, pdec=".", tdec="."):
    p, t = tmp_path / "p.txt", tmp_path / "t.txt"
    p.write_text(_text(("user_id", "item_id", "score"), PREDS, psep, pdec))
    t.write_text(_text(("user_id", "item_id", "relevance"), TRUTH, tsep, tdec))
    return p, t


def _score(run_cli, p, t, *args):
    r = run_cli("score", p, t, "--preds-format", "csv", "--truth-format", "csv", "-m",
                "ndcg@3,ap@3", "-f", "json", "-q", *args)
    assert r.exit_code == 0, r.stderr
    return r.json()["metrics"]


@pytest.fixture
def expected(run_cli, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    return _score(run_cli, *_files(folder, ",", ","))


# how each separator may be named on the command line (as a shell passes it)
SEPARATORS = {"\t": ["\\t", "tab", "\t"], ";": [";", "semicolon"], "|": ["|", "pipe"],
              " ": ["space", "\\s"]}


@pytest.mark.parametrize(("sep", "named"), [(s, n) for s, names in SEPARATORS.items()
                                            for n in names])
def test_every_delimiter_in_every_spelling_for_both_inputs(run_cli, tmp_path, expected, sep,
                                                           named):
    p, t = _files(tmp_path, sep, sep)
    assert _score(run_cli, p, t, "--delimiter", named) == expected


@pytest.mark.parametrize("role", ["preds", "truth"])
@pytest.mark.parametrize("sep", ["\t", ";", "|"])
def test_each_input_its_own_delimiter(run_cli, tmp_path, expected, role, sep):
    p, t = _files(tmp_path, sep if role == "preds" else ",", sep if role == "truth" else ",")
    assert _score(run_cli, p, t, f"--{role}-delimiter", sep) == expected


def test_the_tab_hint_is_an_option_that_works(run_cli, tmp_path, expected):
    p, t = _files(tmp_path, ",", "\t")
    r = run_cli("score", p, t, "--preds-format", "csv", "--truth-format", "csv")
    assert r.exit_code == 2
    assert "--delimiter '\\t'" in r.stderr
    hinted = r.stderr.split("--delimiter ")[1].split("'")[1]  # as a shell's quotes pass it
    assert _score(run_cli, p, t, "--truth-delimiter", hinted) == expected


@pytest.mark.parametrize("role", ["preds", "truth", "both"])
def test_decimal_commas_read_right_with_decimal(run_cli, tmp_path, expected, role):
    p, t = _files(tmp_path, ";", ";", "," if role != "truth" else ".",
                  "," if role != "preds" else ".")
    option = "--decimal" if role == "both" else f"--{role}-decimal"
    assert _score(run_cli, p, t, option, ",") == expected


@pytest.mark.parametrize("role", ["preds", "truth"])
def test_decimal_commas_without_the_option_are_one_line_naming_it(run_cli, tmp_path, role):
    p, t = _files(tmp_path, ";", ";", "," if role == "preds" else ".",
                  "," if role == "truth" else ".")
    r = run_cli("score", p, t, "--preds-format", "csv", "--truth-format", "csv")
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankeval: error: "), r.stderr
    assert f"decimal commas? read them with --{role}-decimal ','" in lines[0]


def test_decimal_commas_in_an_extra_input(run_cli, tmp_path, expected):
    p, t = _files(tmp_path, ",", ",")
    prop = tmp_path / "prop.csv"
    prop.write_text("item_id;propensity\na;0,5\nb;0,25\nc;0,75\n")
    args = ["score", p, t, "--preds-format", "csv", "--truth-format", "csv", "-m",
            "ips_recall@3", "--propensity", prop, "-f", "json", "-q"]
    bad = run_cli(*args)
    assert bad.exit_code == 2 and "read them with --decimal ','" in bad.stderr
    good = run_cli(*args, "--decimal", ",", "--preds-decimal", ".", "--truth-decimal", ".")
    assert good.exit_code == 0, good.stderr
    assert good.json()["metrics"]["ips_recall@3"] > 0


def test_a_decimal_that_is_also_the_delimiter_is_refused(run_cli, tmp_path):
    p, t = _files(tmp_path, ",", ",")
    r = run_cli("score", p, t, "--preds-format", "csv", "--truth-format", "csv",
                "--delimiter", ",", "--decimal", ",")
    assert r.exit_code == 2 and "is also the delimiter" in r.stderr


@pytest.mark.parametrize("engine", ["spark", "ray"])
@pytest.mark.parametrize("option", ["--decimal", "--preds-decimal", "--truth-decimal"])
def test_a_cluster_engine_refuses_decimal_commas_before_starting(run_cli, engine, option):
    from .conftest import SAMPLE

    r = run_cli("score", SAMPLE / "preds.csv", SAMPLE / "truth.csv", "--engine", engine,
                option, ",")
    assert r.exit_code == 2
    assert r.stderr.strip() == (f"rankeval: error: {option} ',' is read by the local engine "
                                f"only: convert the numbers first, or drop --engine {engine}")
