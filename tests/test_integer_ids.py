"""Ids that are canonical integers, or one prefix and a number (``tt0111161``, ``D12``), take a
faster path (numbers, not hashed text); it must be invisible: the same codes, the same per-user
tables, ids shown as written (#17)."""

from __future__ import annotations

import gzip
import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankeval
from rankeval.io import encode, number_text
from rankeval.io.cast import ID, cast_columns, integer_ids, numbered_ids
from rankeval.io.codes import dense_codes
from rankeval.io.formats import delimited
from rankeval.kernels import distinct

NOT_CANONICAL = ["007", "-0", "1e3", "+5", "5.0", " 5", "5 ", "0x1F", "١٢", "99999999999999999999",
                 "0xFFFFF", "0XFFFFF", "0x16345785D8A0000", "-0xFFFFF"]  # hex Arrow would parse


def test_only_canonical_integers_are_integers():
    assert integer_ids(pa.array(["0", "7", "-12", "1000000", "-1000000000000000000"])) \
        .tolist() == [0, 7, -12, 1_000_000, -(10**18)]
    for text in NOT_CANONICAL:
        assert integer_ids(pa.array(["1", text])) is None, text
    assert integer_ids(pa.array(["1", None])) is None
    assert integer_ids(pa.array([], pa.string())) is None


@pytest.mark.parametrize("ids, reading", [
    (["1", "22", "-3"], ("", True, None)),
    (["tt0111161", "tt0000001"], ("tt", False, 7)),
    (["D1555982", "D12"], ("D", True, None)),
    (["user_12", "user_7"], ("user_", True, None)),
    (["007", "123"], ("", False, 3)),
    (["é12", "é3"], ("é", True, None)),
    (["007", "7"], None), (["u01", "u1"], None), (["x1", "y2"], None), (["+5", "5"], None),
    (["a-5", "a5"], None), (["abc", "abd"], None), (["12", "1 "], None), (["0", "00"], None),
    (["a5", "a-5"], None), (["i10", "i0x1F"], None), (["1000", "0x1F"], None),
    (["u12", "u+5"], None), (["x00", "x0x"], None),
    (["1234567890123456789"], ("", True, None)),  # 19 digits: the signed reading holds it
    (["12345678901234567890"], None),  # past int64
])
def test_numbered_ids(ids, reading):
    found = numbered_ids(pa.array(ids))
    if reading is None:
        assert found is None
        return
    assert (found.prefix, found.canonical, found.width) == reading
    assert found.text(found.values).to_pylist() == ids  # the ids as written, back


def _string_path(monkeypatch):
    monkeypatch.setattr(encode, "_numbered_columns", lambda columns: None)


def _same_as_text_path(cols, fast) -> None:
    """``fast`` (factorize's answer) equals the text path's: the same ids in byte order and
    the same codes."""
    original = encode._numbered_columns
    try:
        encode._numbered_columns = lambda columns: None
        slow = encode.factorize(*cols)
    finally:
        encode._numbered_columns = original
    assert fast[1].to_pylist() == slow[1].to_pylist()
    for x, y in zip(fast[0], slow[0], strict=True):
        assert x.tolist() == y.tolist()


@given(st.lists(st.one_of(st.integers(-(10**18), 10**18), st.integers(-(2**63), 2**63 - 1),
                          st.sampled_from([-(2**63), 2**63 - 1])), min_size=1, max_size=60),
       st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30))
def test_integer_codes_equal_text_codes(a, b):
    cols = [pa.chunked_array([pa.array([str(x) for x in a])]),
            pa.chunked_array([pa.array([str(x) for x in b], pa.string()).dictionary_encode()])]
    fast = encode.factorize(*cols)
    integers = encode._numbered_columns(cols)
    assert integers is not None
    _same_as_text_path(cols, fast)


@given(st.lists(st.tuples(st.integers(1, 18), st.booleans(), st.booleans(), st.integers(0, 99)),
                min_size=1, max_size=6), st.integers(0, 2**32))
def test_chunks_parsed_into_one_array_equal_the_text_path(parts, seed):
    """Chunks of any widths (one width or mixed, plain or dictionary), 32-bit ones before or
    after 64-bit ones: each parsed into its place in one array, widened when a later chunk
    needs 64 bits; the same codes and ids as the text path."""
    rng = np.random.default_rng(seed)
    chunks = []
    for width, mixed, dictionary, n in parts:
        high = 10**width
        numbers = rng.integers(high // 10 if width > 1 else 0, high, n + 1)
        if mixed:
            numbers = numbers // rng.integers(1, 1000, n + 1)
        chunk = pa.array([str(int(x)) for x in numbers])
        chunks.append(chunk.dictionary_encode() if dictionary else chunk)
    plain = [c for c in chunks if not pa.types.is_dictionary(c.type)]
    coded = [c for c in chunks if pa.types.is_dictionary(c.type)]
    cols = [pa.chunked_array(plain, pa.string()), pa.chunked_array(coded or [
        pa.array(["1"]).dictionary_encode()])]
    fast = encode.factorize(*cols)
    assert encode._numbered_columns(cols) is not None
    _same_as_text_path(cols, fast)


ID_FORMATS = st.sampled_from([
    lambda n: str(n), lambda n: f"tt{n:07d}", lambda n: f"D{n}", lambda n: f"u{n:03d}",
    lambda n: f"{n:05d}", lambda n: f"user_{n}", lambda n: f"x{n}y", lambda n: f"-{n}",
])


@given(st.lists(st.tuples(ID_FORMATS, st.integers(0, 10**6)), min_size=1, max_size=50),
       st.integers(0, 3))
def test_mixed_id_formats_give_the_text_codes(ids, split):
    """Whatever mix of formats (one reading or several, which must stay text), the codes
    and ids are those of the text path."""
    text = [fmt(n) for fmt, n in ids]
    cols = [pa.chunked_array([pa.array(text[:split], pa.string()),
                              pa.array(text[split:], pa.string())]),
            pa.chunked_array([pa.array(text[::-1], pa.string()).dictionary_encode()])]
    fast = encode.factorize(*cols)
    _same_as_text_path(cols, fast)


INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([-(2**63), 2**63 - 1]))


