"""Charts of the HTML report as inline SVG, drawn with matplotlib's SVG backend.

Every function takes small, already aggregated arrays (bins, means, shares: never one point
per user), so a chart's size does not grow with the data. Colours of text, axes and grid are
CSS variables, so one SVG follows the page's light, dark and print styles; series colours are
the Okabe-Ito palette, readable on both backgrounds and by colour-blind readers.

matplotlib is imported here only, and this module only when an HTML report is asked for
(``rankeval[report]``).
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Sequence

import numpy as np

try:
    import matplotlib
    from matplotlib.figure import Figure
except ImportError:  # pragma: no cover - the report extra is part of the test extra
    matplotlib = None  # type: ignore[assignment]  # the optional extra is not installed

PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442",
           "#999999")
GOOD, BAD, NEUTRAL = "#009e73", "#d55e00", "#999999"
# Stand-in colours matplotlib draws with, replaced by the page's CSS variables afterwards.
_VARS = {"#0a0b0c": "var(--fg)", "#1a1b1c": "var(--grid)", "#2a2b2c": "var(--muted)",
         "#3a3b3c": "var(--bg)"}
_STYLE = {
    "svg.fonttype": "none",  # text stays text: small, selectable, styled by the page
    "svg.hashsalt": "rankeval",  # the same report twice is the same bytes
    "font.size": 9,
    "text.color": "#0a0b0c", "axes.labelcolor": "#0a0b0c", "axes.edgecolor": "#2a2b2c",
    "xtick.color": "#2a2b2c", "ytick.color": "#2a2b2c", "xtick.labelcolor": "#0a0b0c",
    "ytick.labelcolor": "#0a0b0c", "grid.color": "#1a1b1c", "grid.linewidth": 0.6,
    "axes.grid": True, "axes.axisbelow": True, "axes.spines.top": False,
    "axes.spines.right": False, "legend.frameon": False, "axes.titlesize": 10,
    "axes.titleweight": "bold", "axes.titlelocation": "left", "legend.fontsize": 8,
    "lines.linewidth": 1.6,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.transparent": True,
}


# The height (inches) of the row above a histogram's axes that holds its marks' labels.
MARK_ROW = 0.18


def available() -> bool:
    return matplotlib is not None


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def styled(draw):
    """Draw the whole chart in the report's style (matplotlib reads its settings when each
    artist is made, not when the figure is)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(_STYLE):
            return draw(*args, **kwargs)

    return wrapper


def figure(width: float = 5.6, height: float = 3.0, labels: Sequence[str] = (),
           bottom: float = 0.5, top: float = 0.32):
    """A figure and its axes, in the report's style. Margins are set in inches from the
    longest y label rather than by a layout engine, which would draw every chart twice."""
    fig = Figure(figsize=(width, height))
    left = 0.7 if not labels else 0.3 + 0.068 * max(len(str(x)) for x in labels)
    fig.subplots_adjust(left=min(left, width * 0.6) / width, right=1 - 0.2 / width,
                        bottom=bottom / height, top=1 - top / height)
    return fig, [fig.add_subplot()]


