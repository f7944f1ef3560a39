"""``--ties ranx``: ranx's order of tied scores (numba's quicksort of the negated scores over
each list in file order), from the command line and the library; refused in one line naming
numba when numba is missing. ``tests/test_peer_presets.py`` holds ranx's own measures."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from rankeval import evaluate
from rankeval.errors import OptionError


def _shuffled(seed: int = 3, users: int = 6) -> pd.DataFrame:
    """Lists of 40-90 items over three scores (long enough for numba's partitions to move
    ties), each user's rows scattered over the file."""
    rng = np.random.default_rng(seed)
    rows = [(f"u{u}", f"d{i}", float(rng.integers(0, 3)))
            for u in range(users) for i in rng.choice(300, int(rng.integers(40, 91)), False)]
    frame = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


def _truth(preds: pd.DataFrame) -> pd.DataFrame:
    first = preds.groupby("user_id", sort=False).head(9)
    return first.assign(relevance=np.arange(len(first)) % 3)[
        ["user_id", "item_id", "relevance"]]


@pytest.mark.slow
@pytest.mark.xdist_group("ranx")  # ranx compiles its numba kernels once per worker
def test_converted_run_holds_the_order_of_ranx_run(run_cli, write, tmp_path):
    """``convert --ties ranx`` writes each list in the order a ranx Run holds it, document for
    document: the rule is ranx's order itself, not only its measures."""
    import ranx

    preds = _shuffled()
    run: dict[str, dict[str, float]] = {}
    for u, i, s in preds.itertuples(index=False):
        run.setdefault(u, {})[i] = s
    theirs = {q: list(docs.keys()) for q, docs in ranx.Run.from_dict(run).run.items()}
    out = tmp_path / "o.trec"
    r = run_cli("convert", write("p.csv", preds.to_csv(index=False)), out, "--ties", "ranx")
    assert r.exit_code == 0, r.stderr
    lines = [line.split() for line in out.read_text().splitlines()]
    ours: dict[str, list[str]] = {}
    for q, _, doc, *_ in lines:
        ours.setdefault(q, []).append(doc)
    assert ours == theirs
    assert any(ours[q] != sorted(run[q], key=lambda d: (-run[q][d], d)) for q in ours)


def test_cli_and_library_give_the_same_numbers_and_name_the_rule(run_cli, write):
    """The command line reads the file's rows in order as the library's frame holds them;
    every report names the rule (the footer, the JSON settings)."""
    preds, metrics = _shuffled(), "ndcg@10,map@20,precision@5,mrr@30"
    truth = _truth(preds)
    p = write("p.csv", preds.to_csv(index=False))
    t = write("t.csv", truth.to_csv(index=False))
    lib = evaluate(preds, truth, metrics.split(","), compat="ranx")
    doc = run_cli("score", p, t, "-m", metrics, "--compat", "ranx", "-f", "json").json()
    assert doc["settings"]["ties"] == "ranx"
    assert doc["metrics"] == pytest.approx(lib.metrics, abs=1e-12)
    assert lib.metrics != evaluate(preds, truth, metrics.split(","), compat="ranx",
                                   ties="trec").metrics
    table = run_cli("score", p, t, "-m", metrics, "--ties", "ranx")
    assert table.exit_code == 0 and "ties ranx" in table.stdout


@pytest.mark.parametrize("entry", ["score", "convert", "library", "convert-library"])
def test_without_numba_the_rule_is_refused_in_one_line(monkeypatch, run_cli, write, tmp_path,
                                                       entry):
    """numba is an optional dependency: where it is missing, ``--ties ranx`` (and the preset
    that sets it) is refused before anything is written, in one line naming numba."""
    from rankeval.api.convert import convert

    monkeypatch.setitem(sys.modules, "numba", None)  # import numba fails, as uninstalled
    preds = _shuffled(users=2)
    p = write("p.csv", preds.to_csv(index=False))
    t = write("t.csv", _truth(preds).to_csv(index=False))
    out = tmp_path / "o.trec"
    if entry in ("score", "convert"):
        args = ("score", p, t, "--compat", "ranx") if entry == "score" else \
            ("convert", p, out, "--ties", "ranx")
        r = run_cli(*args)
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "--ties ranx" in r.stderr and "numba" in r.stderr
    else:
        with pytest.raises(OptionError, match=r"ranx.*needs numba"):
            if entry == "library":
                evaluate(preds, _truth(preds), ["ndcg@10"], ties="ranx")
            else:
                convert(str(p), str(out), ties="ranx")
    assert not out.exists()


def test_compiled_without_a_cache_where_numba_can_keep_none(monkeypatch):
    """A read-only install with no writable cache folder: numba refuses ``cache=True``
    (RuntimeError, no locator); the sort is compiled without a cache, the same order."""
    import numba

    from rankeval.kernels import ranx_sort

    preds = _shuffled(users=1)
    score = preds["score"].to_numpy()
    user = np.zeros(len(score), dtype=np.int64)
    cached = ranx_sort.ranx_order(user, score)
    plain = numba.njit

    def no_locator(*args, cache=False, **kwargs):
        if cache:
            raise RuntimeError("cannot cache function: no locator available")
        return plain(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", no_locator)
    monkeypatch.setattr(ranx_sort, "_kernel", ranx_sort._kernel.__wrapped__)  # compile anew
    np.testing.assert_array_equal(ranx_sort.ranx_order(user, score), cached)
    assert (cached != np.argsort(-score, kind="stable")).any()  # ties moved: not a no-op
