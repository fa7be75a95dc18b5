"""The look shared by both reports: page size (setting), one embedded type family
(DejaVu Sans, reports/fonts.py) in one scale and palette, the header line on every page
(company, report title, "Engine v3"), "Page N of M" footers, tables at the full text
width that repeat their header row when they split across pages, and the boxed notice
that says a section is not available yet. A section's heading always stays on the page of
the section's first block (`section` keeps them together).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_LEFT, TA_RIGHT
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    CondPageBreak,
    Flowable,
    Frame,
    KeepTogether,
    PageTemplate,
    Paragraph,
    Table,
    TableStyle,
)

from reports.fonts import BOLD, REGULAR, printable, register

register()

ENGINE = "Engine v3"
HEADER_FONT, HEADER_SIZE = BOLD, 8.5  # the header line on every page
PAGE_SIZES = {"A4": A4, "Letter": LETTER}
MARGIN = 18 * mm

NAVY = colors.HexColor("#1f3a5f")
TEAL = colors.HexColor("#2a9d8f")
AMBER = colors.HexColor("#e9a23b")
GREY = colors.HexColor("#5f6b7a")
RULE = colors.HexColor("#c9d2dc")
ZEBRA = colors.HexColor("#f3f6f9")
HEADER_FILL = colors.HexColor("#e3eaf2")
NOTICE_FILL = colors.HexColor("#fff6e5")

BODY = ParagraphStyle("body", fontName=REGULAR, fontSize=9.5, leading=13, alignment=TA_LEFT, spaceAfter=4)
SMALL = ParagraphStyle("small", parent=BODY, fontSize=8, leading=10.5, textColor=GREY)
TITLE = ParagraphStyle("title", parent=BODY, fontName=BOLD, fontSize=20, leading=24, textColor=NAVY, spaceAfter=2)
SUBTITLE = ParagraphStyle("subtitle", parent=BODY, fontSize=10.5, leading=14, textColor=GREY, spaceAfter=10)
# keepWithNext: a heading never ends a page without the block it introduces
HEADING = ParagraphStyle(
    "heading",
    parent=BODY,
    fontName=BOLD,
    fontSize=13,
    leading=17,
    textColor=NAVY,
    spaceBefore=10,
    spaceAfter=5,
    keepWithNext=1,
)
# a heading a size smaller, with less room around it
SUBHEADING = ParagraphStyle("subheading", parent=HEADING, fontSize=10.5, leading=14, spaceBefore=6, spaceAfter=2)
TABLE_FONT_SIZE = 8.5
CELL = ParagraphStyle("cell", parent=BODY, fontSize=TABLE_FONT_SIZE, leading=10.5, spaceAfter=0)
CAPTION = ParagraphStyle("caption", parent=CELL, alignment=TA_CENTER, textColor=GREY)
CELL_PADDING = 6  # reportlab's left and right padding of a table cell
FRAME_PADDING = 6  # the body frame's padding on each side (`render`)
# Tables are sized for the narrowest page's text width (A4's): as percentages they only widen on another.
TABLE_WIDTH = min(width for width, _ in PAGE_SIZES.values()) - 2 * MARGIN - 2 * FRAME_PADDING
CELL_RIGHT = ParagraphStyle("cell-right", parent=CELL, alignment=TA_RIGHT)
HEAD = ParagraphStyle("head", parent=CELL, fontName=BOLD, textColor=NAVY)
HEAD_RIGHT = ParagraphStyle("head-right", parent=HEAD, alignment=TA_RIGHT)
# Every table's cell font, also of cells that hold paragraphs (reportlab sets it on the canvas
# for each cell; left unset it is Helvetica, a font that is not embedded).
FONT = ("FONTNAME", (0, 0), (-1, -1), REGULAR)
DIGEST = ParagraphStyle("digest", parent=CELL, fontSize=7.5)


@dataclass(frozen=True)
class Rendered:
    pdf: bytes
    pages: int


def text(value: str, style: ParagraphStyle = BODY) -> Paragraph:
    """A paragraph of plain text (escaped: stored text never becomes markup; a letter the
    font cannot draw shown as a white square, reports/fonts.py `printable`)."""
    return Paragraph(escape(printable(value)), style)


def heading(value: str) -> Paragraph:
    return text(value, HEADING)


def notice(reason: str) -> Table:
    """A boxed 'not available yet' line for a section with nothing to show."""
    return caution(f"Not available yet: {reason}")


def caution(message: str) -> Table:
    """A boxed line the reader must not miss (a notice, or a figure's caveat)."""
    box = Table([[text(message, BODY)]], colWidths=["100%"])
    box.setStyle(
        TableStyle(
            [
                FONT,
                ("BACKGROUND", (0, 0), (-1, -1), NOTICE_FILL),
                ("BOX", (0, 0), (-1, -1), 0.6, AMBER),
                ("LEFTPADDING", (0, 0), (-1, -1), 8),
                ("TOPPADDING", (0, 0), (-1, -1), 5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 5),
            ]
        )
    )
    return box


def data_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float | str] | None = None,
    numeric_from: int = 1,
    numeric_to: int | None = None,
) -> Table:
    """A table as wide as the text, whose header row repeats on every page it spans;
    columns from `numeric_from` up to `numeric_to` (not included; default: the last
    column included) are figures, right-aligned, the others text, left-aligned (a text
    column after the figures: the AI positions' Flags). `widths`: fractions of the text
    width as "NN%" strings (the default: `_widths`, each heading and figure whole on one
    line where the table has room). A heading, or a cell, wider than its column wraps
    inside it, never over the next one."""
    body = [[c if isinstance(c, Flowable) else printable(str(c)) for c in row] for row in rows]
    figures = range(numeric_from, len(header) if numeric_to is None else numeric_to)
    widths = widths or _widths(list(header), body, figures)
    room = [float(w[:-1]) / 100 * TABLE_WIDTH - 2 * CELL_PADDING if isinstance(w, str) else w for w in widths]
    aligned = [CELL_RIGHT if i in figures else CELL for i in range(len(header))]
    heads = [text(h, HEAD_RIGHT if i in figures else HEAD) for i, h in enumerate(header)]
    cells = [[_fitted(c, room[i], aligned[i]) for i, c in enumerate(row)] for row in body]
    table = Table([heads, *cells], colWidths=widths, repeatRows=1, hAlign="LEFT")
    style = [
        ("FONTNAME", (0, 0), (-1, 0), BOLD),
        ("FONTNAME", (0, 1), (-1, -1), REGULAR),
        ("FONTSIZE", (0, 0), (-1, -1), TABLE_FONT_SIZE),
        ("TEXTCOLOR", (0, 0), (-1, 0), NAVY),
        ("BACKGROUND", (0, 0), (-1, 0), HEADER_FILL),
        ("LINEBELOW", (0, 0), (-1, 0), 0.8, NAVY),
        ("LINEBELOW", (0, -1), (-1, -1), 0.4, RULE),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("TOPPADDING", (0, 0), (-1, -1), 3),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
    ]
    style += [("ALIGN", (figures.start, 0), (figures.stop - 1, -1), "RIGHT")] if figures else []
    style += [("BACKGROUND", (0, i), (-1, i), ZEBRA) for i in range(2, len(body) + 1, 2)]
    table.setStyle(TableStyle(style))
    return table