def svg(fig, name: str, title: str) -> str:
    """The figure as an inline ``<svg>``: ids made unique to ``name`` (several charts share
    a page), font and colours left to the page's CSS, no XML prologue or metadata."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r"font-family: [^;\"]*;? ?", "", text)
    for stand_in, var in _VARS.items():
        text = text.replace(stand_in, var)
    used = set(re.findall(r"(?:url\(#|href=\"#)([^)\"]+)", text))
    text = re.sub(r' id="([^"]+)"',
                  lambda m: f' id="{name}-{m.group(1)}"' if m.group(1) in used else "", text)
    text = re.sub(r"(url\(#|href=\"#)([^)\"]+)", lambda m: f"{m.group(1)}{name}-{m.group(2)}",
                  text)
    text = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*" ',
                  lambda m: f'<svg {m.group(1)}role="img" aria-label="{_attr(title)}" ', text,
                  count=1)
    # matplotlib writes each path's points one per line, to 6 decimals, and a rotation of 0
    # on every label: one line, 1/100 of a point and no rotation draw the same, smaller
    text = re.sub(r" \n(?=[LMCQz])", " ", text)
    text = re.sub(r'( (?:d|x|y|transform)=")([^"]*)"', lambda m: m.group(1) + re.sub(
        r"(\d\.\d\d)\d+", r"\1", m.group(2)) + '"', text)
    text = re.sub(r' transform="rotate\(-0 [^)]*\)"', "", text)
    text = re.sub(r">\s+<", "><", re.sub(r"\s*\n\s*\"", '"', text))
    return _unwrap(text.strip())


def _unwrap(text: str) -> str:
    """Drop the groups matplotlib opens without attributes (they only carried its ids)."""
    out: list[str] = []
    bare: list[bool] = []
    at = 0
    for m in re.finditer(r"<g>|<g [^>]*>|</g>", text):
        out.append(text[at:m.start()])
        tag = m.group()
        if tag == "</g>":
            if not bare.pop():
                out.append(tag)
        else:
            bare.append(tag == "<g>")
            if tag != "<g>":
                out.append(tag)
        at = m.end()
    out.append(text[at:])
    return "".join(out)


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


@styled
def curves(name: str, title: str, series: Sequence[dict], ylabel: str) -> str:
    """metric@K over K: one line per run (``{"label", "k", "mean", "low", "high"}``; low
    and high None without intervals), a band for each interval."""
    fig, (ax,) = figure()
    for i, s in enumerate(series):
        ax.plot(s["k"], s["mean"], color=color(i), marker="o", markersize=3, label=s["label"])
        if s.get("low") is not None:
            ax.fill_between(s["k"], s["low"], s["high"], color=color(i), alpha=0.18,
                            linewidth=0)
    ax.set_xlabel("K (cut-off)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ks = sorted({k for s in series for k in s["k"]})
    if len(ks) <= 12:
        ax.set_xticks(ks)
    elif all(isinstance(k, int) for k in ks):
        # optional dependency: matplotlib (rankeval[report])
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if len(series) > 1:
        ax.legend(loc="best", fontsize=8)
    return svg(fig, name, title)


@styled
def histogram(name: str, title: str, edges: np.ndarray, counts: Sequence[np.ndarray],
              labels: Sequence[str], xlabel: str, marks: Sequence[tuple[float, str]] = (),
              note: str = "") -> str:
    """Counts per bin, one step outline per series (filled when alone); ``marks`` are
    vertical reference lines (x, label). A mark's label is written above the plot area, in a
    row of its own between the axes and the title, so that it never covers a bar (the bar at
    a mark, such as the users with no change at 0, is often the tallest)."""
    labelled = any(label for _, label in marks)
    fig, (ax,) = figure(5.6, 2.6 + MARK_ROW * labelled, top=0.32 + MARK_ROW * labelled)
    total = [max(int(c.sum()), 1) for c in counts]
    for i, (c, label) in enumerate(zip(counts, labels, strict=True)):
        share = c / total[i]
        if len(counts) == 1:
            ax.stairs(share, edges, fill=True, color=color(i), alpha=0.75, label=label)
        else:
            ax.stairs(share, edges, color=color(i), linewidth=1.6, label=label)
    for i, (x, label) in enumerate(marks):
        ax.axvline(x, color=color(i) if len(marks) > 1 else "#2a2b2c", linewidth=1,
                   linestyle="--")
        if label:  # above the axes, centred on its line
            ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of users")
    ax.yaxis.set_major_formatter(_percent())
    pad = 6 + 72 * MARK_ROW * labelled  # points: the title above the marks' row
    ax.set_title(title, pad=pad)
    if note:  # on the title's line, at the right
        ax.annotate(note, (1, 1), xycoords="axes fraction", xytext=(0, pad),
                    textcoords="offset points", ha="right", va="baseline", fontsize=8)
    if len(counts) > 1:
        ax.legend(loc="best", fontsize=8)
    return svg(fig, name, title)


def _percent():
    # optional dependency: matplotlib (rankeval[report])
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(1.0, decimals=0)


@styled
def hbars(name: str, title: str, labels: Sequence[str], values: Sequence[Sequence[float]],
          series: Sequence[str], xlabel: str, notes: Sequence[str] = ()) -> str:
    """Horizontal bars per label, one bar per series; ``notes`` (a user count) beside each
    label. Several series' legend has a row of its own under the x axis's label, as
    ``intervals_figure``'s: above the axes, right of the title, it ran into a long title."""
    n, m = len(labels), len(series)
    names = [f"{lab}  ({note})" if notes else lab
             for lab, note in zip(labels, notes or labels, strict=True)]
    legend = 0.3 if m > 1 else 0.0  # inches: the legend's row under the axis label
    fig, (ax,) = figure(5.6, 0.9 + legend + 0.22 * n * max(m, 1), names, bottom=0.5 + legend)
    height = 0.8 / m
    y = np.arange(n)
    for j, s in enumerate(series):
        ax.barh(y - 0.4 + height * (j + 0.5), [v[j] for v in values], height=height,
                color=color(j), label=s)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    ax.set_title(title)
    if m > 1:
        fig.legend(loc="lower center", ncol=m, fontsize=8, frameon=False,
                   bbox_to_anchor=(0.5, 0.0))
    return svg(fig, name, title)


