"""The HTML report (-f html, --html): sections, charts, escaping, determinism, size, and the
popularity-bias numbers behind its charts. The browser's view of it: test_browser.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.report import charts, html

from .conftest import ROOT, SAMPLE

GOLDEN = Path(__file__).parent / "golden"
PREDS, POPULAR, TRUTH = SAMPLE / "preds.csv", SAMPLE / "popular.csv", SAMPLE / "truth.csv"
EXTRA = ["--train", SAMPLE / "train.csv", "--catalog", SAMPLE / "catalog.csv"]
SEGMENTS = ["--segments", SAMPLE / "users.csv", "--segment-by", "country",
            "--segment-by", "train_interactions:quartiles"]


def ids(page: str) -> list[str]:
    return re.findall(r'<(?:section|figure) id="([^"]+)"', page)


def score_page(run_cli, tmp_path, *extra) -> str:
    out = tmp_path / "r.html"
    r = run_cli("score", PREDS, TRUTH, "--k", "1..10", "-m", "ndcg,recall,map,gini", *EXTRA,
                *SEGMENTS, "--stats", "mean,median,zeros", "--ci", "--rounds", "500",
                "--fail-under", "ndcg@10=0.3", "--fail-under", "ndcg@10[country=KR]=0.3",
                "-f", "html", "-o", out, "-q", *extra)
    assert r.exit_code == 1, r.stderr  # the KR gate fails: the report is still written
    return out.read_text()


def compare_page(run_cli, tmp_path, *extra) -> str:
    out = tmp_path / "c.html"
    r = run_cli("compare", PREDS, POPULAR, TRUTH, "--k", "1..10", "-m", "ndcg,recall,coverage",
                *EXTRA, *SEGMENTS, "--ci", "--rounds", "500", "--top-changes", "3",
                "-f", "html", "-o", out, "-q", *extra)
    assert r.exit_code == 0, r.stderr
    return out.read_text()


def test_score_report_has_every_section_that_applies(run_cli, tmp_path):
    page = score_page(run_cli, tmp_path)
    found = ids(page)
    for sid in ("gates", "summary", "curves", "chart-curve-ndcg", "chart-curve-recall",
                "distributions", "chart-dist-ndcg-10", "segments",
                "chart-seg-country-ndcg-10", "chart-seg-train-interactions-quartiles-ndcg-10",
                "popularity", "chart-lorenz", "chart-popularity-groups", "notices",
                "conventions"):
        assert sid in found, sid
    assert found.count("chart-curve-gini") == 0  # corpus metrics have no per-user curve
    assert "✗ 1 of 2 gates failed" in page and "✓ pass" in page and "✗ FAIL" in page
    assert "[0." in page  # the intervals in the summary table
    assert "(missing)" in page and "6 users" in page
    assert page.count("<svg") == len([i for i in found if i.startswith("chart-")])


def test_compare_report_has_every_section_that_applies(run_cli, tmp_path):
    page = compare_page(run_cli, tmp_path)
    found = ids(page)
    for sid in ("verdict", "summary", "curves", "chart-curve-ndcg", "forest",
                "chart-forest-ndcg", "chart-forest-recall", "chart-win-tie-loss",
                "differences", "chart-diff-ndcg-10", "distributions", "segments",
                "chart-seg-country-recall-10", "popularity", "chart-lorenz", "top-changes",
                "notices", "conventions"):
        assert sid in found, sid
    assert "chart-forest-coverage" not in found  # a corpus metric has no paired test
    assert "popular (baseline)" not in page and "preds (baseline)" in page


def test_sections_only_when_they_apply(run_cli, tmp_path):
    out = tmp_path / "plain.html"
    r = run_cli("score", PREDS, TRUTH, "--k", "10", "-f", "html", "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    found = ids(out.read_text())
    assert {"summary", "distributions", "conventions"} <= set(found)
    for absent in ("gates", "curves", "segments", "popularity"):
        assert absent not in found  # one K: no curve; no --train: no popularity


def test_static_and_self_contained(run_cli, tmp_path):
    for page in (score_page(run_cli, tmp_path), compare_page(run_cli, tmp_path)):
        assert "<script" not in page.lower()
        assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", page)  # only in-page links
        assert not re.search(r"url\((?!#)", page)  # no stylesheet or font fetches
        assert "@import" not in page
        assert len(re.findall(r' id="([^"]+)"', page)) == len(
            set(re.findall(r' id="([^"]+)"', page)))  # ids unique across the charts
        assert "prefers-color-scheme: dark" in page and "@media print" in page


def test_the_same_inputs_give_the_same_bytes(run_cli, tmp_path):
    a = compare_page(run_cli, tmp_path)
    b = compare_page(run_cli, tmp_path)
    assert a == b


def _skeleton(page: str) -> str:
    """The report's structure: sections, charts and the words drawn in each chart, with
    what moves between versions of the plotting library (coordinates, tick values,
    generated ids) scrubbed."""
    lines = []
    for m in re.finditer(r'<(section|figure) id="([^"]+)"|<svg |<text[^>]*>([^<]*)</text>',
                         page):
        if m.group(1):
            lines.append(("  " if m.group(1) == "figure" else "") + m.group(2))
        elif m.group(3) is not None:
            word = m.group(3)
            if not re.fullmatch(r"[−\-+]?[\d.,%]+|[\d.]+e[−\-+]?\d+", word):  # tick values
                lines.append(f"    {word}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["score", "compare"])
def test_svg_structure_golden(run_cli, tmp_path, kind):
    page = (score_page if kind == "score" else compare_page)(run_cli, tmp_path)
    got = _skeleton(page)
    path = GOLDEN / f"report_{kind}.txt"
    if os.environ.get("RANKEVAL_UPDATE_GOLDEN"):
        path.write_text(got)
    assert got == path.read_text(), f"rerun with RANKEVAL_UPDATE_GOLDEN=1 and review {path}"


def test_html_beside_another_format(run_cli, tmp_path):
    page, report = tmp_path / "r.html", tmp_path / "r.json"
    r = run_cli("score", PREDS, TRUTH, "--k", "5,10", "-f", "json", "-o", report,
                "--html", page, "-q")
    assert r.exit_code == 0, r.stderr
    assert json.loads(report.read_text())["metrics"]["ndcg@10"] > 0
    assert "chart-dist-ndcg-10" in page.read_text()
    r = run_cli("compare", PREDS, POPULAR, TRUTH, "-f", "json", "--html", page, "-q")
    assert r.exit_code == 0 and json.loads(r.stdout)["baseline"] == "preds"
    assert 'id="forest"' in page.read_text()


def test_html_to_stdout(run_cli):
    r = run_cli("score", PREDS, TRUTH, "--k", "10", "-f", "html", "-q")
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>")


def test_html_outputs_are_checked_before_reading(run_cli, tmp_path):
    r = run_cli("score", PREDS, TRUTH, "--html", TRUTH)
    assert r.exit_code == 2 and "--html" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("compare", PREDS, POPULAR, TRUTH, "--html", PREDS)
    assert r.exit_code == 2 and "--html" in r.stderr
    (tmp_path / "file").write_text("in the way")  # a folder that cannot be made
    r = run_cli("score", PREDS, TRUTH, "--html", tmp_path / "file" / "r.html")
    assert r.exit_code == 2 and "--html" in r.stderr


def test_without_matplotlib_a_clear_error(run_cli, monkeypatch, tmp_path):
    monkeypatch.setattr(charts, "matplotlib", None)
    out = tmp_path / "r.html"
    for args in (["score", PREDS, TRUTH, "-f", "html", "-o", out],
                 ["score", PREDS, TRUTH, "--html", out],
                 ["compare", PREDS, POPULAR, TRUTH, "-f", "html", "-o", out]):
        r = run_cli(*args)
        assert r.exit_code == 2, args
        assert "rankeval[report]" in r.stderr and "Traceback" not in r.stderr
        assert not out.exists()
    ev = rankeval.evaluate(PREDS, TRUTH, k=10)
    with pytest.raises(rankeval.RankevalError, match="matplotlib"):
        html.render(ev)


def test_data_is_escaped(write, run_cli, tmp_path):
    hostile = "<script>alert(1)</script>"
    preds = pd.DataFrame({"user_id": ["a", "a", hostile, hostile],
                          "item_id": ["x", "y", "x", "y"], "rank": [1, 2, 1, 2]})
    truth = pd.DataFrame({"user_id": ["a", hostile], "item_id": ["x", "y"],
                          "relevance": [1, 1]})
    users = pd.DataFrame({"user_id": ["a", hostile], "team": [hostile, "<b>&amp;"]})
    p, t, u = write("p.csv", preds), write("t.csv", truth), write("u.csv", users)
    out = tmp_path / "r.html"
    r = run_cli("compare", p, p, t, "--name", hostile, "--name", "b&", "--segments", u,
                "--segment-by", "team", "--top-changes", "2", "-f", "html", "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert "<script" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;&amp;amp;" in page


def test_library_render_and_notebook_use():
    ev = rankeval.evaluate(PREDS, TRUTH, k="5..10", train=SAMPLE / "train.csv")
    page = html.render(ev)
    assert 'id="chart-curve-ndcg"' in page and 'id="chart-lorenz"' in page
    assert ev.exposure is not None and ev.exposure.k == 10
    assert json.loads(json.dumps(ev.to_dict()))["exposure"]["k"] == 10


# -- the numbers behind the popularity charts ------------------------------------------------


def _by_hand(k: int, users, popularity: str = "users"):
    preds, train = pd.read_csv(PREDS), pd.read_csv(SAMPLE / "train.csv")
    catalog = pd.read_csv(SAMPLE / "catalog.csv").item_id
    top = preds[(preds["rank"] <= k) & preds.user_id.isin(set(users))]  # evaluated lists
    rec = top.item_id.value_counts().reindex(catalog, fill_value=0).to_numpy(float)
    if popularity == "users":
        pop = train.groupby("item_id").user_id.nunique()
    else:
        pop = train.groupby("item_id")["count"].sum()
    pop = pop.reindex(catalog, fill_value=0).to_numpy(float)
    return catalog.to_numpy(), rec, pop


@pytest.mark.parametrize("k, popularity", [(10, "users"), (5, "interactions"), (20, "users")])
def test_exposure_matches_a_direct_computation(k, popularity):
    ev = rankeval.evaluate(PREDS, TRUTH, k=[1, k], metrics=["ndcg", "gini"],
                           train=SAMPLE / "train.csv", catalog=SAMPLE / "catalog.csv",
                           popularity=popularity)
    e = ev.exposure
    ids, rec, pop = _by_hand(k, ev.user_ids, popularity)
    assert (e.k, e.items, e.recommended) == (k, len(ids), int((rec > 0).sum()))
    assert e.gini == pytest.approx(ev.metrics[f"gini@{k}"], abs=1e-12)
    # Lorenz: the share held by the least-exposed x of the items, at the exact item steps
    for values, curve in ((rec, e.lorenz_recommended), (pop, e.lorenz_train)):
        cum = np.cumsum(np.sort(values)) / values.sum()
        n = len(values)
        for i, x in enumerate(np.linspace(0, 1, len(curve))):
            if (x * n).is_integer() and x > 0:
                assert curve[i] == pytest.approx(cum[int(x * n) - 1], abs=1e-6)
        assert curve[0] == 0 and curve[-1] == pytest.approx(1)
    # groups: ten equal slices of the catalog by training popularity (ties by id)
    order = sorted(range(len(ids)), key=lambda i: (-pop[i], ids[i]))
    for g, group in enumerate(np.array_split(order, 10)):
        assert e.train_share[g] == pytest.approx(pop[group].sum() / pop.sum(), abs=1e-12)
        assert e.recommended_share[g] == pytest.approx(rec[group].sum() / rec.sum(), abs=1e-12)


def test_no_exposure_without_training_data():
    assert rankeval.evaluate(PREDS, TRUTH, k=10).exposure is None
    doc = rankeval.evaluate(PREDS, TRUTH, k=10).to_dict()
    assert doc["exposure"] is None


def test_compare_intervals_are_over_the_shared_users(run_cli):
    r = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10,map@10", "--ci",
                "--rounds", "1000", "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    doc = r.json()
    for run in doc["runs"]:
        for metric, (low, high) in run["ci"].items():
            assert low < run["metrics"][metric] < high
    from rankeval.analysis.significance import bootstrap_mean_ci

    per_user = rankeval.evaluate(POPULAR, TRUTH, k=10, metrics="ndcg@10").per_user
    shared = rankeval.evaluate(PREDS, TRUTH, k=10, metrics="ndcg@10").per_user.user_id
    v = per_user[per_user.user_id.isin(shared)]["ndcg@10"].to_numpy()
    assert doc["runs"][1]["ci"]["ndcg@10"] == list(bootstrap_mean_ci(v, 1000, 0, 0.95))
    plain = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "-f", "json", "-q")
    assert plain.json()["runs"][0]["ci"] is None


@pytest.mark.slow
def test_under_one_megabyte_for_a_million_users(tmp_path):
    """Charts are aggregates: the page does not grow with the users."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def text(numbers: np.ndarray) -> pa.Array:  # Arrow writes a million ids in milliseconds
        return pa.array(numbers).cast(pa.string())

    rng = np.random.default_rng(5)
    n, depth = 1_000_000, 5
    items = (rng.integers(0, 50_000, n)[:, None] + 9_973 * np.arange(depth)) % 50_000
    items = items.ravel()  # distinct within each list
    ranks = np.tile(np.arange(1, depth + 1), n)
    preds = pa.table({"user_id": text(np.repeat(np.arange(n), depth)), "item_id": text(items),
                      "rank": ranks})
    # one relevant item per user, the predicted one at a random rank or a miss
    hit = rng.integers(0, depth + 3, n)
    at = np.arange(n) * depth + np.minimum(hit, depth - 1)
    relevant = pa.array(np.where(hit < depth, items[at].astype(str), "none"))
    truth = pa.table({"user_id": text(np.arange(n)), "item_id": relevant,
                      "relevance": rng.integers(1, 4, n)})
    segments = pd.DataFrame({"user_id": np.arange(n).astype(str),
                             "group": rng.choice(["a", "b", "c", "d"], n)})
    pp, tp = tmp_path / "p.parquet", tmp_path / "t.parquet"
    pq.write_table(preds, pp)
    pq.write_table(truth, tp)
    ev = rankeval.evaluate(pp, tp, k="1..5", metrics="ndcg,recall,mrr").with_stats(
        "mean,median,zeros").by_segment(segments, "group")
    page = html.render(ev)
    assert ev.users.evaluated == n and len(page.encode()) < 1_000_000
    from rankeval.api.compare import compare_runs
    from rankeval.io.load import load_truth, open_input
    from rankeval.settings import make_settings

    other = preds.set_column(2, "rank", pa.array(depth + 1 - ranks))
    op = tmp_path / "o.parquet"
    pq.write_table(other, op)
    judged = load_truth(open_input(str(tp), "truth", None, None))
    result = compare_runs(judged, [("a", str(pp)), ("b", str(op))],
                          make_settings("ndcg,recall", "1..5"), segments=segments,
                          segment_by=["group"], top_changes=5)
    page = html.render_compare(result)
    assert len(page.encode()) < 1_000_000 and 'id="chart-diff-ndcg-5"' in page