def _fitted(cell: str | Flowable, room: float, style: ParagraphStyle) -> str | Flowable:
    """A cell's text as it is when it fits its column (`room`, in points), else a paragraph
    that wraps inside the column."""
    if isinstance(cell, Flowable) or stringWidth(cell, REGULAR, TABLE_FONT_SIZE) <= room:
        return cell
    return text(cell, style)


DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
SPARE = 0.5  # points a column has beyond its text: its width is a rounded percentage of the table's


def _widths(header: list[str], body: list[list[str | Flowable]], figures: range) -> list[str]:
    """Column widths as percentages of the text width, from what each column's text needs
    (measured in its font, at least six digits; a flowable as twelve). Where the table has
    room, in proportion to that need. Where it has not, the figures (`figures`) and the
    columns of dates (`_dates`) keep their width, so each reads whole on one line, and the
    text columns share what is left and wrap (`_shared`); only a table too wide even for
    its figures and dates is shared out in proportion, and whatever does not fit wraps."""
    whole = [i in figures or _dates(body, i) for i in range(len(header))]
    needs = _needs([_needed(h, BOLD) for h in header], body)
    if sum(needs) > TABLE_WIDTH:  # short of room: a figure's heading puts its unit ("(JMD)") on a line below
        heads = [_needed_in_two(h) if whole[i] else _needed(h, BOLD) for i, h in enumerate(header)]
        needs = _needs(heads, body)
    heads = [_needed(h, BOLD) for h in header]
    widths = needs
    if sum(needs) > TABLE_WIDTH and not all(whole):
        words = [max(heads[i], *(_longest_word(row[i]) for row in body)) for i in range(len(header))]
        texts = [i for i, w in enumerate(whole) if not w]
        left = TABLE_WIDTH - sum(n for n, w in zip(needs, whole) if w)
        shared = _shared([heads[i] for i in texts], [words[i] for i in texts], [needs[i] for i in texts], left)
        widths = [needs[i] if whole[i] else shared[texts.index(i)] for i in range(len(header))] if shared else needs
    return [f"{100 * w / sum(widths):.3f}%" for w in widths]


