"""The briefing's two charts, drawn with matplotlib (Agg, no screen) into PNG images sized
for the page, in the reports' palette."""
from __future__ import annotations

import io
from datetime import date, timedelta
from typing import Sequence

from reportlab.lib.units import mm
from reportlab.platypus import Image

PALETTE = {"navy": "#1f3a5f", "teal": "#2a9d8f", "amber": "#e9a23b", "grey": "#5f6b7a", "rule": "#c9d2dc"}
HEIGHT = 62 * mm
DPI = 160


def _figure(width: float):  # noqa: ANN202 - matplotlib is imported lazily
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width / 72, HEIGHT / 72), dpi=DPI)
    axes = figure.add_subplot()
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.tick_params(labelsize=7, colors=PALETTE["grey"])
    axes.grid(axis="y", color=PALETTE["rule"], linewidth=0.5)
    return figure, axes


def _image(figure, width: float) -> Image:  # noqa: ANN001
    figure.tight_layout(pad=0.4)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    buffer.seek(0)
    return Image(buffer, width=width, height=HEIGHT)


def equity_curve(days: Sequence[date], equity: Sequence[float], liquid: Sequence[float], starting_cash: float,
                 width: float, currency: str = "JMD") -> Image:
    """Equity and liquid equity by executed day, with the starting cash as a reference;
    the axis names the market's currency."""
    figure, axes = _figure(width)
    axes.plot(days, equity, color=PALETTE["navy"], linewidth=1.6, label="Equity", marker="o" if len(days) < 3 else None)
    axes.plot(days, liquid, color=PALETTE["teal"], linewidth=1.0, linestyle="--", label="Liquid equity")
    axes.axhline(starting_cash, color=PALETTE["amber"], linewidth=0.8, label="Starting cash")
    axes.set_ylabel(currency, fontsize=7, color=PALETTE["grey"])
    axes.yaxis.set_major_formatter(lambda value, _: f"{value / 1e6:,.2f}M")
    axes.legend(fontsize=7, frameon=False, loc="best")
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

    locator = AutoDateLocator(maxticks=7)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    if len(days) == 1:  # one executed day: a week around it, not matplotlib's default of years
        axes.set_xlim(days[0] - timedelta(days=3), days[0] + timedelta(days=3))
    return _image(figure, width)


def score_distribution(scores: Sequence[float], long_at: float, avoid_at: float, width: float) -> Image:
    """Histogram of the day's Scores in 5-point bins, with the Action thresholds marked."""
    figure, axes = _figure(width)
    axes.hist(scores, bins=list(range(0, 105, 5)), color=PALETTE["navy"], edgecolor="white", linewidth=0.6)
    axes.axvline(long_at, color=PALETTE["teal"], linewidth=1.2, label=f"LONG at {long_at:g}")
    axes.axvline(avoid_at, color=PALETTE["amber"], linewidth=1.2, label=f"AVOID at or below {avoid_at:g}")
    axes.set_xlim(0, 100)
    axes.set_xlabel("Score (0-100)", fontsize=7, color=PALETTE["grey"])
    axes.set_ylabel("Instruments", fontsize=7, color=PALETTE["grey"])
    axes.legend(fontsize=7, frameon=False)
    return _image(figure, width)