def test_readme_screenshot_is_current_enough():
    """make docs writes it; the README shows it, the whole page: it was once a clip that
    ended mid-chart, where a picture of the whole page ends on the page's bottom margin (a
    band of background colour; tests/test_site.py holds docs/screenshot.py to the document's
    height)."""
    import matplotlib.image  # the report extra's

    shot = ROOT / "docs" / "report.png"
    assert shot.exists() and shot.stat().st_size > 20_000
    assert "docs/report.png" in (ROOT / "README.md").read_text()
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] > 2 * pixels.shape[1]  # the report is far taller than wide
    margin = pixels[-16:]
    assert (margin == margin[0, 0]).all(), "docs/report.png ends inside the page: make docs"


def test_top_changes_shown_without_asking_and_only_when_users_change(run_cli, tmp_path):
    out = tmp_path / "c.html"
    r = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "-f", "html", "-o", out,
                "-q")
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    top = page[page.index('id="top-changes"'):]
    top = top[:top.index("</section>")]
    assert top.count("<td class=text>helped</td>") == 5
    assert top.count("<td class=text>hurt</td>") == 5
    r = run_cli("compare", PREDS, PREDS, TRUTH, "-m", "ndcg@10", "-f", "html", "-o", out, "-q")
    assert r.exit_code == 0 and 'id="top-changes"' not in out.read_text()


