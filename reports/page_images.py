"""Page images of a generated report, for docs/reports.md (`make report-images`).

Rendered by pdfplumber (a dependency already: the tests read the reports with it), which
draws a page through PDFium (pypdfium2, the renderer Chrome uses), so no system package
is needed; poppler's `pdftoppm` was one, and a machine without it could not remake the
images. Pages are `<prefix>-<n>.png` from 1 (as `pdftoppm -png` named a report of up to 9
pages), drawn with anti-aliasing, as pdftoppm drew them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pdfplumber

RESOLUTION = 70  # dots per inch: an A4 page is 579 x 819 pixels, legible in a table cell


def write_page_images(pdf: Path, prefix: Path, resolution: int = RESOLUTION) -> list[Path]:
    """Each page of `pdf` as `<prefix>-<n>.png`; the paths written, in page order."""
    written: list[Path] = []
    with pdfplumber.open(pdf) as document:
        for number, page in enumerate(document.pages, start=1):
            path = prefix.with_name(f"{prefix.name}-{number}.png")
            page.to_image(resolution=resolution, antialias=True).save(path)
            written.append(path)
    return written


def main(argv: list[str]) -> int:
    """`python -m reports.page_images REPORT.pdf PREFIX`: one line per page written."""
    if len(argv) != 2:
        print("usage: python -m reports.page_images REPORT.pdf PREFIX", file=sys.stderr)
        return 1
    pdf, prefix = Path(argv[0]), Path(argv[1])
    if not pdf.is_file():
        print(f"error: {pdf} is not a file", file=sys.stderr)
        return 1
    for path in write_page_images(pdf, prefix):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
