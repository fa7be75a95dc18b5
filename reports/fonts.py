"""One TrueType family for every letter of both reports, body text and charts alike:
DejaVu Sans, the family matplotlib ships in its own data folder (so no font download and
no system font is needed).

`register()` gives reportlab the four faces under the names below (embedded, subset, in
every PDF that uses them) and to svglib; `MATPLOTLIB_RC` makes matplotlib draw with the
same family. The charts are SVG whose text stays text, mapped by svglib onto the same registered faces, so a
PDF holds no font but these (tests/reports/test_pdf_quality.py reads them back).

A letter the family has no glyph for (CJK, for one: DejaVu Sans covers Latin, Greek,
Cyrillic, Arabic and Hebrew letters but no Han) was drawn as nothing, so a name printed
blank and the reader could not tell a name was there. `printable` shows each such letter
as MISSING (a white square, the mark a browser or a terminal draws for a letter its
font lacks), so the report says a letter is there that it cannot draw. Right-to-left
scripts are drawn left to right and unjoined (reportlab does no bidi or shaping).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

FAMILY = "DejaVu Sans"  # the family's name in matplotlib and in the SVG it writes
REGULAR = "DejaVuSans"
BOLD = "DejaVuSans-Bold"
ITALIC = "DejaVuSans-Oblique"
BOLD_ITALIC = "DejaVuSans-BoldOblique"
# matplotlib settings for a chart bound for a report (used under `matplotlib.rc_context`):
# the same family, and SVG text written as text rather than glyph outlines.
MATPLOTLIB_RC = {"font.family": "sans-serif", "font.sans-serif": [FAMILY], "svg.fonttype": "none"}
MISSING = "\u25a1"  # WHITE SQUARE: a letter no face of the family can draw
FACES = {
    REGULAR: "DejaVuSans.ttf",
    BOLD: "DejaVuSans-Bold.ttf",
    ITALIC: "DejaVuSans-Oblique.ttf",
    BOLD_ITALIC: "DejaVuSans-BoldOblique.ttf",
}


def font_dir() -> Path:
    """matplotlib's bundled TrueType folder."""
    import matplotlib

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf"


@cache
def register() -> str:
    """Register the family with reportlab and svglib (once per process); returns the
    regular face's reportlab name."""
    from reportlab.lib.fonts import addMapping
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    folder = font_dir()
    for name, file in FACES.items():
        pdfmetrics.registerFont(TTFont(name, str(folder / file)))
    pdfmetrics.registerFontFamily(REGULAR, normal=REGULAR, bold=BOLD, italic=ITALIC, boldItalic=BOLD_ITALIC)
    for bold, italic, face in ((0, 0, REGULAR), (1, 0, BOLD), (0, 1, ITALIC), (1, 1, BOLD_ITALIC)):
        addMapping(FAMILY, bold, italic, face)
    from svglib.fonts import register_font

    for weight, style, face in (
        ("normal", "normal", REGULAR),
        ("bold", "normal", BOLD),
        ("normal", "italic", ITALIC),
        ("bold", "italic", BOLD_ITALIC),
    ):
        register_font(FAMILY, str(folder / FACES[face]), weight=weight, style=style, rlgFontName=face)
    return REGULAR


def printable(value: str) -> str:
    """`value` with every letter that some face of the family has no glyph for shown as
    MISSING (line breaks and tabs kept)."""
    drawn = _drawn()
    if all(ord(ch) in drawn for ch in value):
        return value
    return "".join(ch if ord(ch) in drawn or ch in "\n\r\t" else MISSING for ch in value)


@cache
def _drawn() -> frozenset[int]:
    """The code points every face of the family has a glyph for."""
    from reportlab.pdfbase import pdfmetrics

    register()
    faces = [set(pdfmetrics.getFont(name).face.charToGlyph) for name in FACES]
    return frozenset(set.intersection(*faces))