@styled
def forest(name: str, title: str, labels: Sequence[str], delta: Sequence[float],
           low: Sequence[float], high: Sequence[float], significant: Sequence[bool | None]
           ) -> str:
    """Differences against the baseline with their intervals, one row per label: green
    or red where significant after the correction, grey where not."""
    n = len(labels)
    fig, (ax,) = figure(5.6, 0.9 + 0.24 * n, labels)
    y = np.arange(n)
    for i in range(n):
        c = (GOOD if delta[i] > 0 else BAD) if significant[i] else NEUTRAL
        if np.isfinite(low[i]):
            ax.plot([low[i], high[i]], [y[i], y[i]], color=c, linewidth=2)
        ax.plot([delta[i]], [y[i]], "o", color=c, markersize=5)
    ax.axvline(0, color="#2a2b2c", linewidth=1)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("difference from the baseline (run - baseline)")
    ax.set_title(title)
    return svg(fig, name, title)


@styled
def win_tie_loss(name: str, title: str, labels: Sequence[str], wins: Sequence[int],
                 ties: Sequence[int], losses: Sequence[int]) -> str:
    """Shares of users a run helps, leaves equal and hurts, one stacked bar per label."""
    n = len(labels)
    fig, (ax,) = figure(5.6, 1.2 + 0.26 * n, labels, bottom=0.85)
    y = np.arange(n)
    left = np.zeros(n)
    total = np.maximum(np.add(np.add(wins, ties), losses), 1)
    for part, label, c in ((wins, "win", GOOD), (ties, "tie", NEUTRAL), (losses, "loss", BAD)):
        share = np.asarray(part) / total
        ax.barh(y, share, left=left, color=c, label=label, height=0.7)
        left += share
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(_percent())
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("share of users compared")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(0, -0.45 / (0.26 * n + 0.03)), ncol=3,
              fontsize=8)
    return svg(fig, name, title)


@styled
def lorenz(name: str, title: str, x: np.ndarray, series: Sequence[tuple[str, Sequence[float]]]
           ) -> str:
    """Lorenz curves of exposure: the diagonal is every item equally exposed."""
    fig, (ax,) = figure(5.6, 3.4, bottom=0.55)
    ax.plot([0, 1], [0, 1], color="#2a2b2c", linewidth=1, linestyle=":", label="equal")
    for i, (label, y) in enumerate(series):
        ax.plot(x, y, color=NEUTRAL if label == "training" else color(i - 1), label=label,
                linestyle="--" if label == "training" else "-")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.xaxis.set_major_formatter(_percent())
    ax.yaxis.set_major_formatter(_percent())
    ax.set_xlabel("share of catalog items (least exposed first)")
    ax.set_ylabel("share of exposure")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    return svg(fig, name, title)


