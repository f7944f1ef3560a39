"""Text ids of one byte length (UUIDs, hex digests, ASINs) are coded by mixing their bytes into
numbers, then checking every id against its code's id; the answer must be Arrow's string
hash's, exactly, whatever the numbers do (#49)."""

from __future__ import annotations

import itertools
import uuid

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankeval.io import encode, one_width

# one-byte characters (NUL and DEL among them) and two-byte ones: ids of one byte length
ONE_BYTE = st.sampled_from(["a", "b", "Z", "0", "9", "-", "\x00", "\x7f", " "])
TWO_BYTES = st.sampled_from(["é", "ß", "ж"])


def _arrow_path(columns: list[pa.ChunkedArray], monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(one_width, "coded", lambda values: None)
        return encode.factorize_list(list(columns))


def _spy(monkeypatch, module, name: str, answered) -> list[bool]:
    """``answered(argument, result)`` of each call of ``module.name`` (of one argument)."""
    taken: list[bool] = []
    original = getattr(module, name)

    def spy(argument):
        found = original(argument)
        taken.append(answered(argument, found))
        return found

    monkeypatch.setattr(module, name, spy)
    return taken


def _spied(monkeypatch) -> list[bool]:
    """Whether each call of the one-width path answered (True) or left it to Arrow."""
    return _spy(monkeypatch, one_width, "coded", lambda values, found: found is not None)


def _assert_same(fast, slow) -> None:
    assert fast[1].to_pylist() == slow[1].to_pylist()
    for x, y in zip(fast[0], slow[0], strict=True):
        assert x.tolist() == y.tolist()


def _columns(ids: list[str], cuts: list[int], dictionary: bool) -> list[pa.ChunkedArray]:
    """The ids cut into chunks (plain text, or per-chunk dictionaries as the CSV reader makes
    them), split between two columns."""
    bounds = sorted({0, len(ids), *(c % (len(ids) + 1) for c in cuts)})
    chunks = [pa.array(ids[a:b], pa.string()) for a, b in itertools.pairwise(bounds)]
    if dictionary:
        chunks = [c.dictionary_encode() for c in chunks]
    half = len(chunks) // 2
    typ = chunks[0].type
    return [pa.chunked_array(chunks[:half], typ), pa.chunked_array(chunks[half:], typ)]


@st.composite
def _one_width_ids(draw):
    width = draw(st.integers(1, 20))
    pool = draw(st.lists(st.text(ONE_BYTE, min_size=width, max_size=width), min_size=1,
                         max_size=12))
    if width % 2 == 0:  # the same byte length, in characters of two bytes
        pool += draw(st.lists(st.text(TWO_BYTES, min_size=width // 2, max_size=width // 2),
                              max_size=4))
    return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=80))


@settings(max_examples=150)
@given(_one_width_ids(), st.lists(st.integers(0, 80), max_size=6), st.booleans(),
       st.sampled_from(["mixed", "zero", "first word"]), st.integers(1, 9))
def test_one_width_ids_code_as_arrows_hash_whatever_the_numbers(ids, cuts, dictionary, mix,
                                                                batch):
    """Any ids of one byte length (NUL, DEL, spaces, two-byte characters), chunked anyhow, as
    text or per-chunk dictionaries, in batches of any size across the chunks: the codes and
    ids are Arrow's. With the real mixing the
    path answers; with numbers that collide (all zero, or only the first 8 bytes) the
    check finds it and Arrow's hash answers, unless the numbers could not merge two ids."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(one_width, "_ONE_WIDTH_ROWS", 0)
        monkeypatch.setattr(one_width, "_BATCH_ROWS", batch)
        monkeypatch.setattr(encode, "_numbered_columns", lambda columns: None)  # digits too
        monkeypatch.setattr(one_width, "_KEY_BITS", -1)  # no id held whole by a key: the hash
        if mix == "zero":
            monkeypatch.setattr(one_width, "_mixed", lambda words: np.zeros(len(words), np.uint64))
        elif mix == "first word":
            monkeypatch.setattr(one_width, "_mixed", lambda words: words[:, 0].copy())
        columns = _columns(ids, cuts, dictionary)
        slow = _arrow_path(columns, monkeypatch)
        taken = _spied(monkeypatch)
        fast = encode.factorize_list(list(columns))
    _assert_same(fast, slow)
    distinct = sorted(set(ids))
    heads = {i.encode()[:8] for i in distinct}
    if mix == "mixed":
        assert taken == [True]
    elif mix == "zero":
        assert taken == [len(distinct) == 1]
    else:  # only ids sharing their first 8 bytes collide, and they exist only past 8 bytes
        assert taken == [len(heads) == len(distinct)]


def test_ids_of_several_lengths_are_left_to_arrow(monkeypatch):
    monkeypatch.setattr(one_width, "_ONE_WIDTH_ROWS", 0)
    ids = ["ab", "abc", "ab", "x"]
    columns = _columns(ids, [2], False)
    slow = _arrow_path(columns, monkeypatch)
    taken = _spied(monkeypatch)
    _assert_same(encode.factorize_list(list(columns)), slow)
    assert taken == [False]


@pytest.mark.parametrize("dictionary", [True, False])
def test_uuids_at_scale_code_as_arrows_hash(monkeypatch, dictionary):
    """600,000 UUID rows over 50,000 distinct, in chunks of 7,000 as the CSV reader's blocks:
    the path answers (no test threshold lowered), and its answer is Arrow's."""
    rng = np.random.default_rng(49)
    pool = [str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**62, 50_000)]
    ids = [pool[i] for i in rng.integers(0, len(pool), 600_000)]
    columns = _columns(ids, list(range(7_000, 600_000, 7_000)), dictionary)
    slow = _arrow_path(columns, monkeypatch)
    taken = _spied(monkeypatch)
    _assert_same(encode.factorize_list(list(columns)), slow)
    assert taken == [True]