def test_a_long_report_leads_with_the_verdict_and_headline_and_folds_the_full_table(
        run_cli, tmp_path):
    for page in (score_page(run_cli, tmp_path), compare_page(run_cli, tmp_path)):
        found = [i for i in ids(page) if not i.startswith("chart-")]
        assert found[:3] in (["gates", "headline", "curves"], ["verdict", "headline", "curves"])
        assert found.index("summary") > found.index("popularity")  # after the charts
        summary = page[page.index('<section id="summary"'):]
        assert summary.index("<details><summary>every metric at every cut-off") < \
            summary.index("</section>")
        headline = page[page.index('<section id="headline"'):]
        headline = headline[:headline.index("</section>")]
        assert "ndcg@10" in headline and "ndcg@5" not in headline  # one cut-off per metric


def test_a_short_report_keeps_its_summary_first(run_cli, tmp_path):
    out = tmp_path / "short.html"
    assert run_cli("score", PREDS, TRUTH, "--k", "10", "-f", "html", "-o", out,
                   "-q").exit_code == 0
    page = out.read_text()
    assert "headline" not in ids(page) and "<details>" not in page
    assert ids(page)[0] == "summary"


def _drawn_histograms(monkeypatch, run_cli, tmp_path) -> dict:
    """The matplotlib figures of every histogram of a compare report (the per-user
    differences, marked 'no change' at 0) and of a score report (the distributions, marked
    'mean'), as drawn: each figure kept when it is written to SVG."""
    figures = {}
    real = charts.svg

    def keep(fig, name, title):
        figures[name] = fig
        return real(fig, name, title)

    monkeypatch.setattr(charts, "svg", keep)
    for args in (("compare", PREDS, POPULAR, TRUTH), ("score", PREDS, TRUTH),
                 ("score", POPULAR, TRUTH)):
        r = run_cli(*args, "-m", "ndcg@10,recall@10,mrr@10", "-f", "html",
                    "-o", tmp_path / "r.html", "-q")
        assert r.exit_code == 0, r.stderr
    return {n: f for n, f in figures.items() if n.startswith(("chart-diff-", "chart-dist-"))}