# values whose digits pad to the same 19 places ("1", "10", "100", "-2", "-20"): the length
# breaks those ties
TIED_DIGITS = st.builds(lambda d, k, sign: sign * d * 10**k, st.integers(1, 9),
                        st.integers(0, 18), st.sampled_from([1, -1]))


@given(st.sets(st.one_of(INT64, TIED_DIGITS, st.integers(-1000, 1000)), min_size=1,
               max_size=200))
def test_text_order_is_byte_order(values):
    v = np.array(sorted(values), dtype=np.int64)
    order = number_text.text_order(v)
    got = v if order is None else v[order]
    assert [str(x) for x in got] == sorted((str(x) for x in v), key=lambda s: s.encode())


def _data(rng, ids_for):
    rows = []
    for u in range(40):
        items = rng.choice(60, size=int(rng.integers(1, 12)), replace=False)
        rows += [(ids_for("u", u), ids_for("i", i), r + 1, float(rng.integers(0, 5)))
                 for r, i in enumerate(items)]
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "rank", "score"])
    truth_rows = [(ids_for("u", u), ids_for("i", int(i)), int(rng.integers(0, 4)))
                  for u in range(45) for i in rng.choice(60, size=4, replace=False)]
    truth = pd.DataFrame(truth_rows, columns=["user_id", "item_id", "relevance"])
    return preds.drop(columns="rank"), truth  # ordered by score: ties broken by item id


def _hashed(kind: str, n: int) -> str:
    """A 64-bit hash of n, the int64 extremes among them (n = 0, 1)."""
    if n < 2:
        return str([-(2**63), 2**63 - 1][n])
    v = (int(n) * 0x9E3779B97F4A7C15 + (kind == "u")) % 2**64
    return str(v - 2**64 if v >= 2**63 else v)


@pytest.mark.parametrize("style", ["plain", "wide", "negative", "mixed_lengths", "padded",
                                   "prefixed", "hashed", "spaced"])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_integer_path_gives_the_string_paths_tables(tmp_path, monkeypatch, style, fmt):
    ids = {"plain": lambda kind, n: str(n + 1),
           "wide": lambda kind, n: str(4_000_000_000 + n * 977_000_003),  # sparse: hashed
           "hashed": _hashed,
           "negative": lambda kind, n: str(n - 30),
           "mixed_lengths": lambda kind, n: str(10 ** (n % 7) + n),
           "padded": lambda kind, n: f"{kind}{n:07d}",  # tt0111161
           "prefixed": lambda kind, n: f"{kind.upper()}{n * 37}",  # D1555982
           # whitespace before every item id (reported as padded), their text unwritten
           "spaced": lambda kind, n: f"{' ' if kind == 'i' else ''}{kind}{n}"}[style]
    preds, truth = _data(np.random.default_rng(3), ids)
    p, t = tmp_path / f"p.{fmt}", tmp_path / f"t.{fmt}"
    for frame, path in ((preds, p), (truth, t)):
        if fmt == "csv":
            frame.to_csv(path, index=False)
        elif style in ("padded", "prefixed", "spaced"):
            frame.to_parquet(path)
        else:  # integer-typed Parquet columns, as warehouses write them
            frame.assign(user_id=frame.user_id.astype("int64"),
                         item_id=frame.item_id.astype("int64")).to_parquet(path)
    metrics = "ndcg@5,map@10,mrr@3,recall@10,precision@5,hit_rate@1,item_coverage@10"
    calls = []
    original = encode._factorize_numbers
    monkeypatch.setattr(encode, "_factorize_numbers",
                        lambda *a: calls.append(1) or original(*a))
    fast = rankeval.evaluate(p, t, metrics=metrics)
    assert len(calls) == 2  # users and items both took the integer path
    _string_path(monkeypatch)
    slow = rankeval.evaluate(p, t, metrics=metrics)
    pd.testing.assert_frame_equal(fast.per_user, slow.per_user)
    assert fast.metrics == slow.metrics and fast.notices == slow.notices
    assert fast.per_user.user_id.tolist() == slow.per_user.user_id.tolist()
    assert any(n.code == "padded_ids" for n in fast.notices) == (style == "spaced")


@given(st.integers(1, 18).flatmap(lambda w: st.tuples(
    st.just(w), st.lists(st.integers(0, 10**w - 1), min_size=1, max_size=40))),
    st.sampled_from(["", "u", "tt", "é"]), st.integers(0, 10**6), st.sampled_from("/:x -+a0"))
