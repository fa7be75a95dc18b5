"""The briefing's two charts, drawn with matplotlib (no screen) in the reports' palette and
type (reports/fonts.py), written as SVG and converted by svglib into reportlab vector
drawings: lines, bars and text stay vectors and text in the PDF, never a bitmap."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from functools import cache, wraps
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from reportlab.graphics.shapes import Drawing
from reportlab.lib.units import mm

from reports import fonts
from reports.format import fixed

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PALETTE = {"navy": "#1f3a5f", "teal": "#2a9d8f", "amber": "#e9a23b", "grey": "#5f6b7a", "rule": "#c9d2dc"}
HEIGHT = 62 * mm
P = ParamSpec("P")
T = TypeVar("T")


def _in_report_type(draw: Callable[P, T]) -> Callable[P, T]:
    """Draw under the reports' matplotlib settings (fonts.MATPLOTLIB_RC): a Text takes its
    family when it is created, so the whole chart is drawn inside them."""

    @wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> T:
        import matplotlib

        with matplotlib.rc_context(fonts.MATPLOTLIB_RC):
            return draw(*args, **kwargs)

    return drawn


def _figure(width: float):  # noqa: ANN202 - matplotlib is imported lazily
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width / 72, HEIGHT / 72), dpi=72)
    axes = figure.add_subplot()
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    axes.tick_params(labelsize=7, colors=PALETTE["grey"])
    axes.grid(axis="y", color=PALETTE["rule"], linewidth=0.5)
    axes.set_axisbelow(True)
    return figure, axes


def _unit(axes, label: str) -> None:  # noqa: ANN001
    """The y axis's unit, level above its top end: rotated text reads back letter by letter
    reversed in PDF text extraction, so no chart text is rotated."""
    axes.set_ylabel(label, fontsize=7, color=PALETTE["grey"], rotation=0, ha="left", va="bottom")
    axes.yaxis.set_label_coords(-0.01, 1.02)


def _image(figure, width: float) -> Drawing:  # noqa: ANN001
    """The figure as a reportlab Drawing (a flowable) of `width` x HEIGHT points."""
    from svglib.svglib import svg2rlg

    fonts.register()
    buffer = io.BytesIO()
    figure.tight_layout(pad=0.4)
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    buffer.seek(0)
    drawing = svg2rlg(buffer)
    scale = width / drawing.width
    drawing.scale(scale, scale)
    drawing.width, drawing.height = width, drawing.height * scale
    drawing.initialFontName = fonts.REGULAR  # reportlab's default state would name Helvetica
    return drawing


def scaled_ticks(axis, scale: float = 1.0, least: int = 0, suffix: str = "") -> None:  # noqa: ANN001
    """`axis`'s tick labels as value / `scale` with thousands separators, `suffix` and the
    fewest decimals (at least `least`) that print every tick as it is: ticks 2,500 apart
    read 10.0025M and 10.0050M, never 10.00M twice. The chart's every number axis reads so."""
    axis.set_major_formatter(_scaled_formatter()(scale, least, suffix))


@cache
def _scaled_formatter() -> type:
    from matplotlib.ticker import Formatter

    class Scaled(Formatter):
        """`scaled_ticks`'s labels: the decimals are chosen from all the axis's ticks at once."""

        def __init__(self, scale: float, least: int, suffix: str) -> None:
            self.scale, self.least, self.suffix, self.digits = scale, least, suffix, least

        def set_locs(self, locs: Sequence[float]) -> None:
            self.digits = tick_digits([tick / self.scale for tick in locs], self.least)

        def __call__(self, value: float, pos: int | None = None) -> str:
            return f"{fixed(value / self.scale, self.digits, grouping=True)}{self.suffix}"

    return Scaled


def tick_digits(ticks: Sequence[float], least: int) -> int:
    """The fewest decimals, at least `least`, that print each of `ticks` exactly (a locator
    ticks at round steps, so a few more than `least` at most)."""
    exact = lambda digits: all(abs(round(t, digits) - t) <= 1e-9 * max(1.0, abs(t)) for t in ticks)  # noqa: E731
    return next((digits for digits in range(least, least + 7) if exact(digits)), least + 6)


