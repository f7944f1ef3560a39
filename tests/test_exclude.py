"""``--exclude FILE`` apart from ``--train`` (#52 item 2): the pairs of FILE are masked from the
ranked lists before the cut (a validation split, say), while --train feeds the popularity
metrics, and its own pairs are masked only with --exclude-seen; in every input format, and
for every command that scores runs against a truth."""

from __future__ import annotations

import pytest

PREDS = ("user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu1,c,0.7\nu1,d,0.6\nu2,a,0.5\n"
         "u2,c,0.4\nu2,d,0.3\n")
TRUTH = "user_id,item_id,relevance\nu1,c,1\nu2,d,1\n"
TRAIN = [("u1", "a"), ("u2", "c"), ("u3", "c")]  # popularity: c twice, a once
VALID = [("u1", "b"), ("u2", "a")]


def _write_pairs(tmp_path, name: str, pairs, fmt: str):
    path = tmp_path / f"{name}.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(f'{{"user_id": "{u}", "item_id": "{i}"}}\n' for u, i in pairs))
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"user_id": [u for u, _ in pairs],
                                 "item_id": [i for _, i in pairs]}), path)
    else:
        sep = "\t" if fmt == "tsv" else ","
        path.write_text(f"user_id{sep}item_id\n" + "".join(f"{u}{sep}{i}\n" for u, i in pairs))
    return path


def _rr(lists: dict[str, list[str]], relevant: dict[str, str], masked: set) -> float:
    """Reciprocal rank at 3 after the masked pairs are taken out (the oracle)."""
    out = []
    for u, items in lists.items():
        kept = [i for i in items if (u, i) not in masked][:3]
        out.append(1 / (kept.index(relevant[u]) + 1) if relevant[u] in kept else 0.0)
    return sum(out) / len(out)


LISTS = {"u1": ["a", "b", "c", "d"], "u2": ["a", "c", "d"]}
RELEVANT = {"u1": "c", "u2": "d"}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "p.csv").write_text(PREDS)
    (tmp_path / "t.csv").write_text(TRUTH)
    return tmp_path / "p.csv", tmp_path / "t.csv"


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
@pytest.mark.parametrize("seen", [False, True])
def test_exclude_masks_its_pairs_and_train_only_with_exclude_seen(run_cli, tmp_path, files,
                                                                    fmt, seen):
    train = _write_pairs(tmp_path, "train", TRAIN, "csv")
    valid = _write_pairs(tmp_path, "valid", VALID, fmt)
    r = run_cli("score", *files, "-m", "mrr@3,arp@3", "--train", train, "--exclude", valid,
                *(["--exclude-seen"] if seen else []), "-f", "json")
    assert r.exit_code == 0, r.stderr
    masked = set(VALID) | (set(TRAIN) if seen else set())
    assert r.json()["metrics"]["mrr@3"] == pytest.approx(_rr(LISTS, RELEVANT, masked))
    assert r.json()["inputs"]["exclude"]["path"] == str(valid)
    assert f"were in {train} and {valid} and dropped (--exclude-seen and --exclude)" in \
        r.stderr if seen else f"were in {valid} and dropped (--exclude)" in r.stderr


def test_train_alone_is_popularity_and_exclude_alone_masks(run_cli, tmp_path, files):
    train = _write_pairs(tmp_path, "train", TRAIN, "csv")
    valid = _write_pairs(tmp_path, "valid", VALID, "csv")
    plain = run_cli("score", *files, "-m", "mrr@3,arp@3", "--train", train, "-f", "json", "-q")
    masked = run_cli("score", *files, "-m", "mrr@3,arp@3", "--train", train, "--exclude",
                     valid, "-f", "json", "-q")
    assert plain.json()["metrics"]["mrr@3"] == pytest.approx(_rr(LISTS, RELEVANT, set()))
    assert masked.json()["metrics"]["mrr@3"] == pytest.approx(_rr(LISTS, RELEVANT, set(VALID)))
    only = run_cli("score", *files, "-m", "mrr@3", "--exclude", valid, "-f", "json", "-q")
    assert only.exit_code == 0, only.stderr
    assert only.json()["metrics"] == {"mrr@3": masked.json()["metrics"]["mrr@3"]}


def test_exclude_seen_truth_drops_the_excluded_pairs_from_the_truth(run_cli, tmp_path, files):
    valid = _write_pairs(tmp_path, "valid", [("u1", "c")], "csv")
    r = run_cli("score", *files, "-m", "mrr@3", "--exclude", valid, "--exclude-seen-truth",
                "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["users"]["evaluated"] == 1  # u1's one relevant pair is gone
    assert f"in {valid} and dropped (--exclude-seen-truth)" in r.stderr


@pytest.mark.parametrize("command", ["compare", "validate", "power"])
def test_every_command_that_scores_takes_exclude(run_cli, tmp_path, files, command):
    valid = _write_pairs(tmp_path, "valid", VALID, "csv")
    runs = [files[0]] if command == "validate" else [files[0], files[0]]
    r = run_cli(command, *runs, files[1], "-m", "mrr@3", "--exclude", valid, "-q")
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize("engine", ["spark", "ray"])
def test_a_cluster_engine_refuses_exclude_before_starting(run_cli, tmp_path, files, engine):
    valid = _write_pairs(tmp_path, "valid", VALID, "csv")
    r = run_cli("score", *files, "--exclude", valid, "--engine", engine)
    assert r.exit_code == 2
    assert r.stderr.startswith("rankeval: error: --exclude is read by the local engine only")