def test_ids_of_one_width_read_as_their_numbers(case, prefix, where, byte):
    """Ids of one length are read as a byte matrix, column by column: the same numbers,
    width and canonical flag as the text says; one byte that is not a digit, anywhere in
    the digits, and they stay text."""
    width, numbers = case
    ids = [f"{prefix}{n:0{width}d}" for n in numbers]
    found = numbered_ids(pa.array(ids))
    assert found is not None and found.prefix == prefix and found.width == width
    assert found.values.tolist() == numbers
    assert found.canonical == (width == 1 or min(numbers) >= 10 ** (width - 1))
    assert found.text(found.values).to_pylist() == ids
    row, column = where % len(ids), len(prefix) + where % width
    bad = ids[row][:column] + byte + ids[row][column + 1 :]
    if byte != "0" and byte != ids[row][column]:
        changed = numbered_ids(pa.array([*ids[:row], bad, *ids[row + 1 :]]))
        assert changed is None or changed.prefix != prefix, bad


@given(st.integers(0, 2**63 - 1), st.sampled_from(["0x", "0X", "-0x"]), st.booleans())
def test_hexadecimal_ids_are_never_integers(n, prefix, upper):
    """Arrow's integer cast reads "0xFFFFF" as 1048575, as many digits as the id has bytes:
    neither the signed reading nor the numbered one may take it for that integer."""
    digits = f"{n:X}" if upper else f"{n:x}"
    text = prefix + digits
    assert integer_ids(pa.array([str(n), text])) is None
    assert numbered_ids(pa.array([str(n), text])) is None


def test_ids_that_look_numeric_stay_text(write):
    """007 and 7, -0 and 0, +5 and 5, 1e3 and 1000, 0xFFFFF and 1048575 are different ids,
    shown as written."""
    pairs = [("007", "7"), ("-0", "0"), ("+5", "5"), ("1e3", "1000"), ("0xFFFFF", "1048575")]
    rows, truth = [], []
    for a, b in pairs:
        rows += [(a, "10", 1), (a, "20", 2), (b, "20", 1), (b, "10", 2)]
        truth += [(a, "10", 1), (b, "10", 1)]
    p = write("p.csv", pd.DataFrame(rows, columns=["user_id", "item_id", "rank"]))
    t = write("t.csv", pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))
    ev = rankeval.evaluate(p, t, metrics="mrr@2")
    got = dict(zip(ev.per_user.user_id, ev.per_user["mrr@2"], strict=True))
    for a, b in pairs:
        assert got[a] == 1.0 and got[b] == 0.5, (a, b)
    assert ev.users.evaluated == 2 * len(pairs)


def test_a_late_non_canonical_id_falls_back_to_text(write, monkeypatch):
    """The reader's look at the file's head says integers; a '007' after it is still its own id."""
    n = 400_000  # past the head the reader looks at, in a file big enough to be looked at
    users = [str(i) for i in range(n)] + ["007"]
    preds = pd.DataFrame({"user_id": users, "item_id": "5", "rank": 1})
    truth = pd.DataFrame({"user_id": ["007", "7"], "item_id": ["5", "5"], "relevance": [1, 1]})
    p, t = write("p.csv", preds), write("t.csv", truth)
    assert p.stat().st_size > delimited._SMALL
    ev = rankeval.evaluate(p, t, metrics="hit_rate@1")
    assert dict(zip(ev.per_user.user_id, ev.per_user["hit_rate@1"], strict=True)) == \
        {"7": 1.0, "007": 1.0}
    assert ev.users.only_in_predictions == n - 1
    _string_path(monkeypatch)
    assert rankeval.evaluate(p, t, metrics="hit_rate@1").per_user.equals(ev.per_user)


