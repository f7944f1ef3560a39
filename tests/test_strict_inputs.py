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


def _codecs() -> list[str]:
    import encodings
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(encodings.__path__) if m.name != "aliases")


@pytest.mark.parametrize("codec", _codecs())
def test_every_codec_is_read_or_refused_in_one_line(run_cli, write, codec):
    """rot13, base64, zlib_codec (bytes to bytes) were internal errors; idna, undefined and
    the like fail without a position."""
    preds = write("p.csv", "user_id,item_id,rank\nü1,A,1\nü1,B,2\nu2,C,1\n".encode())
    truth = write("t.csv", b"user_id,item_id\nu2,C\n")
    r = run_cli("score", preds, truth, "-m", "ndcg@2", "--encoding", codec, "-f", "json")
    if r.exit_code != 0:
        _one_line_error(r)


@pytest.mark.parametrize("doc", ['{"u1": {"A": 0.9}, "u1": {"B": 0.5}}',
                                 '{"u1": {"A": 0.9, "A": 0.5}}'])
def test_a_repeated_json_key_is_refused(run_cli, write, doc):
    """Merged (two objects of one user) or kept twice, where ranx and pytrec_eval keep the
    last: either way a list nobody wrote."""
    preds = write("p.json", doc)
    truth = write("t.csv", "user_id,item_id\nu1,A\nu1,B\n")
    r = run_cli("score", preds, truth, "-m", "recall@2", "--dedupe")
    _one_line_error(r, "p.json", "is repeated in one object")
