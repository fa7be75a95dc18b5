"""Tables and charts for the notebooks (the stage notebooks and notebooks/research/), in
the reports' palette and type, with every number formatted for a reader: percentages as
percentages, money and counts with thousands separators, never a raw float.

- `styled(frame)`: a DataFrame as a formatted table (pandas Styler), each column formatted
  by what its name says it holds (`column_format`), its text HTML-escaped.
- `fmt_pct`, `fmt_money`, `fmt_count`, `fmt_number`: one value as text.
- `percent_axis`, `thousands_axis`, `millions_axis`: axis tick labels, with the decimals
  their ticks need, no two alike (`reports.charts.scaled_ticks`).
- `bar`, `figure`: small charts with a title and axis units; a figure shows itself in a
  notebook as a PNG.
- `markdown(text)`: prose rendered as Markdown in a notebook; `markdown_text(value)`: data
  (a stored name, a news title, a symbol) put into that prose, escaped to read as written.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from reports.charts import PALETTE, scaled_ticks
from reports.fonts import MATPLOTLIB_RC
from reports.format import fixed

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DASH = "-"
_DECIMAL = re.compile(r"-?\d+\.\d+")
COLOURS = [PALETTE["navy"], PALETTE["teal"], PALETTE["amber"], PALETTE["grey"], "#8e5ea2", "#c8553d"]

# Column names (or their endings) that hold a fraction to show as a percentage...
_FRACTION = (
    "_share",
    "_rate",
    "share",
    "rate",
    "weight",
    "accuracy",
    "_return",
    "return",
    "p_up",
    "spread",
    "drawdown",
    "volatility",
    "momentum_5",
    "momentum_20",
    "momentum_60",
    "percent_b",
    "bandwidth",
)
# ...a value already in percent...
_PERCENT = ("_pct", "pct", "change_pct", "spread_pct")
# ...money, or a count.
_MONEY = (
    "cash",
    "equity",
    "value",
    "price",
    "close",
    "open",
    "high",
    "low",
    "bid",
    "ask",
    "cost",
    "pnl",
    "gross",
    "fees",
    "limit",
    "amount",
    "discount",
    "market_value",
    "turnover",
    "adv_20",
    "adv",
)
_COUNT = (
    "count",
    "rows",
    "orders",
    "volume",
    "quantity",
    "trades",
    "days",
    "instruments",
    "n",
    "predictions",
    "sample_size",
    "models",
    "shares",
    "items",
    "written",
)


def fmt_pct(value: Any, digits: int = 1, signed: bool = False, fraction: bool = True) -> str:
    """A fraction (0.0123) or, with fraction=False, a percent (1.23) as '1.2%' (zero never
    "-0.0%": `reports.format.fixed`)."""
    if _missing(value):
        return DASH
    return f"{fixed(float(value) * (100 if fraction else 1), digits, signed)}%"


def fmt_money(value: Any, digits: int = 2) -> str:
    return DASH if _missing(value) else fixed(value, digits, grouping=True)


def fmt_count(value: Any) -> str:
    return DASH if _missing(value) else f"{round(float(value)):,}"


def fmt_year(value: Any) -> str:
    return DASH if _missing(value) else str(round(float(value)))


def fmt_number(value: Any, digits: int = 2) -> str:
    return DASH if _missing(value) else fixed(value, digits, grouping=True)


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def column_format(name: str) -> Callable[[Any], str] | None:
    """How a column reads, from its name: percent, money, count or a plain number (None
    for text columns, which are left as they are)."""
    key = name.lower()
    if key == "year":  # a calendar year, never a count: 2026, not "2,026"
        return fmt_year
    if _named(key, _PERCENT):
        return lambda v: fmt_pct(v, 2, fraction=False)
    if _named(key, _FRACTION):
        return lambda v: fmt_pct(v, 2)
    if _named(key, _MONEY):
        return fmt_money
    if _named(key, _COUNT):
        return fmt_count
    return None


def _named(key: str, names: Sequence[str]) -> bool:
    """Whether column `key` is one of `names` or ends in one as a word of its own (after "_"
    or a space): "market_value" is money and "warning_count" a count, but "discount" is no
    count, "mean" no "n" and "below" no "low" (a money column rounded to whole units as a count)."""
    words = {n.strip("_") for n in names}
    return key in words or any(key.endswith((f"_{w}", f" {w}")) for w in words)


def styled(frame, formats: dict[str, Callable[[Any], str] | str] | None = None, caption: str | None = None):  # noqa: ANN001, ANN201
    """`frame` as a formatted table: numbers by `column_format` (or `formats`: a column
    to a function or a format string), numbers right-aligned, no index column. Text cells
    and column labels are HTML-escaped (a news title `<img src=x onerror=...>` the feed
    reader unescaped is shown as that text, never put in the notebook's HTML as a tag);
    a `formats` function is given the escaped text."""
    import pandas as pd

    frame = frame.copy()
    for column in frame.columns:  # Decimal values stored as text ("81.250000") are numbers to format
        series = frame[column]
        if (
            pd.api.types.is_string_dtype(series)
            and len(series.dropna())
            and series.dropna().map(lambda v: isinstance(v, str) and _DECIMAL.fullmatch(v) is not None).all()
        ):
            frame[column] = pd.to_numeric(series)
    formats = dict(formats or {})
    for column in frame.columns:
        if column in formats:
            continue
        series = frame[column]
        if pd.api.types.is_bool_dtype(series):
            formats[column] = lambda v: DASH if v is None else ("yes" if v else "no")
        elif pd.api.types.is_numeric_dtype(series):
            formats[column] = column_format(str(column)) or (
                fmt_count if pd.api.types.is_integer_dtype(series) else fmt_number
            )
    styler = frame.style.format(formats, na_rep=DASH, escape="html").format_index(escape="html", axis=1)
    styler = styler.hide(axis="index")
    styler = styler.set_table_styles([{"selector": "th", "props": [("text-align", "left")]}])
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    if numeric:
        styler = styler.set_properties(subset=numeric, **{"text-align": "right"})
    return styler.set_caption(caption) if caption else styler


def markdown(text: str):  # noqa: ANN201 - IPython is imported lazily
    """`text`, the notebook author's Markdown, for a notebook to render; data in it goes
    through `markdown_text`."""
    from IPython.display import Markdown

    return Markdown(text)


# Markdown's inline marks (code, emphasis, links and images, table cells, strikethrough,
# math) and the marks that open a block at the start of a line (heading, list, rule; a
# minus sign's number is no list)
_INLINE_MARKS = re.compile(r"([\\`*_\[\]!|~$])")
_OPENING_MARKS = re.compile(r"^([#=]|[+\-](?=[\s+\-]|$))|^(\d+)([.)])(?=\s|$)")


def markdown_text(value: object) -> str:
    """`value`, data (a stored name, a news title, a symbol, a paragraph a writer wrote), as
    Markdown that reads as written wherever the author's Markdown puts it: HTML's special
    characters as entities (a title `<img src=x onerror=...>` is shown, never a tag), every
    inline mark and an opening one backslash-escaped (no link, image, emphasis or table
    cell of the data's making), its line breaks as spaces (no block of its own)."""
    text = html.escape(" ".join(str(value).split()), quote=False)
    return _OPENING_MARKS.sub(_escaped_opening, _INLINE_MARKS.sub(r"\\\1", text), count=1)


def _escaped_opening(match: re.Match[str]) -> str:
    """A heading's, a list's or a rule's opening mark escaped (`#`, `-`, `1.`)."""
    mark, digits, point = match.groups()
    return f"\\{mark}" if mark else f"{digits}\\{point}"


# --- charts -----------------------------------------------------------------------------


def figure(width: float = 7.0, height: float = 3.2, ncols: int = 1, nrows: int = 1):  # noqa: ANN201
    """A figure and its axes in the reports' look (grid, no top/right spines). The figure
    is not pyplot's: a notebook shows it once, as the cell's value (`Chart`)."""
    import matplotlib

    with matplotlib.rc_context(MATPLOTLIB_RC):
        fig = _chart_class()(figsize=(width, height), dpi=100)
        axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.flat:
        _look(ax)
    return fig, (axes[0, 0] if nrows == ncols == 1 else axes.flatten())


@cache
def _chart_class():  # noqa: ANN202 - matplotlib is imported lazily
    from matplotlib.figure import Figure

    class Chart(Figure):
        """A Figure that a notebook displays as a PNG by itself (no pyplot, no inline
        backend), and that names its title in plain text."""

        def _repr_png_(self) -> bytes:
            return tight_png(self)

        def __repr__(self) -> str:
            titles = [ax.get_title(loc="left") or ax.get_title() for ax in self.axes]
            return f"<chart: {self._suptitle.get_text() if self._suptitle else '; '.join(t for t in titles if t)}>"

    return Chart


def tight_png(fig: Figure) -> bytes:
    """The figure as a PNG cropped to what it draws plus `savefig.pad_inches`, as
    `savefig(bbox_inches="tight")` makes it, in one draw instead of two: savefig draws the
    figure once with drawing disabled (to run its layout and measure it) and again at the
    cropped size; here it is drawn once on its own canvas, measured with that draw's
    renderer and its pixels cropped (a 20-name bar chart: 130-145 ms against 155-260 ms on
    2 cores). The picture is savefig's, pixel for pixel for the stage charts
    (tests/reports/test_stage_figures.py). A figure that draws past its own edges (a
    legend placed outside the axes, a label left of the figure) is saved savefig's way,
    which widens the canvas to hold it."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawn = fig.get_tightbbox(canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    width, height = canvas.get_width_height()
    # savefig's canvas: the drawn extent in pixels, truncated unless within 1e-8 of a whole pixel
    crop_width, crop_height = (int(size * fig.dpi + 1e-8) for size in (drawn.width, drawn.height))
    left, top = round(drawn.x0 * fig.dpi), round(height - drawn.y0 * fig.dpi - crop_height)  # its origin: bottom left
    right, bottom = left + crop_width, top + crop_height
    buffer = io.BytesIO()
    if left < 0 or top < 0 or right > width or bottom > height:
        fig.savefig(buffer, format="png", dpi=fig.dpi, bbox_inches="tight")
    else:
        pixels = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        pixels.crop((left, top, right, bottom)).save(buffer, format="png")
    return buffer.getvalue()


def _look(ax) -> None:  # noqa: ANN001
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(axis="y", color=PALETTE["rule"], linewidth=0.5)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=8, colors=PALETTE["grey"])


def percent_axis(ax, axis: str = "y", digits: int = 0, fraction: bool = True) -> None:  # noqa: ANN001
    """Tick labels as percentages (of fractions, or of values already in percent), with at
    least `digits` decimals and as many more as the ticks need (`scaled_ticks`)."""
    scaled_ticks(ax.yaxis if axis == "y" else ax.xaxis, 0.01 if fraction else 1.0, digits, "%")


def thousands_axis(ax, axis: str = "y") -> None:  # noqa: ANN001
    scaled_ticks(ax.yaxis if axis == "y" else ax.xaxis)


def millions_axis(ax, axis: str = "y") -> None:  # noqa: ANN001
    scaled_ticks(ax.yaxis if axis == "y" else ax.xaxis, 1e6, 2, "M")


def titled(ax, title: str, xlabel: str = "", ylabel: str = "") -> None:  # noqa: ANN001
    ax.set_title(title, fontsize=10, color=PALETTE["navy"], loc="left")
    ax.set_xlabel(xlabel, fontsize=8, color=PALETTE["grey"])
    ax.set_ylabel(ylabel, fontsize=8, color=PALETTE["grey"])


@dataclass(frozen=True)
class BarStyle:
    """How `bar` draws: the axes' labels, bars across (`horizontal`) or up, each bar's label
    (`value_format`, none without it), the bars' colours (navy without them) and the
    figure's size (its height, without one, from the number of bars)."""

    xlabel: str = ""
    ylabel: str = ""
    horizontal: bool = False
    value_format: Callable[[float], str] | None = None
    colours: Sequence[str] | None = None
    width: float = 7.0
    height: float | None = None


def bar(
    labels: Sequence[Any], values: Sequence[float], title: str, style: BarStyle = BarStyle()
) -> tuple[Figure, Axes]:
    """A bar chart with a title, axis units and each bar labelled with its formatted value."""
    labels = [str(label) for label in labels]
    horizontal, value_format = style.horizontal, style.value_format
    height = style.height or (max(2.2, 0.28 * len(labels) + 0.9) if horizontal else 3.2)
    fig, ax = figure(style.width, height)
    colour = list(style.colours) if style.colours else PALETTE["navy"]
    if horizontal:
        bars = ax.barh(labels, values, color=colour)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.grid(axis="x", color=PALETTE["rule"], linewidth=0.5)
    else:
        bars = ax.bar(labels, values, color=colour)
        if len(labels) > 8:
            ax.tick_params(axis="x", rotation=45)
    if value_format is not None:
        ax.bar_label(bars, labels=[value_format(v) for v in values], fontsize=7, padding=2, color=PALETTE["grey"])
    titled(ax, title, style.xlabel, style.ylabel)
    fig.tight_layout()
    return fig, ax