@pytest.mark.parametrize("user", [str, lambda n: f"u{n:07d}"])
def test_numbered_ids_are_read_as_plain_text_however_often_they_repeat(write, user):
    """Hashing every row into a dictionary per block while parsing costs more than reading
    numbers afterwards, even for users with many rows each; text ids keep the dictionary."""
    from rankeval.io.load import open_input

    n = 400_000  # past the head the reader looks at, in a file big enough to be looked at
    preds = pd.DataFrame({"user_id": [user(i // 20) for i in range(n)],
                          "item_id": [f"item-{'abc'[i % 3]}" for i in range(n)], "rank": 1})
    path = write("p.csv", preds)
    assert path.stat().st_size > delimited._SMALL
    table = open_input(str(path), "predictions").read(
        {"user_id": ID, "item_id": ID, "rank": pa.int64()})
    assert table.column("user_id").type == pa.string()
    assert pa.types.is_dictionary(table.column("item_id").type)
    assert table.column("user_id").to_pylist() == preds["user_id"].tolist()


@pytest.mark.parametrize("gzipped", [False, True])
def test_spread_numbers_that_do_not_repeat_are_read_as_plain_text(write, gzipped):
    """Numbered ids spread wider than direct addressing codes that do not repeat in the
    reader's look (a catalog drawn uniformly) would leave block dictionaries as long as the
    blocks: they are read as plain text and hashed once; the answers are the text path's."""
    from rankeval.io.load import open_input

    rng = np.random.default_rng(5)
    n = 300_000
    items = rng.choice(10**12, n, replace=False)
    preds = pd.DataFrame({"user_id": [str(i // 20) for i in range(n)],
                          "item_id": [str(x) for x in items],
                          "rank": np.tile(np.arange(1, 21), n // 20)})
    truth = preds.iloc[::7][["user_id", "item_id"]].assign(relevance=1)
    p, t = write("p.csv", preds), write("t.csv", truth)
    assert p.stat().st_size > delimited._SMALL
    path = write("p.csv.gz", gzip.compress(p.read_bytes(), compresslevel=1)) if gzipped else p
    read = open_input(str(path), "predictions").read(
        {"user_id": ID, "item_id": ID, "rank": pa.int64()})
    assert read.column("item_id").type == pa.string()
    assert read.column("item_id").to_pylist() == preds["item_id"].tolist()
    ev = rankeval.evaluate(str(path), t, metrics=["ndcg@10", "map@5"])
    text = rankeval.evaluate(preds.assign(item_id="i" + preds["item_id"]),
                             truth.assign(item_id="i" + truth["item_id"]),
                             metrics=["ndcg@10", "map@5"])
    assert ev.metrics == text.metrics


def test_numbers_too_spread_to_address_are_read_as_dictionaries(write, monkeypatch):
    """Numbered ids spread wider than direct addressing codes (64-bit hashes) that repeat
    would be hashed row by row after the parse: the reader's dictionary hashes each block
    while parsing, and only each block's distinct ids are parsed and coded (never one per
    row); ids direct addressing codes stay plain text. The answers are the text path's."""
    from rankeval.io.load import open_input

    rng = np.random.default_rng(3)
    hashes = rng.integers(-(2**63), 2**63 - 1, 30_000, dtype=np.int64)
    n = 300_000
    preds = pd.DataFrame({"user_id": [str(i // 20) for i in range(n)],
                          "item_id": [str(hashes[i % 1000 + i // 100_000 * 1000])
                                      for i in range(n)],
                          "rank": np.tile(np.arange(1, 21), n // 20)})
    truth = pd.DataFrame({"user_id": [str(i // 3) for i in range(30_000)],
                          "item_id": [str(hashes[i % 3 * 10_000 + i // 3 % 10_000])
                                      for i in range(30_000)],
                          "relevance": rng.integers(0, 3, 30_000)})
    p, t = write("p.csv", preds), write("t.csv", truth)
    assert p.stat().st_size > delimited._SMALL
    # gzip: the file's size is unknown, and so its rows: the rule still tells hashes apart
    zipped = write("p.csv.gz", gzip.compress(p.read_bytes(), compresslevel=1))
    for path in (zipped, p):
        read = open_input(str(path), "predictions").read(
            {"user_id": ID, "item_id": ID, "rank": pa.int64()})
        assert read.column("user_id").type == pa.string()
        assert pa.types.is_dictionary(read.column("item_id").type)
    dictionaries = sum(len(chunk.dictionary) for chunk in read.column("item_id").chunks)
    assert dictionaries < n
    coded = []

    def spy(values, order=None):
        coded.append(len(values))
        return dense_codes(values, order)

    monkeypatch.setattr(encode, "dense_codes", spy)
    ev = rankeval.evaluate(p, t, metrics=["ndcg@10", "map@5"])
    assert dictionaries + len(truth) in coded  # the items: the dictionaries and the truth's rows
    assert n + len(truth) in coded  # the users: a number per row
    _string_path(monkeypatch)
    text = rankeval.evaluate(p, t, metrics=["ndcg@10", "map@5"])
    pd.testing.assert_frame_equal(ev.per_user, text.per_user)
    assert ev.metrics == text.metrics


@given(st.lists(st.integers(-5, 40), max_size=80))
def test_sort_based_distinct_helpers_match_numpy(values):
    """distinct.py's distinct/count/first/inverse replace np.unique (hash-based and slow on
    millions of values in numpy 2.4): same answers."""
    a = np.array(values, dtype=np.int64)
    assert distinct.distinct(a).tolist() == np.unique(a).tolist()
    assert distinct.count_distinct(a) == distinct.count_distinct(np.sort(a)) == len(np.unique(a))
    assert distinct.first_index(a).tolist() == np.unique(a, return_index=True)[1].tolist()
    d2, inv2 = np.unique(a / 3, return_inverse=True)
    for runs in (True, False):  # a merge sort or a quicksort: the same answer
        d, inv = distinct.with_inverse(a / 3, runs=runs)
        assert d.tolist() == d2.tolist() and inv.tolist() == inv2.tolist()


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=200),
       st.sampled_from([np.int8, np.int32, np.int64, np.uint32, np.uint64]),
       st.sampled_from(["spread", "neighbours", "clustered"]))
def test_with_inverse_of_integers_equals_numpy_unique(values, dtype, shape):
    """Integers are ordered by one sort of their high bits packed above their positions
    (``distinct._packed_order``): numpy's unique whatever the type, the extremes, values one
    apart that share their kept bits (in either order), or a cluster beside far values."""
    info = np.iinfo(dtype)
    values = [info.min + (v - info.min) % (int(info.max) - info.min + 1) for v in values]
    if shape == "neighbours":  # now and then a neighbour one apart, before or after
        values = [max(info.min, min(int(info.max), values[k - 1] + (1 if k % 2 else -1)))
                  if k % 5 == 4 else v for k, v in enumerate(values)]
    if shape == "clustered":
        values = [info.min + v % 7 if k % 4 else v for k, v in enumerate(values)]
    a = np.array(values, dtype=dtype)
    expected, inverse = np.unique(a, return_inverse=True)
    for runs in (True, False):
        d, inv = distinct.with_inverse(a.copy(), runs=runs)
        assert d.dtype == a.dtype
        assert d.tolist() == expected.tolist() and inv.tolist() == inverse.tolist()


def test_packed_order_sorts_or_declines_values_that_share_their_kept_bits():
    """Two 64-bit values one apart share the high bits the packing keeps when the span is
    wide: in position order they come out sorted (kept) or not (declined: argsort answers);
    either way with_inverse is numpy's unique."""
    wide = np.array([-(2**63), 2**63 - 1, 10, 11], dtype=np.int64)
    assert distinct._packed_order(wide).tolist() == [0, 2, 3, 1]
    swapped = np.array([-(2**63), 2**63 - 1, 11, 10], dtype=np.int64)
    assert distinct._packed_order(swapped) is None
    d, inv = distinct.with_inverse(swapped)
    assert d.tolist() == sorted(swapped.tolist()) and inv.tolist() == [0, 3, 2, 1]


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60), st.integers(0, 60),
       st.integers(0, 59))
def test_any_repeated_equals_counting_distinct_values(values, n, repeated):
    """The hash table's answer is exact whatever the keys: any 64-bit values; and keys that
    all hash to one slot (the hash inverted), so that equal keys lose it to another and only
    the sort of the losers can find them, with and without a repeat."""
    inverse = pow(int(distinct._GOLDEN), -1, 2**64)
    keys = np.array([(low * inverse) % 2**64 for low in range(n + 1)], dtype=np.uint64)
    one_slot, last = keys.view(np.int64)[:n], keys.view(np.int64)[n:]
    # a repeat, then a key written after it: the slot is left to another key than the pair
    with_repeat = np.concatenate((one_slot, one_slot[repeated:][:1], last))
    for keys in (np.array(values, dtype=np.int64), one_slot, with_repeat):
        expected = len(np.unique(keys)) < len(keys)
        assert distinct.any_repeated(keys) is expected


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 9)), max_size=60))
def test_present_codes_are_every_code_seen_in_runs_or_not(runs):
    """``present`` marks codes from each run's first row when runs are long, from every row
    when not: the codes seen either way, as a scatter of every row marks them."""
    codes = np.repeat(np.array([c for c, _ in runs], dtype=np.int32),
                      [n for _, n in runs]) if runs else np.zeros(0, dtype=np.int32)
    for values in (codes, codes[::-1].copy(), np.sort(codes)):
        expected = np.zeros(41, dtype=bool)
        expected[values] = True
        assert distinct.present(values, 41).tolist() == expected.tolist()


@pytest.mark.parametrize("write", [str, lambda n: f"{n:08d}", lambda n: f"item_{n}"])
@pytest.mark.parametrize("span", [300_000, 10**12])  # direct addressing; hashing
def test_numbered_columns_at_scale_equal_the_text_path(write, span):
    """Past the two-thread split (several chunks read in parallel, codes gathered in two
    halves, in place): the same codes and ids as the text path."""
    rng = np.random.default_rng(7)
    numbers = rng.integers(0, span, 250_000)
    text = [write(int(n)) for n in numbers]
    cols = [pa.chunked_array([pa.array(text[:40_000]), pa.array(text[40_000:90_000]),
                              pa.array(text[90_000:])]),
            pa.chunked_array([pa.array(text[::-3]).dictionary_encode(),
                              pa.array(text[::7]).dictionary_encode()])]
    fast = encode.factorize(*cols)
    assert encode._numbered_columns(cols) is not None
    _same_as_text_path(cols, fast)


def _unique(array: np.ndarray, order) -> tuple[np.ndarray, np.ndarray]:
    """numpy's distinct values and inverse, the distinct values then permuted by ``order``
    (``number_text.text_order``: the byte order of their text) and the inverse renumbered."""
    expected, inverse = np.unique(array, return_inverse=True)
    perm = None if order is None else order(expected.astype(np.int64))
    if perm is None:
        return expected, inverse
    rank = np.empty(len(perm), dtype=np.int64)
    rank[perm] = np.arange(len(perm))
    return expected[perm], rank[inverse]


# the rows' codes in the order of the values, or of their text
BY_TEXT = [None, number_text.text_order]


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=80),
       st.sampled_from([np.int32, np.int64]), st.booleans(), st.sampled_from(BY_TEXT),
       st.integers(1, 6))
def test_dense_codes_equal_numpy_unique(values, dtype, dense, order, run):
    """Every reading (direct addressing over a small span, hashing over a wide one, and from
    the runs' first values when each value comes ``run`` times in a row, 4 or more)."""
    if dtype == np.int32 or dense:
        values = [v % 1000 - 500 for v in values]
    array = np.repeat(np.array(values, dtype=dtype), run)
    found, codes = dense_codes(array.copy(), order)
    expected, inverse = _unique(array, order)
    assert found.tolist() == expected.tolist() and codes.tolist() == inverse.tolist()
    assert codes.dtype == np.int32


@pytest.mark.parametrize("dtype, span", [(np.int32, "rows"), (np.int64, "rows"),
                                         (np.int32, "20x"), (np.int64, "20x"),
                                         (np.int64, "int64")])
@pytest.mark.parametrize("order", BY_TEXT, ids=["by value", "by text"])
def test_dense_codes_at_scale_equal_numpy_unique(dtype, span, order):
    """Past the two-core split, Zipf-popular ids: direct addressing (a span like the rows),
    hashing (20 times wider; 64-bit hashes with both extremes and negatives)."""
    rng = np.random.default_rng(3)
    n, items = 300_000, 60_000
    popular = (np.minimum(rng.zipf(1.1, n), items) - 1) * 7919 % items
    if span == "int64":
        pool = rng.integers(-(2**63), 2**63 - 1, items, dtype=np.int64, endpoint=True)
        pool[:2] = [-(2**63), 2**63 - 1]
        popular[:2] = [0, 1]
    else:
        width = items if span == "rows" else 20 * n
        pool = rng.choice(width, items, replace=False) - width // 3
    array = pool[popular].astype(dtype)
    found, codes = dense_codes(array.copy(), order)
    expected, inverse = _unique(array, order)
    assert np.array_equal(found, expected) and np.array_equal(codes, inverse)
    assert codes.dtype == np.int32


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=300),
       st.sampled_from([np.int32, np.int64]), st.sampled_from(BY_TEXT),
       st.sampled_from(["spread", "clustered", "neighbours"]))
def test_sorted_codes_equal_numpy_unique(values, dtype, order, shape):
    """Coding by sorting (rows ordered by their values' high bits packed above the row
    numbers): the distinct values and codes of numpy's unique, whatever the spread or the
    extremes, with values that share their high bits (a neighbour one apart among spread
    values) or a few far values beside a cluster."""
    from rankeval.io import codes as coding

    if dtype == np.int32:
        values = [v % 2**32 - 2**31 for v in values]
    if shape == "clustered":  # most values in a narrow range, a few far away
        values = [v % 50 if k % 9 else v for k, v in enumerate(values)]
    if shape == "neighbours":  # now and then the value before's neighbour, one apart
        values = [values[k - 1] ^ 1 if k % 20 == 19 else v for k, v in enumerate(values)]
    array = np.array(values, dtype=dtype)
    found, codes = coding._sorted(array.copy(), int(array.min()), order)
    expected, inverse = _unique(array, order)
    assert found.tolist() == expected.tolist() and codes.tolist() == inverse.tolist()
    assert codes.dtype == np.int32


@pytest.mark.parametrize("shape", ["neighbours", "clustered"])
def test_sorted_codes_tell_apart_values_that_share_their_high_bits(monkeypatch, shape):
    """64-bit values one apart share the high bits the keys keep: a few such rows are coded
    one by one (no hashing), many (a cluster beside far values) hand the column to hashing;
    either way the codes are numpy's unique."""
    from rankeval.io import codes as coding

    hashed = []
    real = coding._hashed
    monkeypatch.setattr(coding, "_hashed", lambda *a: (hashed.append(1), real(*a))[1])
    rng = np.random.default_rng(5)
    n = 100_000
    array = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    if shape == "neighbours":
        array[1::50] = array[::50][: len(array[1::50])] ^ 1
    else:
        array[: n // 2] = rng.integers(0, 1_000, n // 2)
    found, codes = coding._sorted(array.copy(), int(array.min()))
    expected, inverse = np.unique(array, return_inverse=True)
    assert np.array_equal(found, expected) and np.array_equal(codes, inverse)
    assert hashed == ([] if shape == "neighbours" else [1])
    if shape == "neighbours":  # the case is the one named: runs several values share
        bits = (n - 1).bit_length()
        kept = (array.view(np.uint64) - np.uint64(int(array.min()) % 2**64)) >> np.uint64(bits)
        assert len(np.unique(kept)) < len(expected)


@pytest.mark.parametrize("order", BY_TEXT, ids=["by value", "by text"])
@pytest.mark.parametrize("kind", ["uniform hashes", "uniform sparse", "zipf hashes"])
def test_dense_codes_of_many_distinct_values_equal_numpy_unique(monkeypatch, order, kind):
    """Values with many distinct ones (estimated from a sample) are coded by sorting, others
    hashed: both give numpy's unique, and each is chosen where it should be."""
    from rankeval.io import codes as coding

    monkeypatch.setattr(coding, "_SORT_ROWS", 20_000)
    monkeypatch.setattr(coding, "_SAMPLE", 4_096)
    chosen = []
    for name in ("_sorted", "_hashed"):
        real = getattr(coding, name)
        monkeypatch.setattr(coding, name, lambda *a, real=real, name=name: (
            chosen.append(name), real(*a))[1])
    rng = np.random.default_rng(11)
    n = 200_000
    if kind == "uniform hashes":
        array = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    elif kind == "uniform sparse":
        array = rng.integers(0, 10**11, n)
    else:
        pool = rng.integers(-(2**63), 2**63 - 1, 5_000, dtype=np.int64)
        array = pool[np.minimum(rng.zipf(1.3, n), 5_000) - 1]
    found, codes = dense_codes(array.copy(), order)
    expected, inverse = _unique(array, order)
    assert np.array_equal(found, expected) and np.array_equal(codes, inverse)
    assert chosen == (["_hashed"] if kind == "zipf hashes" else ["_sorted"])


@pytest.mark.parametrize(("n", "distinct", "way"), [
    (300_000, 150_000, "_sorted"),  # a run's user ids from block dictionaries: half distinct
    (300_000, 60_000, "_sorted"),  # one per 5 rows
    (300_000, 15_000, "_hashed"),  # one per 20 rows: the table fits the cache
    (50_000, 50_000, "_hashed"),  # under the sample's size: milliseconds either way
    (2_000_000, 125_000, "_sorted"),  # one per 16 rows, past a million: the 24-row rule
    (2_000_000, 40_000, "_hashed")])
def test_fewer_than_a_million_values_are_sorted_from_a_distinct_one_per_8_rows(
        monkeypatch, n, distinct, way):
    """Under ``_SORT_ROWS`` rows, values with a distinct one per 8 rows or more are sorted
    (2-3x faster than hashing when half of them are distinct), fewer hashed; from a million
    rows the rule is one per 24. Both ways give numpy's unique."""
    from rankeval.io import codes as coding

    chosen = []
    for name in ("_sorted", "_hashed"):
        real = getattr(coding, name)
        monkeypatch.setattr(coding, name, lambda *a, real=real, name=name: (
            chosen.append(name), real(*a))[1])
    rng = np.random.default_rng(n + distinct)
    pool = rng.integers(-(2**63), 2**63 - 1, distinct, dtype=np.int64)
    array = pool[rng.integers(0, distinct, n)]
    found, codes = dense_codes(array.copy())
    expected, inverse = _unique(array, None)
    assert np.array_equal(found, expected) and np.array_equal(codes, inverse)
    assert chosen == [way]


@pytest.mark.parametrize("typ", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
                                 pa.uint32(), pa.uint64()])
@pytest.mark.parametrize("spread", [1, 10**6, 2**62])
def test_integer_id_columns_read_as_their_text(typ, spread):
    """Integer ids (Parquet, DataFrames) stay integers (int64; unsigned ones past 2^63 become
    text): the same ids, row for row, as casting each to text."""
    rng = np.random.default_rng(spread)
    info = np.iinfo(typ.to_pandas_dtype())
    values = rng.integers(max(info.min, -spread), min(info.max, spread), 500, endpoint=True)
    if typ == pa.uint64() and spread == 2**62:
        values = values.astype(np.uint64) + np.uint64(2**63)  # past int64: cast as it is
    column = pa.chunked_array([pa.array(values[:200], typ), pa.array(values[200:], typ)])
    read = cast_columns(pa.table({"id": column}), {"id": ID}, "f.parquet").column("id")
    assert read.cast(pa.string()).to_pylist() == column.cast(pa.string()).to_pylist()


@pytest.mark.parametrize("typ", [pa.int8(), pa.int32(), pa.int64(), pa.uint32()])
def test_integer_ids_are_written_into_the_callers_array(typ):
    """Integers that fit 32 bits are copied straight into the caller's slice (no array of
    their own, then a second copy); wider ones come back in an int64 array of their own and
    leave the slice alone."""
    info = np.iinfo(typ.to_pandas_dtype())
    values = np.array([max(int(info.min), -(2**31)), 0 if info.min < 0 else 1,
                       min(int(info.max), 2**31 - 1)])
    out = np.full(3, -7, dtype=np.int32)
    found = numbered_ids(pa.array(values, typ), out)
    assert found is not None and found.values is out
    assert out.tolist() == [int(v) for v in values]
    wide = numbered_ids(pa.array([2**31, 5], pa.int64()), out)
    assert wide is not None and wide.values is not out and wide.values.dtype == np.int64
    assert wide.values.tolist() == [2**31, 5] and out.tolist() == [int(v) for v in values]


INTEGER_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
                 pa.uint32(), pa.uint64()]


@given(st.sampled_from(INTEGER_TYPES), st.lists(st.integers(0, 2**64 - 1), min_size=1,
                                                max_size=60),
       st.lists(st.integers(0, 60), max_size=3), st.sampled_from(["int", "text", "dict"]),
       st.lists(INT64, max_size=30))
def test_integer_columns_factorize_as_their_text(typ, raw, cuts, other, more):
    """An integer-typed id column (any width, chunked anyhow; the int64 extremes and unsigned
    values past 2^63 among them), encoded beside another column of integers or of their text,
    gives the codes and ids that the same ids written as text give: no string per row, the
    same order semantics (#29)."""
    info = np.iinfo(typ.to_pandas_dtype())
    values = [info.min + v % (int(info.max) - int(info.min) + 1) for v in raw]
    bounds = sorted({0, len(values), *(c % (len(values) + 1) for c in cuts)})
    column = pa.chunked_array(
        [pa.array(values[a:b], typ) for a, b in itertools.pairwise(bounds)], typ)
    read = cast_columns(pa.table({"id": column}), {"id": ID}, "f.parquet").column("id")
    assert read.cast(pa.string()).to_pylist() == [str(v) for v in values]
    assert pa.types.is_integer(read.type) == (max(values) < 2**63)  # else text
    second = {"int": pa.chunked_array([pa.array(more, pa.int64())], pa.int64()),
              "text": pa.chunked_array([pa.array([str(v) for v in more], pa.string())]),
              "dict": pa.chunked_array([pa.array([str(v) for v in more]).dictionary_encode()])
              }[other]
    if max(values) < 2**63:  # the integer path is taken, with either kind of neighbour
        assert encode._numbered_columns([read, second]) is not None
    fast = encode.factorize(read, second)
    assert fast[1].to_pylist() == sorted({str(v) for v in values + more}, key=str.encode)
    _same_as_text_path([read.cast(pa.string()), second.cast(pa.string())], fast)


# Strings whose first 8 bytes often agree (shared prefixes, NUL bytes, short strings, UTF-8)
_TEXT = st.text(alphabet=st.sampled_from(["a", "b", "\x00", "\x01", "é", "😀", "-", "0"]),
                max_size=14)


@given(st.lists(_TEXT, unique=True, max_size=120), st.booleans(), st.integers(0, 3))
def test_prefix_sort_is_byte_order(values, large, offset):
    """``byte_order``'s prefix sort equals Arrow's sort of the bytes, for strings that tie on
    their first 8 bytes or end inside them, sliced arrays and large strings alike."""
    arr = pa.array(["pad"] * offset + values, pa.large_string() if large else pa.string())
    arr = arr.slice(offset)
    want = pc.sort_indices(arr).to_numpy()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encode, "_PREFIX_SORT", 0)
        got = encode.byte_order(arr)
    assert got.tolist() == want.tolist()


def test_prefix_sort_at_scale_is_byte_order():
    """UUID-like ids past the size the prefix sort starts at, with ties on 8 bytes."""
    rng = np.random.default_rng(5)
    ids = pa.array([f"{a:08x}-{b:012x}" for a, b in zip(rng.integers(0, 2**20, 40_000),
                                                         rng.integers(0, 2**47, 40_000),
                                                         strict=True)]).unique()
    assert len(ids) > encode._PREFIX_SORT
    assert encode.byte_order(ids).tolist() == pc.sort_indices(ids).to_numpy().tolist()


def test_no_ids_at_all_are_no_codes():
    """A chunk of users without training rows encodes an input of no chunks (a Spark or Ray
    partition's empty side): no codes, an empty dictionary, the other columns as usual."""
    empty = pa.chunked_array([], pa.string())
    (codes,), ids = encode.factorize(empty)
    assert codes.tolist() == [] and len(ids) == 0
    (a, b), ids = encode.factorize(empty, pa.chunked_array([pa.array(["x", "w", "x"])]))
    assert a.tolist() == [] and b.tolist() == [1, 0, 1] and ids.to_pylist() == ["w", "x"]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kind", ["runs", "runs-repeated", "short-runs", "one-run"])
@pytest.mark.parametrize("order", BY_TEXT, ids=["by value", "by text"])
def test_dense_codes_of_wide_values_in_runs_equal_numpy_unique(dtype, kind, order):
    """Wide values (past direct addressing) in runs, as a file's users come: coded run by
    run; a value in several runs, runs too short to pay, and a single run."""
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    heads = rng.integers(info.min, info.max, 20_000, dtype=dtype, endpoint=True)
    heads[:2] = [info.min, info.max]
    if kind == "runs-repeated":
        heads[rng.integers(0, len(heads), 3000)] = heads[:3000]
    lengths = {"short-runs": rng.integers(1, 3, len(heads)), "one-run": None}.get(
        kind, rng.integers(1, 60, len(heads)))
    array = np.full(500_000, heads[7]) if lengths is None else np.repeat(heads, lengths)
    array = array.astype(dtype)
    found, codes = dense_codes(array.copy(), order)
    expected, inverse = _unique(array, order)
    assert np.array_equal(found, expected) and np.array_equal(codes, inverse)
    assert codes.dtype == np.int32 and found.dtype == np.int64


def _written(n: int, how: int) -> str:
    """``n`` written canonically (0) or in one of the ways Arrow's cast also reads."""
    text = str(n)
    return [text, "0" + text.lstrip("-") if n >= 0 else "-0" + text[1:], "-0",
            f"0x{abs(n):x}", "00", "0"][how]


WRITINGS = st.sampled_from([0] * 12 + [1, 2, 3, 4, 5])  # mostly canonical


@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), WRITINGS), min_size=1, max_size=40),
       st.integers(0, 3), st.integers(1, 3))
