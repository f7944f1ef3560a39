"""RecBole's atomic files read by their extension (#52 item 2): ``.inter``, ``.item``, ``.user``,
tab-separated with a typed header (``user_id:token``, ``score:float``); every input role reads
one as it reads the same table in CSV, and a ``token_seq`` column (an item's genres) is a list
of tags for ``--item-features``. Tags read whole while they hold spaces are a warning naming
``--tag-separator``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankeval.io.formats import EXTENSIONS

USERS, ITEMS = ["u1", "u2", "u3"], ["a", "b", "c", "d", "e"]
GENRES = {"a": "Action Comedy", "b": "Action", "c": "Comedy Drama", "d": "Drama",
          "e": "Action Comedy Drama"}
LISTS = {"u1": ["a", "b", "c", "d"], "u2": ["a", "c", "e"], "u3": ["e", "d", "b"]}
# role -> (RecBole's typed columns, rows)
TABLES = {
    "preds": (["user_id:token", "item_id:token", "score:float"],
              [(u, i, f"{1 - r / 10:.1f}") for u, items in LISTS.items()
               for r, i in enumerate(items)]),
    "truth": (["user_id:token", "item_id:token", "rating:float"],
              [("u1", "c", "4"), ("u1", "a", "2"), ("u2", "e", "5"), ("u3", "b", "3")]),
    "train": (["user_id:token", "item_id:token", "timestamp:float"],
              [("u1", "e", "1"), ("u2", "b", "2"), ("u2", "d", "3"), ("u3", "a", "4")]),
    "catalog": (["item_id:token"], [(i,) for i in [*ITEMS, "f"]]),
    "item_features": (["item_id:token", "genre:token_seq"], list(GENRES.items())),
    "item_groups": (["item_id:token", "provider:token"],
                    [(i, "x" if i in "abc" else "y") for i in ITEMS]),
    "segments": (["user_id:token", "country:token"], [("u1", "BR"), ("u2", "BR"), ("u3", "DE")]),
}
EXT = {"preds": "inter", "truth": "inter", "train": "inter", "catalog": "item",
       "item_features": "item", "item_groups": "item", "segments": "user"}
OPTION = {"train": "--train", "catalog": "--catalog", "item_features": "--item-features",
          "item_groups": "--item-groups", "segments": "--segments"}
METRICS = ("ndcg@3,ap@3,recall@3,novelty@3,coverage@3,ild@3,awrf@3,arp@3,gini@3")


def _write(folder, role: str, recbole: bool):
    names, rows = TABLES[role]
    if recbole:
        path, sep, header = folder / f"{role}.{EXT[role]}", "\t", names
    else:
        path, sep, header = folder / f"{role}.csv", ",", [n.split(":")[0] for n in names]
        if role == "item_features":  # the same tags, with the CSV's separator
            rows = [(i, g.replace(" ", "|")) for i, g in rows]
    path.write_text("".join(sep.join(r) + "\n" for r in [header, *rows]))
    return path


def _args(folder, recbole_role: str | None):
    files = {role: _write(folder, role, role == recbole_role or recbole_role == "all")
             for role in TABLES}
    args = [files["preds"], files["truth"], "-m", METRICS, "--segment-by", "country"]
    for role, option in OPTION.items():
        args += [option, files[role]]
    return args


def test_every_atomic_extension_is_recbole():
    assert {ext: EXTENSIONS[ext] for ext in (".inter", ".item", ".user")} == {
        ".inter": "recbole", ".item": "recbole", ".user": "recbole"}


@pytest.mark.parametrize("role", [*TABLES, "all"])
def test_each_role_reads_a_recbole_file_as_the_same_table_in_csv(run_cli, tmp_path, role):
    (tmp_path / "csv").mkdir()
    (tmp_path / "rb").mkdir()
    plain = run_cli("score", *_args(tmp_path / "csv", None), "-f", "json", "-q")
    assert plain.exit_code == 0, plain.stderr
    atomic = run_cli("score", *_args(tmp_path / "rb", role), "-f", "json", "-q")
    assert atomic.exit_code == 0, atomic.stderr
    assert atomic.json()["metrics"] == plain.json()["metrics"]
    assert atomic.json()["segments"] == plain.json()["segments"]


def _ild(tags: dict[str, set[str]], lists: dict[str, list[str]], k: int) -> float:
    """SPEC's ild: per user the mean over pairs of 1 - cosine of one-hot tag vectors."""
    def distance(x: str, y: str) -> float:
        return 1 - len(tags[x] & tags[y]) / np.sqrt(len(tags[x]) * len(tags[y]))
    return float(np.mean([np.mean([distance(x, y) for x, y in
                                   itertools.combinations(items[:k], 2)])
                          for items in lists.values()]))


