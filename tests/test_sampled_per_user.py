"""``sampled`` with each held-out item's own number of candidates (#52 item 2): a column of the
runs or a file of users, in both modes (runs of sampled ranks, runs of scores with the
held-out items last). The oracle: the instances split by their number, each part estimated
with ``--candidates`` as one number, the parts' values weighed by their instances."""

from __future__ import annotations

import csv

import pytest

from rankeval.api.sampled import sampled
from rankeval.errors import InputError, OptionError

from .conftest import SAMPLE

SIZES = (300, 3706)


def _size(user: str) -> int:
    return SIZES[int(user[1:]) % 2]


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _write(path, rows, extra: str | None = None):
    names = [*rows[0].keys(), *([extra] if extra else [])]
    with open(path, "w", newline="") as fh:
        out = csv.DictWriter(fh, names)
        out.writeheader()
        for row in rows:
            out.writerow({**row, **({extra: _size(row["user_id"])} if extra else {})})
    return path


def _oracle(tmp_path, run: str, truth: str | None, negatives: int | None):
    rows = _rows(run)
    parts, total = {}, 0
    for size in SIZES:
        mine = [r for r in rows if _size(r["user_id"]) == size]
        part = _write(tmp_path / f"part{size}.csv", mine)
        held = truth and str(_write(tmp_path / f"held{size}.csv", [
            r for r in _rows(truth) if _size(r["user_id"]) == size]))
        result = sampled(str(part), size, negatives, truth=held)
        parts[size] = (result.runs[0].instances, result.runs[0].values)
        total += result.runs[0].instances
    first = parts[SIZES[0]][1]
    return {m: {e: sum(n * v[m][e] for n, v in parts.values()) / total for e in first[m]}
            for m in first}


MODES = {"ranks": (SAMPLE / "sampled_a.csv", None, 100),
         "scores": (SAMPLE / "sampled_scores.csv", str(SAMPLE / "sampled_heldout.csv"), None)}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("source", ["column", "file"])
def test_each_item_its_own_candidates_is_each_part_estimated_alone(tmp_path, mode, source):
    run, truth, negatives = MODES[mode]
    expected = _oracle(tmp_path, str(run), truth, negatives)
    if source == "column":
        given = _write(tmp_path / "run.csv", _rows(run), "n_candidates")
        result = sampled(str(given), None, negatives, truth=truth,
                         candidates_col="n_candidates")
    else:
        users = sorted({r["user_id"] for r in _rows(run)})
        file = tmp_path / "candidates.csv"
        file.write_text("user_id,candidates\n" + "".join(f"{u},{_size(u)}\n" for u in users))
        result = sampled(str(run), None, negatives, truth=truth, candidates_file=str(file))
    got = result.runs[0].values
    assert got == {m: {e: pytest.approx(v) for e, v in by.items()} for m, by in expected.items()}
    assert result.per_user is not None
    assert (result.per_user["min"], result.per_user["max"]) == SIZES
    assert result.candidates == max(SIZES)


def test_one_number_for_every_user_is_candidates_n(tmp_path):
    run = _rows(SAMPLE / "sampled_a.csv")
    for r in run:
        r["n"] = "3706"
    given = _write(tmp_path / "run.csv", run)
    one = sampled(str(SAMPLE / "sampled_a.csv"), 3706, 100).runs[0].values
    assert sampled(str(given), None, 100, candidates_col="n").runs[0].values == one


def test_a_user_missing_from_the_file_is_one_error_naming_it(tmp_path):
    file = tmp_path / "candidates.csv"
    file.write_text("user_id,candidates\nu000,300\n")
    with pytest.raises(InputError, match="no number of candidates"):
        sampled(str(SAMPLE / "sampled_a.csv"), None, 100, candidates_file=str(file))


def test_too_few_candidates_for_the_negatives_is_refused(tmp_path):
    run = _rows(SAMPLE / "sampled_a.csv")
    for r in run:
        r["n"] = "50"
    given = _write(tmp_path / "run.csv", run)
    with pytest.raises(OptionError, match="must outnumber"):
        sampled(str(given), None, 100, candidates_col="n")


def test_the_command_line_takes_a_column_or_a_file_and_says_which(run_cli, tmp_path):
    given = _write(tmp_path / "run.csv", _rows(SAMPLE / "sampled_a.csv"), "n_candidates")
    r = run_cli("sampled", given, "--negatives", "100", "--candidates-col", "n_candidates")
    assert r.exit_code == 0, r.stderr
    assert "300 to 3,706 candidates per user (column n_candidates)" in r.stdout
    both = run_cli("sampled", given, "--negatives", "100", "--candidates", "400",
                   "--candidates-col", "n_candidates")
    assert both.exit_code == 2 and "not both" in both.stderr
    none = run_cli("sampled", given, "--negatives", "100")
    assert none.exit_code == 2 and "--candidates-file FILE" in none.stderr