def test_no_histogram_label_covers_a_bar(monkeypatch, run_cli, tmp_path):
    """A mark's label ('no change', 'mean') was drawn inside the plot area, over the bar at
    its line (the users with no change, the tallest bar at 0): every word of a histogram (its
    title, note and mark labels, its axes' labels) is now outside every bar's box, and the
    title, the note and the labels apart from each other, in the figure as matplotlib lays
    it out (window extents), not in pixels."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # the report extra's
    from matplotlib.patches import StepPatch
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    figures = _drawn_histograms(monkeypatch, run_cli, tmp_path)
    assert {"chart-diff-ndcg-10", "chart-dist-recall-10"} <= set(figures)
    labelled = 0
    for name, fig in figures.items():
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        (ax,) = fig.axes
        bars = []
        for patch in ax.patches:
            assert isinstance(patch, StepPatch)
            values, edges, baseline = patch.get_data()
            base = 0 if baseline is None else baseline
            bars += [Bbox(ax.transData.transform([(lo, base), (hi, v)]))
                     for v, lo, hi in zip(values, edges[:-1], edges[1:], strict=True) if v > 0]
        assert bars, name
        # the title (its Text found by its words: matplotlib names a left title only so),
        # the note and the marks' labels, the axes' labels (not the ticks: those past the
        # limits stay 'visible' but are not drawn)
        words = [t for t in ax.findobj(Text) if t.get_text().strip() and (
                 t in ax.texts or t in (ax.xaxis.label, ax.yaxis.label)
                 or t.get_text() == ax.get_title("left"))]
        assert any(t.get_text() == ax.get_title("left") for t in words), name
        marks = [t for t in ax.texts if t.get_text() in ("no change", "mean")]
        labelled += len(marks)
        for text in words:
            box = text.get_window_extent(renderer)
            for bar in bars:
                assert not box.overlaps(bar), (name, text.get_text(), box, bar)
            assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1, box.y1), \
                (name, text.get_text())  # nothing cut at the figure's edge
        heads = [t for t in words if t in ax.texts or t.get_text() == ax.get_title("left")]
        for i, a in enumerate(heads):
            for b in heads[i + 1:]:
                assert not a.get_window_extent(renderer).overlaps(
                    b.get_window_extent(renderer)), (name, a.get_text(), b.get_text())
    assert labelled >= 4  # 'no change' on each difference chart, 'mean' on a score's


# Every chart the HTML reports draw, one command per kind: curves (with bands), histograms,
# forests, win/tie/loss, hbars (segments, exposure by group), lorenz, popularity groups, the
# all-pairs heatmap and the gold intervals
CHART_RUNS = [
    ("compare", PREDS, POPULAR, TRUTH, "--k", "1..10", "--ci", "--rounds", "200", "--segments",
     SAMPLE / "users.csv", "--segment-by", "country", "--train", SAMPLE / "train.csv",
     "--catalog", SAMPLE / "catalog.csv", "-m", "ndcg,recall"),
    ("compare", PREDS, POPULAR, SAMPLE / "full_a.csv", TRUTH, "--all-pairs", "--rounds",
     "200", "-m", "ndcg@10"),
    ("compare", SAMPLE / "judged_bm25.run", SAMPLE / "judged_llm.run",
     SAMPLE / "judged_llm.qrels", "--gold", SAMPLE / "judged_human.qrels"),
    ("score", SAMPLE / "judged_llm.run", SAMPLE / "judged_llm.qrels", "--gold",
     SAMPLE / "judged_human.qrels"),
    ("score", PREDS, TRUTH, "--k", "1..10", "-m", "ndcg,awrf", "--item-groups",
     SAMPLE / "item_groups.csv"),
]


def _words_apart(name: str, fig) -> None:
    """The title, the legends, the axes' labels and the drawn tick labels of ``fig`` are
    apart from each other and inside the figure (matplotlib's window extents)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # the report extra's
    from matplotlib.text import Text

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    boxes = []
    for ax in fig.axes:
        titles = [t for t in ax.findobj(Text) if t.get_text() == ax.get_title("left")
                  and t not in (ax.xaxis.label, ax.yaxis.label)]
        assert titles, name  # the title, found by its words (matplotlib's left title)
        parts = [("title", titles[0]), ("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)]
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            parts += [(f"tick {t.label1.get_text()}", t.label1)
                      for t in axis.get_major_ticks()
                      if t.label1.get_visible() and t.label1.get_text()
                      and lo - 1e-9 <= t.get_loc() <= hi + 1e-9]
        if ax.get_legend() is not None:
            parts.append(("legend", ax.get_legend()))
        boxes += [(what, a.get_window_extent(renderer)) for what, a in parts
                  if a.get_visible() and (what == "legend" or a.get_text().strip())]
    boxes += [("legend", g.get_window_extent(renderer)) for g in fig.legends]
    for i, (what, box) in enumerate(boxes):
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1 and \
            fig.bbox.y0 - 1 <= box.y0 and box.y1 <= fig.bbox.y1 + 1, (name, what)
        for other, second in boxes[i + 1:]:
            if what.startswith("tick") and other.startswith("tick"):
                continue  # ticks of one axis: matplotlib spaces them
            assert not box.overlaps(second), (name, what, other)


def _kept(monkeypatch) -> dict:
    """name -> figure of every chart drawn from now on (kept as it is written to SVG)."""
    figures: dict = {}
    real = charts.svg

    def keep(fig, name, title):
        figures[name] = fig
        return real(fig, name, title)

    monkeypatch.setattr(charts, "svg", keep)
    return figures


def test_no_charts_words_cover_each_other(monkeypatch, run_cli, tmp_path):
    """Every chart the reports draw: its words apart and inside the figure."""
    figures = _kept(monkeypatch)
    for args in CHART_RUNS:
        r = run_cli(*args, "-f", "html", "-o", tmp_path / "r.html", "-q")
        assert r.exit_code == 0, r.stderr
    kinds = {"chart-curve", "chart-dist", "chart-diff", "chart-forest", "chart-win-tie-loss",
             "chart-seg", "chart-exposure", "chart-lorenz", "chart-popularity-groups",
             "chart-pairs", "gold-differences", "gold-estimates"}
    drawn = {k for k in kinds if any(k in name for name in figures)}
    assert drawn == kinds, kinds - drawn
    for name, fig in figures.items():
        _words_apart(name, fig)


LONG = "Exposure by provider group (awrf@10), every run"  # a title as long as the reports'


@pytest.mark.parametrize("kind", ["hbars", "intervals", "win_tie_loss", "curves", "histogram",
                                  "forest", "lorenz", "groups", "heatmap"])
def test_a_long_title_leaves_the_legend_and_labels_alone(monkeypatch, kind):
    """hbars' legend sat above the axes, right of the title, and ran into a long title (the
    gold charts had that defect before their legend got a row of its own): every chart kind,
    drawn with a long title and several series, keeps its words apart."""
    from types import SimpleNamespace

    figures = _kept(monkeypatch)
    labels, two = ["acme", "globex", "initech"], ["exposure", "target"]
    point = SimpleNamespace(value=0.3, low=0.2, high=0.4)
    draw = {
        "hbars": lambda: charts.hbars(kind, LONG, labels, [[0.3, 0.4]] * 3, two, "share"),
        "intervals": lambda: charts.intervals(kind, LONG, labels, two, [[point] * 2] * 3),
        "win_tie_loss": lambda: charts.win_tie_loss(kind, LONG, labels, [5] * 3, [2] * 3,
                                                    [3] * 3),
        "curves": lambda: charts.curves(kind, LONG, [
            {"label": s, "k": [1, 5, 10], "mean": [0.1, 0.3, 0.4], "low": None, "high": None}
            for s in two], "ndcg"),
        "histogram": lambda: charts.histogram(kind, LONG, np.linspace(0, 1, 11),
                                              [np.arange(10), np.arange(10)[::-1]], two,
                                              "ndcg@10", [(0.5, "mean")], "298 users"),
        "forest": lambda: charts.forest(kind, LONG, labels, [0.1, -0.1, 0.0],
                                        [0.0, -0.2, -0.1], [0.2, 0.0, 0.1], [True, True, False]),
        "lorenz": lambda: charts.lorenz(kind, LONG, np.linspace(0, 1, 5),
                                        [(s, np.linspace(0, 1, 5) ** 2) for s in two]),
        "groups": lambda: charts.groups(kind, LONG, [(s, [0.5, 0.3, 0.2]) for s in two]),
        "heatmap": lambda: charts.heatmap(kind, LONG, labels, [[0.0, 0.1, 0.2]] * 3,
                                          [[False, True, True]] * 3),
    }[kind]
    draw()
    _words_apart(kind, figures[kind])