def test_ild_on_a_recbole_item_file_reads_each_genre_as_a_tag(run_cli, tmp_path):
    args = _args(tmp_path, "all")
    r = run_cli("score", *args[:2], "-m", "ild@3", "--item-features", args[args.index(
        "--item-features") + 1], "-f", "json")
    assert r.exit_code == 0, r.stderr
    each = _ild({i: set(g.split()) for i, g in GENRES.items()}, LISTS, 3)
    whole = _ild({i: {g} for i, g in GENRES.items()}, LISTS, 3)
    assert r.json()["metrics"]["ild@3"] == pytest.approx(each)
    assert abs(each - whole) > 0.1  # the test tells the two readings apart
    assert "one tag" not in r.stderr


@pytest.mark.parametrize("separator", [" ", ";", "/"])
def test_tag_separator_splits_a_text_column(run_cli, tmp_path, separator):
    p, t = _write(tmp_path, "preds", False), _write(tmp_path, "truth", False)
    f = tmp_path / "features.csv"
    f.write_text("item_id,genre\n" + "".join(f"{i},{g.replace(' ', separator)}\n"
                                           for i, g in GENRES.items()))
    r = run_cli("score", p, t, "-m", "ild@3", "--item-features", f, "--tag-separator",
                separator, "-f", "json")
    assert r.exit_code == 0, r.stderr
    each = _ild({i: set(g.split()) for i, g in GENRES.items()}, LISTS, 3)
    assert r.json()["metrics"]["ild@3"] == pytest.approx(each)
    assert "one tag" not in r.stderr


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl"])
def test_one_tag_per_item_with_spaces_is_a_warning_naming_the_option(run_cli, tmp_path, fmt):
    p, t = _write(tmp_path, "preds", False), _write(tmp_path, "truth", False)
    f = tmp_path / f"features.{fmt}"
    if fmt == "jsonl":
        f.write_text("".join(f'{{"item_id": "{i}", "genre": "{g}"}}\n'
                             for i, g in GENRES.items()))
    else:
        sep = "," if fmt == "csv" else "\t"
        f.write_text(f"item_id{sep}genre\n" + "".join(f"{i}{sep}{g}\n"
                                                     for i, g in GENRES.items()))
    r = run_cli("score", p, t, "-m", "ild@3", "--item-features", f, "-f", "json")
    assert r.exit_code == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if "one tag" in line]
    assert len(warnings) == 1, r.stderr
    assert "3 of them with a space" in warnings[0] and "--tag-separator ' '" in warnings[0]
    # several tags on some item: no warning
    f.write_text(f.read_text().replace("Drama", "Drama|Noir", 1))
    r = run_cli("score", p, t, "-m", "ild@3", "--item-features", f, "-f", "json")
    assert r.exit_code == 0 and "one tag" not in r.stderr, r.stderr


def test_a_float_seq_column_is_each_item_s_vector(run_cli, tmp_path):
    vectors = {"a": (1, 0, 0.5), "b": (0, 1, 0), "c": (1, 1, 0), "d": (0.2, 0, 1),
               "e": (0, 0.5, 0.5)}
    recbole = tmp_path / "items.item"
    recbole.write_text("item_id:token\temb:float_seq\n" + "".join(
        f"{i}\t{' '.join(map(str, v))}\n" for i, v in vectors.items()))
    columns = tmp_path / "items.csv"
    columns.write_text("item_id,f0,f1,f2\n" + "".join(
        f"{i},{','.join(map(str, v))}\n" for i, v in vectors.items()))
    p, t = _write(tmp_path, "preds", False), _write(tmp_path, "truth", False)
    got = [run_cli("score", p, t, "-m", "ild@3", "--item-features", f, "-f", "json", "-q")
           for f in (recbole, columns)]
    assert all(r.exit_code == 0 for r in got), [r.stderr for r in got]
    assert got[0].json()["metrics"] == got[1].json()["metrics"]
