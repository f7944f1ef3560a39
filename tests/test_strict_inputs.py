"""Every input as strict as a run: per-user files, encodings, JSON keys, scores that tie
only once parsed, policies' probabilities, the collection's size."""

from __future__ import annotations

import pytest

from .conftest import SAMPLE

PREDS, TRUTH = SAMPLE / "preds.csv", SAMPLE / "truth.csv"


def _one_line_error(r, *needles):
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    lines = r.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("rankeval: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])


@pytest.fixture
def per_user(run_cli, tmp_path):
    """A per-user file of the sample run, and the same with its first user 50 times."""
    path = tmp_path / "users.csv"
    r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10", "--per-user", path, "-q",
                "-o", tmp_path / "report.txt")
    assert r.exit_code == 0, r.stderr
    header, first, *rest = path.read_text().splitlines()
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("\n".join([header, *[first] * 50, *rest]) + "\n")
    return path, repeated


@pytest.mark.parametrize("where", ["power-a", "power-b", "baseline"])
def test_a_per_user_file_holds_each_user_once(run_cli, per_user, where):
    good, repeated = per_user
    if where == "baseline":
        r = run_cli("score", PREDS, TRUTH, "-m", "ndcg@10", "--baseline-per-user", repeated,
                    "--non-inferior", "ndcg@10=0.01")
    else:
        a, b = (repeated, good) if where == "power-a" else (good, repeated)
        r = run_cli("power", "--per-user-a", a, "--per-user-b", b)
    _one_line_error(r, "repeated.csv", "1 repeated user", "row 2")


def test_the_library_reads_per_user_files_as_strictly(per_user):
    from rankeval import power
    from rankeval.errors import InputError

    good, repeated = per_user
    with pytest.raises(InputError, match="repeated user"):
        power(per_user_a=str(good), per_user_b=str(repeated))