def _key_bits(ids: list[str]) -> int:
    """The bits a key needs to hold these ids whole, counted byte by byte: per position, up
    to the highest bit in which some id's byte differs from the first id's."""
    raw = [i.encode() for i in ids]
    return sum(max(b[p] ^ raw[0][p] for b in raw).bit_length() for p in range(len(raw[0])))


@settings(max_examples=150)
@given(_one_width_ids(), st.lists(st.integers(0, 80), max_size=6), st.booleans(),
       st.integers(1, 9))
def test_ids_held_whole_by_a_key_code_as_arrows_hash(ids, cuts, dictionary, batch):
    """Ids whose bytes vary in few bits, position by position, are each packed into one
    number that keeps their byte order, whatever the chunks and batches: the codes and ids
    are Arrow's, and the packed path answers exactly when the ids fit 63 bits."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(one_width, "_ONE_WIDTH_ROWS", 0)
        monkeypatch.setattr(one_width, "_BATCH_ROWS", batch)
        monkeypatch.setattr(encode, "_numbered_columns", lambda columns: None)
        columns = _columns(ids, cuts, dictionary)
        slow = _arrow_path(columns, monkeypatch)
        packed: list[int] = []
        original = one_width._unpacked
        monkeypatch.setattr(one_width, "_unpacked",
                            lambda keys, *rest: packed.append(len(keys)) or original(keys, *rest))
        fast = encode.factorize_list(list(columns))
    _assert_same(fast, slow)
    assert bool(packed) == (_key_bits(ids) <= 63)


@pytest.mark.parametrize(("alphabet", "width", "packed"), [
    ("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 9, True),  # ASINs after their "B": 7 bits each
    ("0123456789", 15, True),  # docnos' digits about a dash (LA010189-0001): 4 bits each
    ("0123456789abcdef", 32, False),  # hex digests: 7 bits each, 224 in all
])
def test_ids_at_scale_held_whole_by_a_key(monkeypatch, alphabet, width, packed):
    """600,000 rows over 300,000 distinct ids, in chunks of 7,000: the ids that fit a key
    take the packed path and those that do not the hash (no test threshold lowered); both
    answer as Arrow's hash does."""
    rng = np.random.default_rng(7)
    letters = np.array(list(alphabet))[rng.integers(0, len(alphabet), (300_000, width))]
    pool = ["B" + "".join(row[:6]) + "-" + "".join(row[6:]) for row in letters]
    ids = [pool[i] for i in rng.integers(0, len(pool), 600_000)]
    columns = _columns(ids, list(range(7_000, 600_000, 7_000)), True)
    slow = _arrow_path(columns, monkeypatch)
    calls: list[int] = []
    original = one_width._unpacked
    monkeypatch.setattr(one_width, "_unpacked",
                        lambda keys, *rest: calls.append(len(keys)) or original(keys, *rest))
    taken = _spied(monkeypatch)
    _assert_same(encode.factorize_list(list(columns)), slow)
    assert taken == [True]
    assert bool(calls) == packed