@styled
def groups(name: str, title: str, series: Sequence[tuple[str, Sequence[float]]]) -> str:
    """Shares of training interactions and of recommendations per popularity group of the
    catalog (most popular tenth first)."""
    n = len(series[0][1])
    fig, (ax,) = figure(5.6, 2.8)
    width = 0.8 / len(series)
    x = np.arange(n)
    for j, (label, shares) in enumerate(series):
        c = NEUTRAL if label == "training" else color(j - 1)
        ax.bar(x - 0.4 + width * (j + 0.5), shares, width=width, color=c, label=label)
    ax.set_xticks(x, [f"{i + 1}" for i in range(n)])
    ax.set_xlabel("catalog items by training popularity (group 1 = most popular)")
    ax.set_ylabel("share")
    ax.yaxis.set_major_formatter(_percent())
    ax.grid(axis="x", visible=False)
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize=8)
    return svg(fig, name, title)


@styled
def heatmap(name: str, title: str, labels: Sequence[str], difference: Sequence[Sequence[float]],
            significant: Sequence[Sequence[bool]]) -> str:
    """Differences between every pair of runs (column - row), coloured by sign where
    significant, grey where not; the value written in each cell."""
    from matplotlib.patches import Rectangle  # optional dependency: matplotlib (rankeval[report])

    n = len(labels)
    # wide enough for the title beside the labels' margin (a long metric's title ran past a
    # narrow heatmap's edge): about 0.08 inch a character of the bold 10-point title
    margin = 0.3 + 0.068 * max(len(str(x)) for x in labels)
    fig, (ax,) = figure(max(1.6 + 0.75 * n, margin + 0.08 * len(title) + 0.2), 0.9 + 0.45 * n,
                        labels)
    for i in range(n):
        for j in range(n):
            d = difference[i][j]
            if i == j:
                face = "none"
            elif significant[i][j]:
                face = GOOD if d > 0 else BAD
            else:
                face = NEUTRAL
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color=face,
                                   alpha=0.35 if i != j else 0))
            if i != j:
                ax.text(j, i, f"{d:+.3f}", ha="center", va="center", fontsize=7)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xticks(range(n), labels, rotation=30, ha="right")
    ax.set_yticks(range(n), labels)
    ax.grid(False)
    ax.set_title(title)
    return svg(fig, name, title)



@styled
def intervals(name: str, title: str, labels: Sequence[str], series: Sequence[str],
              values: Sequence[Sequence], xlabel: str = "mean over the queries",
              zero: bool = False) -> str:
    """Per label, one estimate per series side by side, each a point with its interval
    (``values[i][j]``: an object with ``value``, ``low``, ``high``; NaN: not drawn); with
    ``zero``, a line at 0 (differences)."""
    return svg(intervals_figure(title, labels, series, values, xlabel, zero), name, title)


@styled
def intervals_figure(title: str, labels: Sequence[str], series: Sequence[str],
                     values: Sequence[Sequence], xlabel: str = "mean over the queries",
                     zero: bool = False):
    """``intervals``' figure. The legend has a row of its own under the x axis's label:
    above the axes it ran into the title on a narrow chart."""
    n, m = len(labels), len(series)
    legend = 0.3  # inches: the legend's row under the axis label
    fig, (ax,) = figure(5.6, 0.9 + legend + 0.3 * n * max(m, 1), labels, bottom=0.5 + legend)
    step = 0.8 / m
    y = np.arange(n)
    if zero:
        ax.axvline(0, color="#888888", linewidth=1, zorder=1)
    for j, s in enumerate(series):
        at = y - 0.4 + step * (j + 0.5)
        for i in range(n):
            v = values[i][j]
            if np.isfinite(v.low):
                ax.plot([v.low, v.high], [at[i], at[i]], color=color(j), linewidth=2)
        shown = [i for i in range(n) if np.isfinite(values[i][j].value)]
        ax.plot([values[i][j].value for i in shown], [at[i] for i in shown], "o",
                color=color(j), markersize=5, label=s)
    ax.set_yticks(y, labels)
    ax.set_ylim(n - 0.5, -0.5)  # top down, each label's band whole: no point on a spine
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.legend(loc="lower center", ncol=m, fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    return fig
