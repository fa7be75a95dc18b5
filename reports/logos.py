"""The three marks of the final page's "Powered by" section, drawn here as vector
graphics (no third-party trademark): the scoring engine, the two-layer forecaster and the
append-only ledger.

The forecaster's caption names the layer-1 backend the latest model was trained with, as
the store records it (`views.performance.performance`: the model run's `layer1_backend`),
the same backend the report's "Layer 1" line names: a foundation model only when one was
used, the empirical fallback said as such, nothing claimed before a model exists.

Each mark is drawn once into its own PDF form XObject (`FormXob.Logo-<name>`) and placed
from there, so a reader (or a test) finds exactly one drawing object per logo.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Table, TableStyle

from reports.layout import AMBER, CAPTION, FONT, NAVY, TEAL, text
from views.performance import Performance

SIZE = 30 * mm


def _engine(c: Canvas, s: float) -> None:
    """A hexagon holding three rising candlesticks."""
    cx = cy = s / 2
    points = [
        (cx + 0.48 * s * math.cos(math.radians(90 + 60 * i)), cy + 0.48 * s * math.sin(math.radians(90 + 60 * i)))
        for i in range(6)
    ]
    path = c.beginPath()
    path.moveTo(*points[0])
    for point in points[1:]:
        path.lineTo(*point)
    path.close()
    c.setFillColor(NAVY)
    c.drawPath(path, stroke=0, fill=1)
    c.setFillColor(TEAL)
    c.setStrokeColor(TEAL)
    c.setLineWidth(1.2)
    for i, (low, high) in enumerate([(0.30, 0.52), (0.36, 0.62), (0.44, 0.74)]):
        x = s * (0.32 + 0.18 * i)
        c.line(x, s * (low - 0.06), x, s * (high + 0.06))
        c.rect(x - s * 0.045, s * low, s * 0.09, s * (high - low), stroke=0, fill=1)


def _forecaster(c: Canvas, s: float) -> None:
    """Two rings (the two layers) crossed by a forecast curve that fans into a band."""
    c.setStrokeColor(NAVY)
    c.setLineWidth(2.2)
    c.circle(s / 2, s / 2, s * 0.46, stroke=1, fill=0)
    c.setStrokeColor(TEAL)
    c.circle(s / 2, s / 2, s * 0.32, stroke=1, fill=0)
    c.setStrokeColor(AMBER)
    c.setLineWidth(1.8)
    path = c.beginPath()
    path.moveTo(s * 0.12, s * 0.45)
    for i in range(1, 31):
        x = 0.12 + 0.76 * i / 30
        path.lineTo(s * x, s * (0.45 + 0.1 * math.sin(i / 4.0) + 0.12 * (i / 30) ** 2))
    c.drawPath(path, stroke=1, fill=0)


def _ledger(c: Canvas, s: float) -> None:
    """Three stacked pages (rows only ever appended) with a check mark."""
    for i, colour in enumerate([TEAL, AMBER, NAVY]):
        c.setFillColor(colour)
        c.roundRect(s * (0.12 + 0.08 * i), s * (0.14 + 0.1 * i), s * 0.56, s * 0.5, s * 0.05, stroke=0, fill=1)
    c.setStrokeColor("white")
    c.setLineWidth(2.4)
    c.line(s * 0.38, s * 0.5, s * 0.47, s * 0.41)
    c.line(s * 0.47, s * 0.41, s * 0.66, s * 0.62)


LOGOS: dict[str, tuple[str, Callable[[Canvas, float], None]]] = {
    "Engine": ("Engine v3: scoring and decisions", _engine),
    "Forecaster": ("Two-layer forecaster: layer 1 and a risk model", _forecaster),  # caption: forecaster_caption
    "Ledger": ("Append-only ledger: every row kept, every read as of a time", _ledger),
}


class Logo(Flowable):
    """One mark, drawn into a named form XObject on first use and placed from it."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.width = self.height = SIZE

    def draw(self) -> None:
        form = f"Logo-{self.name}"
        if not self.canv.hasForm(form):
            self.canv.beginForm(form, lowerx=0, lowery=0, upperx=SIZE, uppery=SIZE)
            LOGOS[self.name][1](self.canv, SIZE)
            self.canv.endForm()
        self.canv.doForm(form)


def forecaster_caption(perf: Performance) -> str:
    """What the forecaster mark claims: the layer-1 backend actually used (`perf`:
    views.performance.performance)."""
    backend = perf.get("layer1_backend")
    if backend is None:
        return "Two-layer forecaster: layer 1 and a risk model; no model has been trained yet"
    if perf.get("layer1_is_fallback"):
        return (
            f"Two-layer forecaster: layer 1 is the empirical fallback ({backend}), no foundation model; "
            "layer 2 the risk model"
        )
    return f"Two-layer forecaster: foundation model ({backend}) and risk model"


def powered_by(width: float, perf: Performance) -> Table:
    """The three logos side by side, each over its caption; the forecaster's names the
    layer-1 backend `perf` (views.performance.performance) reports."""
    captions = {name: caption for name, (caption, _) in LOGOS.items()}
    captions["Forecaster"] = forecaster_caption(perf)
    cells = [[Logo(name) for name in LOGOS], [text(captions[name], CAPTION) for name in LOGOS]]
    table = Table(cells, colWidths=[width / 3] * 3, hAlign="CENTER")
    table.setStyle(
        TableStyle(
            [
                FONT,
                ("ALIGN", (0, 0), (-1, 0), "CENTER"),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 6),
            ]
        )
    )
    return table