def test_integer_ids_agree_with_python_on_every_writing(drawn, skip, pieces):
    """Against Python's own reading (``str(int(text)) == text``), over canonical integers to
    the int64 extremes and the writings Arrow's integer cast also takes (leading zeros,
    ``-0``, hexadecimal): in arrays that start inside their buffers and in chunked ones."""
    texts = [_written(n, how) for n, how in drawn]
    canonical = all(str(int(t, 0 if t.startswith("0x") else 10)) == t for t in texts)
    expected = [int(t) for t in texts] if canonical else None
    sliced = pa.array(["junk"] * skip + texts)[skip:]
    cut = [len(texts) * i // pieces for i in range(pieces + 1)]
    chunked = pa.chunked_array([sliced[a:b] for a, b in itertools.pairwise(cut) if b > a])
    for values in (sliced, chunked):
        found = integer_ids(values)
        assert (None if found is None else found.tolist()) == expected, texts


def test_the_bit_count_without_numpy_2_counts_alike(monkeypatch):
    """Direct addressing counts the bits below each id's; on numpy before 2.0 (which the
    requirements admit) the count is a byte table's, equal to numpy's own on every word."""
    from rankeval.io.codes import popcount

    rng = np.random.default_rng(7)
    words = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64, endpoint=True)
    words[:4] = [0, 1, 2**63, 2**64 - 1]
    expected = [bin(int(w)).count("1") for w in words]
    assert popcount(words).tolist() == expected
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert popcount(words).tolist() == expected
    found, codes = dense_codes(np.array([5, 3, 5, 130, 3, 64], dtype=np.int64))
    assert found.tolist() == [3, 5, 64, 130] and codes.tolist() == [1, 0, 1, 3, 0, 2]