@pytest.mark.parametrize("fmt", ["csv", "parquet", "parquet large_string"])
@pytest.mark.parametrize(("kind", "plain", "parquet_plain"), [
    ("asin once", True, True),  # packable, drawn from a catalog far larger than the look
    ("asin popular", False, False),  # packable, repeating within the look
    ("uuid once", False, True),  # too many varying bits for a key
    ("lengths once", False, True),  # several byte lengths: no key at all
])
def test_text_ids_a_key_holds_that_do_not_repeat_are_read_plain(write, kind, plain,
                                                                parquet_plain, fmt):
    """The reader's look at a file's head (CSV: its first 64 KiB; Parquet: its first 2,048
    rows): text ids that a key would hold whole and that do not repeat there are read as
    plain text (a dictionary per block would be as long as the block, and cost a hash per
    row); others as dictionaries, but in Parquet also ids mostly distinct there whose
    dictionary pages spilled (these do: 400,000 distinct ids over 1 MiB), which the reader
    would hash row by row. Either way the numbers are those of the same ids read through
    pandas."""
    plain = parquet_plain if fmt.startswith("parquet") else plain
    import pandas as pd

    import rankeval
    from rankeval.io.cast import ID
    from rankeval.io.formats import delimited
    from rankeval.io.load import open_input

    rng = np.random.default_rng(11)
    n = 300_000
    letters = np.array(list("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    catalog = ["B0" + "".join(row) for row in letters[rng.integers(0, 36, (400_000, 8))]]
    if kind == "uuid once":
        catalog = [str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**62, 400_000)]
    if kind == "lengths once":
        catalog = [c[: 6 + i % 5] for i, c in enumerate(catalog)]
    draws = (rng.choice(len(catalog), n, replace=False) if kind != "asin popular" else
             (np.arange(n) % 20 + rng.integers(0, 20, n // 20).repeat(20)) % 40)
    preds = pd.DataFrame({"user_id": [f"user{i // 20:06d}" for i in range(n)],
                          "item_id": [catalog[i] for i in draws],
                          "rank": np.tile(np.arange(1, 21), n // 20)})
    truth = preds.iloc[::7][["user_id", "item_id"]].assign(relevance=1)
    if fmt.startswith("parquet"):  # text as Arrow's string (pyarrow's and Spark's writers
        # store it so) or large_string (pandas 3's)
        import pyarrow.parquet as pq

        text = pa.large_string() if fmt.endswith("large_string") else pa.string()
        p, t = write("p.parquet", b""), write("t.parquet", b"")
        for frame, path in ((preds, p), (truth, t)):
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False).cast(pa.schema(
                [pa.field(c, text if frame[c].dtype != "int64" else pa.int64())
                 for c in frame.columns])), path)
            assert pq.read_schema(path).field("item_id").type == text
    else:
        p, t = write("p.csv", preds), write("t.csv", truth)
        assert p.stat().st_size > delimited._SMALL
    read = open_input(str(p), "predictions").read(
        {"user_id": ID, "item_id": ID, "rank": pa.int64()})
    assert (not pa.types.is_dictionary(read.column("item_id").type)) == plain
    assert read.column("item_id").to_pylist() == preds["item_id"].tolist()
    metrics = ["ndcg@10", "map@5", "precision@3"]
    assert rankeval.evaluate(str(p), str(t), metrics=metrics).metrics == \
        rankeval.evaluate(preds, truth, metrics=metrics).metrics


def _without_blocks(columns: list[pa.ChunkedArray], monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(encode, "_in_blocks", lambda pieces: pieces)
        return encode.factorize_list(list(columns))


@settings(max_examples=150)
@given(st.lists(st.sampled_from(["a", "bb", "ccc", "a b", "é", "", "zz", "0"]), min_size=1,
                max_size=80),
       st.lists(st.integers(0, 80), max_size=6), st.lists(st.booleans(), min_size=8,
                                                           max_size=8),
       st.integers(1, 9), st.sampled_from([0.0, 0.6, 2.0]))
def test_plain_text_coded_block_by_block_codes_as_a_whole(ids, cuts, dictionary, block,
                                                         share):
    """Plain text hashed in blocks (``encode._in_blocks``) of any size, across chunks of
    any size, some of them dictionaries already, blocks taken always, never or by the
    share of the first block's distinct ids: the codes and ids are those of the text coded
    whole, and blocks are taken exactly when the first block repeats enough."""
    bounds = sorted({0, len(ids), *(c % (len(ids) + 1) for c in cuts)})
    chunks = [pa.array(ids[a:b], pa.string()) for a, b in itertools.pairwise(bounds)]
    chunks = [c.dictionary_encode() if d else c
              for c, d in zip(chunks, dictionary[: len(chunks)], strict=True)]
    # runs of chunks of one type make the columns (a column holds one type)
    columns = [pa.chunked_array(list(run)) for _, run in itertools.groupby(
        chunks, key=lambda c: pa.types.is_dictionary(c.type))]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(encode, "_BLOCK_ROWS", block)
        monkeypatch.setattr(encode, "_BLOCK_SHARE", share)
        monkeypatch.setattr(encode, "_numbered_columns", lambda columns: None)  # digits too
        whole = _without_blocks(columns, monkeypatch)
        taken = _spy(monkeypatch, encode, "_in_blocks", lambda pieces, out: out is not pieces)
        blocked = encode.factorize_list(list(columns))
    _assert_same(blocked, whole)
    plain = [c for c in chunks if not pa.types.is_dictionary(c.type) and len(c)]
    first = plain[0][:block] if plain else None
    expected = (first is not None and sum(map(len, plain)) >= 2 * block
                and not one_width.packable(first)
                and len(set(first.to_pylist())) < share * len(first))
    assert taken == [expected]


@pytest.mark.parametrize(("pool", "blocked"), [
    (50_000, True),  # UUIDs repeating within a block of 65,536 rows: hashed block by block
    (None, False),  # UUIDs each once: coded whole (a block's table would be as long)
])
def test_uuids_at_scale_are_coded_block_by_block_when_they_repeat(monkeypatch, pool,
                                                                  blocked):
    """600,000 plain UUID rows (Parquet whose dictionary pages spilled, a DataFrame), no
    test threshold lowered: hashed block by block exactly when they repeat within a block,
    and the answer is that of the text coded whole."""
    rng = np.random.default_rng(5)
    n = 600_000
    distinct = [str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**62, pool or n)]
    ids = [distinct[i] for i in rng.integers(0, pool, n)] if pool else distinct
    columns = _columns(ids, [250_000, 420_000], False)
    whole = _without_blocks(columns, monkeypatch)
    calls: list[int] = []
    original = encode._as_dictionary
    monkeypatch.setattr(encode, "_as_dictionary",
                        lambda chunk: calls.append(len(chunk)) or original(chunk))
    _assert_same(encode.factorize_list(list(columns)), whole)
    assert bool(calls) == blocked
    if blocked:  # every block of every chunk, none longer than a block
        assert max(calls) == encode._BLOCK_ROWS and sum(calls) == n


@pytest.mark.parametrize(("case", "dictionary"), [
    ("fits its pages", True),  # 20,000 ids of 5-9 bytes (no key holds them: several
    # lengths): the dictionary page holds them all
    ("fits, after a nested column", True),  # the same, the column's leaf found by its path
    ("spilled, in runs", True),  # sorted UUID users: spilled, but repeating in the look
    ("spilled, distinct", False),  # UUIDs mostly distinct in the look: hashed row by row
    ("no dictionary pages", False),  # written without: every row would be hashed
])
def test_parquet_text_ids_are_read_plain_where_the_reader_would_hash_every_row(
        tmp_path, case, dictionary):
    """Parquet text ids mostly distinct in the file's first 2,048 rows are read as plain text
    when the writer's dictionary pages spilled (pyarrow's hold 1 MiB: then most data pages
    hold the values, more than the 4 bytes a row an index takes) or when it wrote none; ids
    whose dictionary pages hold them, or that repeat in the look, as dictionaries. The ids
    read are the file's either way."""
    import pyarrow.parquet as pq

    from rankeval.io.cast import ID
    from rankeval.io.load import open_input

    rng = np.random.default_rng(3)
    n = 200_000
    if case.startswith("fits"):
        pool = [f"item{i}" for i in range(20_000)]
        ids = [pool[i] for i in rng.integers(0, len(pool), n)]
    elif case == "spilled, in runs":
        pool = [str(uuid.UUID(int=int(x))) for x in np.sort(rng.integers(0, 2**62, n // 3))]
        ids = [pool[i // 3] for i in range(n - n % 3)]
    else:
        pool = [str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**62, n)]
        ids = [pool[i] for i in rng.integers(0, n, n)]
    table = pa.table({"item_id": pa.array(ids, pa.string()), "rank": np.arange(len(ids)) % 20 + 1})
    if case.endswith("nested column"):
        values = rng.random((len(ids), 8))  # many bytes a row: leaves not the ids' spill
        vectors = pa.StructArray.from_arrays(  # two leaves before the ids'
            [pa.array(values[:, 0]), pa.array(list(values))], ["norm", "values"])
        table = pa.table({"vector": vectors, **{c: table[c] for c in table.column_names}})
    path = tmp_path / "p.parquet"
    pq.write_table(table, path, use_dictionary=case != "no dictionary pages")
    read = open_input(str(path), "predictions").read({"item_id": ID, "rank": pa.int64()})
    assert pa.types.is_dictionary(read.column("item_id").type) == dictionary
    assert read.column("item_id").to_pylist() == ids
