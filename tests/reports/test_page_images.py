"""`make report-images`: each page of a report becomes one PNG named as docs/reports.md
links it, drawn as the page reads (not a blank canvas), without a system package."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from reports.page_images import main, write_page_images


def _two_pages(path: Path) -> Path:
    canvas = Canvas(str(path), pagesize=A4)
    for words in ("Quant Briefing", "Track record"):
        canvas.setFont("Helvetica-Bold", 48)
        canvas.drawString(60, 700, words)
        canvas.rect(60, 300, 300, 200, fill=1)
        canvas.showPage()
    canvas.save()
    return path


def test_each_page_is_one_image_named_as_the_docs_link_it(tmp_path: Path) -> None:
    pdf = _two_pages(tmp_path / "quant-briefing.pdf")
    (tmp_path / "out").mkdir()
    written = write_page_images(pdf, tmp_path / "out" / "quant-briefing")
    assert [p.name for p in written] == ["quant-briefing-1.png", "quant-briefing-2.png"]
    with Image.open(written[0]) as image:
        assert image.size == (579, 819)  # A4 at 70 dpi, as pdftoppm -r 70 drew it
        grey = image.convert("L")
        dark = sum(1 for value in grey.getdata() if value < 128)
    # the filled rectangle is 300 x 200 points, about 56,700 pixels at 70 dpi; the words a few thousand
    assert 56_000 < dark < 70_000


def test_a_missing_report_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "none.pdf"), str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path / 'none.pdf'} is not a file\n"
    assert not list(tmp_path.iterdir())