def _day_axis(axes, days: Sequence[date]) -> None:  # noqa: ANN001
    """A chart's time axis by executed day: from the first day to the last and no further
    (one day: the week around it, not matplotlib's default of years), ticked at whole days
    (on a short span matplotlib's own locator ticks hours), concisely labelled, with the
    span's calendar under it (`span_offset`)."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DayLocator

    first, last = (days[0] - timedelta(days=3), days[0] + timedelta(days=3)) if len(days) == 1 else (days[0], days[-1])
    locator = AutoDateLocator(maxticks=7) if (last - first).days > 7 else DayLocator()
    formatter = ConciseDateFormatter(locator)
    # matplotlib's offset names the last tick's month ("2026-Dec" under Sep to Dec): the span's instead
    formatter.get_offset = lambda: span_offset(first, last)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(formatter)
    axes.set_xlim(first, last)


def span_offset(first: date, last: date) -> str:
    """What the time axis's ticks leave out, under them: the month and year of a span within
    one month ("2026-Dec", whose ticks are days), the year of a span within one year ("2026",
    whose ticks name the months), both years of a span across a new year ("2025-2026", the
    ticks naming the new year where it starts)."""
    if (first.year, first.month) == (last.year, last.month):
        return first.strftime("%Y-%b")
    return str(first.year) if first.year == last.year else f"{first.year}-{last.year}"


WRITTEN_DOWN_LABEL = "Untraded holdings left out of liquid equity"


@_in_report_type
def equity_curve(
    days: Sequence[date],
    equity: Sequence[float],
    liquid: Sequence[float],
    starting_cash: float,
    width: float,
    currency: str = "JMD",
    written_down: Sequence[bool] = (),
) -> Drawing:
    """`equity_figure` as a drawing `width` points wide."""
    return _image(equity_figure(days, equity, liquid, starting_cash, width, currency, written_down), width)


@_in_report_type
def equity_figure(
    days: Sequence[date],
    equity: Sequence[float],
    liquid: Sequence[float],
    starting_cash: float,
    width: float,
    currency: str = "JMD",
    written_down: Sequence[bool] = (),
) -> Figure:
    """Equity and liquid equity by executed day, with the starting cash as a reference;
    the axis names the market's currency. `written_down[i]`: on day i liquid equity left
    out holdings that did not trade (marked on the liquid line, with a legend entry)."""
    figure, axes = _figure(width)
    axes.plot(days, equity, color=PALETTE["navy"], linewidth=1.6, label="Equity", marker="o" if len(days) < 3 else None)
    axes.plot(days, liquid, color=PALETTE["teal"], linewidth=1.0, linestyle="--", label="Liquid equity")
    marked = [(d, v) for d, v, down in zip(days, liquid, written_down) if down]
    if marked:
        axes.scatter(
            [d for d, _ in marked],
            [v for _, v in marked],
            marker="v",
            s=22,
            color=PALETTE["amber"],
            edgecolors=PALETTE["navy"],
            linewidths=0.5,
            zorder=3,
            label=WRITTEN_DOWN_LABEL,
        )
    axes.axhline(starting_cash, color=PALETTE["amber"], linewidth=0.8, label="Starting cash")
    _unit(axes, currency)
    scaled_ticks(axes.yaxis, 1e6, 2, "M")
    axes.legend(fontsize=7, frameon=False, loc="best")
    _day_axis(axes, days)
    return figure


@_in_report_type
def against_benchmarks(
    days: Sequence[date],
    book: Sequence[float],
    benchmarks: dict[str, Sequence[float]],
    drawdown: Sequence[float],
    width: float,
    index_name: str | None = None,
) -> Drawing:
    """`benchmarks_figure` as a drawing `width` points wide."""
    return _image(benchmarks_figure(days, book, benchmarks, drawdown, width, index_name), width)


@_in_report_type
def benchmarks_figure(
    days: Sequence[date],
    book: Sequence[float],
    benchmarks: dict[str, Sequence[float]],
    drawdown: Sequence[float],
    width: float,
    index_name: str | None = None,
) -> Figure:
    """The book's cumulative return beside each benchmark's (percent), and its drawdown
    from the running peak shaded below. `index_name`: which index `index` is (a published
    index's symbol, or cap_weighted)."""
    figure, axes = _figure(width)
    index = (
        "Index (cap-weighted)" if index_name == "cap_weighted" else f"Index ({index_name})" if index_name else "Index"
    )
    names = {"equal_weight_liquid": "Equal-weighted liquid", "index": index}
    colours = [PALETTE["teal"], PALETTE["amber"], PALETTE["grey"]]
    axes.plot(days, [100 * v for v in book], color=PALETTE["navy"], linewidth=1.6, label="AI portfolio")
    for (name, series), colour in zip(benchmarks.items(), colours):
        axes.plot(days, [100 * v for v in series], color=colour, linewidth=1.0, label=names.get(name, name))
    axes.fill_between(
        days,
        [100 * v for v in drawdown],
        0,
        color=PALETTE["navy"],
        alpha=0.15,
        linewidth=0,
        label="AI portfolio drawdown",
    )
    axes.axhline(0, color=PALETTE["grey"], linewidth=0.6)
    _unit(axes, "Cumulative return, %")
    axes.legend(fontsize=7, frameon=False, loc="best")
    _day_axis(axes, days)
    return figure


NULL_BAND_LABELS = {
    "live": "AI portfolio (as executed)",
    "model": "Model's book, replayed",
    "fixed_mean": "Fixed random books, mean",
    "fixed_band": "Fixed random books, 10th-90th percentile",
    "daily_band": "Daily random books, 10th-90th percentile",
}


@_in_report_type
def against_nulls(
    days: Sequence[date], live: Sequence[float], band: dict[str, Sequence[float]], width: float
) -> Drawing:
    """`nulls_figure` as a drawing `width` points wide."""
    return _image(nulls_figure(days, live, band, width), width)


@_in_report_type
def nulls_figure(days: Sequence[date], live: Sequence[float], band: dict[str, Sequence[float]], width: float) -> Figure:
    """The AI book's cumulative return (percent) inside the band of its null books: the
    fixed random books' 10th-90th percentile by day (shaded) and their mean, the daily
    random books' band (outlined), the model's book replayed by the nulls' engine (dashed)
    and the AI portfolio's executed record (`live`: its replayed and live days alike);
    `band`: portfolio/nulls.py NullBand as a dict, over the same days. A family without
    books is left out of the chart and its legend."""
    figure, axes = _figure(width)
    percent = lambda values: [100 * v for v in values]  # noqa: E731
    if band.get("daily_random_low"):
        axes.fill_between(
            days,
            percent(band["daily_random_low"]),
            percent(band["daily_random_high"]),
            facecolor="none",
            edgecolor=PALETTE["amber"],
            linewidth=0.8,
            label=NULL_BAND_LABELS["daily_band"],
        )
    if band.get("fixed_random_low"):
        axes.fill_between(
            days,
            percent(band["fixed_random_low"]),
            percent(band["fixed_random_high"]),
            color=PALETTE["teal"],
            alpha=0.25,
            linewidth=0,
            label=NULL_BAND_LABELS["fixed_band"],
        )
        axes.plot(
            days,
            percent(band["fixed_random_mean"]),
            color=PALETTE["teal"],
            linewidth=1.0,
            label=NULL_BAND_LABELS["fixed_mean"],
        )
    axes.plot(
        days,
        percent(band["model"]),
        color=PALETTE["navy"],
        linewidth=1.0,
        linestyle="--",
        label=NULL_BAND_LABELS["model"],
    )
    axes.plot(days, percent(live), color=PALETTE["navy"], linewidth=1.6, label=NULL_BAND_LABELS["live"])
    axes.axhline(0, color=PALETTE["grey"], linewidth=0.6)
    _unit(axes, "Cumulative return, %")
    drawn = {artist.get_label(): artist for artist in [*axes.get_lines(), *axes.collections]}
    shown = [label for label in NULL_BAND_LABELS.values() if label in drawn]  # the books first, then the bands
    axes.legend([drawn[label] for label in shown], shown, fontsize=7, frameon=False, loc="best")
    _day_axis(axes, days)
    return figure


@_in_report_type
def score_distribution(scores: Sequence[float], width: float) -> Drawing:
    """`score_figure` as a drawing `width` points wide."""
    return _image(score_figure(scores, width), width)


@_in_report_type
def score_figure(scores: Sequence[float], width: float) -> Figure:
    """Histogram of the day's Scores in 5-point bins, with the coin toss (50) marked; its
    axis counts instruments in whole numbers."""
    from matplotlib.ticker import MaxNLocator

    figure, axes = _figure(width)
    axes.hist(scores, bins=list(range(0, 105, 5)), color=PALETTE["navy"], edgecolor="white", linewidth=0.6)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.axvline(50, color=PALETTE["amber"], linewidth=1.2, label="50: as likely to beat the market as not")
    axes.set_xlim(0, 100)
    axes.set_xlabel("Score (0-100)", fontsize=7, color=PALETTE["grey"])
    _unit(axes, "Instruments")
    axes.legend(fontsize=7, frameon=False)
    return figure