def _needs(heads: list[float], body: list[list[str | Flowable]]) -> list[float]:
    """Each column's width: its heading's (`heads`), at least six digits', its widest cell's."""
    return [
        max(head, _needed("0" * 6, REGULAR), *(_needed(row[i], REGULAR) for row in body))
        for i, head in enumerate(heads)
    ]


UNIT = re.compile(r"(?P<name>.+) (?P<unit>\([^()\s]+\))")  # "Value (JMD)": a money heading and its currency


def _needed_in_two(heading: str) -> float:
    """The width a heading that ends in its unit ("Value (JMD)", reports/format.py
    `in_currency`) takes with the unit on a line below: the wider of the two lines, in the
    heading's font; any other heading's whole width."""
    named = UNIT.fullmatch(heading)
    if named is None:
        return _needed(heading, BOLD)
    return max(_needed(named["name"], BOLD), _needed(named["unit"], BOLD))


def _dates(body: list[list[str | Flowable]], column: int) -> bool:
    """Whether a column holds dates (YYYY-MM-DD; a dash or nothing where a row has none):
    a date keeps its width, as a figure does."""
    shown = [c for c in (row[column] for row in body) if not (isinstance(c, str) and c in ("", "-"))]
    return bool(shown) and all(isinstance(c, str) and DATE.fullmatch(c) for c in shown)


def _shared(heads: list[float], words: list[float], needs: list[float], left: float) -> list[float]:
    """The text columns' widths in `left` points: each as wide as its heading (where the
    headings do not fit, in proportion to them: they wrap too), then as wide as its longest
    word where that fits, the columns whose word costs least first (so a word wraps only
    where it must), and what is left in proportion to what each still needs. None (an empty
    list) where not even three digits' width is left for each."""
    if left < len(heads) * _needed("0" * 3, REGULAR):
        return []
    floors = list(heads) if sum(heads) <= left else [left * head / sum(heads) for head in heads]
    for i in sorted(range(len(heads)), key=lambda i: words[i] - floors[i]):
        extra = max(words[i] - floors[i], 0.0)
        if sum(floors) + extra <= left:
            floors[i] += extra
    beyond = [max(need - floor, 0.0) for need, floor in zip(needs, floors)]
    spare = left - sum(floors)
    return [floor + (spare * extra / sum(beyond) if sum(beyond) else 0.0) for floor, extra in zip(floors, beyond)]


def _longest_word(cell: str | Flowable) -> float:
    """The width of a cell's longest word (a flowable's as `_needed` measures it), with its padding."""
    if isinstance(cell, Flowable):
        return _needed(cell, REGULAR)
    return max((_needed(word, REGULAR) for word in cell.split()), default=0.0)


def _needed(cell: str | Flowable, font: str) -> float:
    """The width a cell's text takes in `font`, with the cell's padding and SPARE, in points."""
    shown = "0" * 12 if isinstance(cell, Flowable) else cell
    return stringWidth(shown, font, TABLE_FONT_SIZE) + 2 * CELL_PADDING + SPARE


def key_figures(pairs: Sequence[tuple[str, str | Flowable]]) -> Table:
    """Label/value pairs in two columns, for a section's headline numbers."""
    table = Table(
        [[text(label, CELL), value if isinstance(value, Flowable) else text(value, CELL)] for label, value in pairs],
        colWidths=["32%", "68%"],
        hAlign="LEFT",
    )
    table.setStyle(
        TableStyle(
            [
                FONT,
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, RULE),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
            ]
        )
    )
    return table


LONG_TABLE_ROWS = 20  # a longer table may start under its heading and split; a shorter one moves whole ...
SPLIT_ROWS = 5  # ... unless at least this many of its rows fit on the page and as many are left for the next
ROOM_FOR_A_SECTION = 45 * mm  # less room than this left on a page: a section starts on the next


class ShortTable(KeepTogether):
    """A short table (LONG_TABLE_ROWS or fewer): moves to the next page whole rather than
    leave a row or two behind, but splits (its header row repeated) where the page has
    room for SPLIT_ROWS of its rows and as many are left, rather than leave half a page
    blank."""

    def __init__(self, table: Table) -> None:
        super().__init__([table])
        self.table = table

    def split(self, aW: float, aH: float) -> list[Flowable]:  # noqa: N803 - reportlab's names
        self.table.wrap(aW, aH)
        heights = list(self.table._rowHeights)  # noqa: SLF001 - reportlab's row heights, set by wrap
        fits, used = 0, 0.0
        while fits < len(heights) and used + heights[fits] <= aH:
            used += heights[fits]
            fits += 1
        if fits - 1 >= SPLIT_ROWS and len(heights) - fits >= SPLIT_ROWS:  # the header row is not a row of figures
            return self.table.split(aW, aH)
        return super().split(aW, aH)


def section(title: str, *flowables: Flowable) -> list[Flowable]:
    """A heading and the section's blocks. The heading never ends a page: it is kept on
    one page with what leads the section (a short note and the first block, unless that
    is a long table, which starts under it and splits), and a section does not start in
    the last few centimetres of a page. A short table moves to the next page whole rather
    than leave a row or two behind (`ShortTable`)."""
    blocks = list(flowables)
    lead = 1 if blocks else 0
    while lead < min(len(blocks), 4) and _leads_in(blocks[lead - 1]):
        lead += 1
    if lead and _long_table(blocks[lead - 1]):
        lead -= 1
    rest = [ShortTable(b) if isinstance(b, Table) and not _long_table(b) else b for b in blocks[lead:]]
    return [CondPageBreak(ROOM_FOR_A_SECTION), *kept(heading(title), *blocks[:lead]), *rest]


def _leads_in(block: Flowable) -> bool:
    """A short note or a subheading: it belongs with the block after it."""
    return isinstance(block, Paragraph) and (block.style is SMALL or bool(getattr(block.style, "keepWithNext", 0)))


def _long_table(block: Flowable) -> bool:
    return isinstance(block, Table) and len(block._cellvalues) > LONG_TABLE_ROWS  # noqa: SLF001 - reportlab's rows


def kept(*flowables: Flowable) -> list[Flowable]:
    """Blocks (sections included) that move to the next page together rather than split:
    a closing block that must not end up alone at the top of a page."""
    flat: list[Flowable] = []
    for block in flowables:  # a KeepTogether inside another one breaks the page early: unwrap it
        flat += block._content if isinstance(block, KeepTogether) else [block]  # noqa: SLF001 - reportlab's list
    return [KeepTogether([f for f in flat if not isinstance(f, CondPageBreak)])]


class _NumberedCanvas(Canvas):
    """Holds every page until the end so each footer can say 'Page N of M'."""

    def __init__(self, *args: Any, header: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header = header
        self._pages: list[dict[str, object]] = []  # each page's canvas state

    def showPage(self) -> None:  # noqa: N802 - reportlab's name
        self._pages.append(dict(self.__dict__))
        self._startPage()

    def save(self) -> None:
        total = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self._decorate(total)
            super().showPage()
        super().save()

    def _decorate(self, total: int) -> None:
        width, height = self._pagesize
        self.saveState()
        self.setFont(HEADER_FONT, HEADER_SIZE)
        self.setFillColor(NAVY)
        self.drawString(MARGIN, height - 11 * mm, fitted(printable(self._header), width - 2 * MARGIN))
        self.setStrokeColor(TEAL)
        self.setLineWidth(1.2)
        self.line(MARGIN, height - 12.8 * mm, width - MARGIN, height - 12.8 * mm)
        self.setFont(REGULAR, 8)
        self.setFillColor(GREY)
        self.drawRightString(width - MARGIN, 10 * mm, f"Page {self._pageNumber} of {total}")
        self.restoreState()


def header_line(company: str, title: str) -> str:
    return f"{company} | {title} | {ENGINE}"


def fitted(header: str, room: float) -> str:
    """The header line in `room` points: a company name too long for it
    (`MARKETINTEL_COMPANY_NAME`) shortened with an ellipsis, so the report's title and the
    engine after it stay on the page whole (drawn at full length, they ran off its edge)."""
    if stringWidth(header, HEADER_FONT, HEADER_SIZE) <= room:
        return header
    company, *after = header.rsplit(" | ", 2)  # `header_line`: the company, then the title and the engine
    rest = "".join(f" | {part}" for part in after)
    while company and stringWidth(f"{company}…{rest}", HEADER_FONT, HEADER_SIZE) > room:
        company = company[:-1]
    return f"{company.rstrip()}…{rest}"


def render(story: list[Flowable], *, company: str, title: str, page_size: str, subject: str) -> Rendered:
    """Typeset `story` with the shared page furniture; returns the PDF and its page count."""
    buffer = io.BytesIO()
    size = PAGE_SIZES[page_size]
    doc = BaseDocTemplate(
        buffer,
        pagesize=size,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=20 * mm,
        bottomMargin=18 * mm,
        title=f"{title} - {company}",
        author=company,
        subject=subject,
        creator=f"marketintel reports ({ENGINE})",
        initialFontName=REGULAR,
    )
    frame = Frame(
        doc.leftMargin,
        doc.bottomMargin,
        doc.width,
        doc.height,
        leftPadding=FRAME_PADDING,
        rightPadding=FRAME_PADDING,
        id="body",
    )
    doc.addPageTemplates([PageTemplate(id="page", frames=[frame])])
    header = header_line(company, title)
    doc.build(story, canvasmaker=lambda *a, **k: _NumberedCanvas(*a, header=header, **k))
    return Rendered(buffer.getvalue(), doc.page)


def content_width(page_size: str) -> float:
    return PAGE_SIZES[page_size][0] - 2 * MARGIN
