"""Reading generated reports back as a reader would: text per page, and the drawings of
the final page's Powered-by area."""
from __future__ import annotations

import io
from dataclasses import dataclass

import pdfplumber


@dataclass
class ReadPdf:
    pages: list[str]
    sizes: list[tuple[float, float]]
    image_pages: list[int]  # 1-based numbers of pages that hold a raster image (the charts)
    logo_forms: list[str]
    logo_clusters: int  # separate drawings below "Powered by" on the last page (0 when it has none)

    @property
    def text(self) -> str:
        return "\n".join(self.pages)


def read(pdf: bytes) -> ReadPdf:
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        pages = [page.extract_text() or "" for page in document.pages]
        sizes = [(float(page.width), float(page.height)) for page in document.pages]
        image_pages = [i + 1 for i, page in enumerate(document.pages) if page.images]
        last = document.pages[-1]
        xobjects = last.page_obj.resources.get("XObject", {}) if last.page_obj.resources else {}
        forms = sorted(name for name, ref in xobjects.items() if ref.resolve().get("Subtype").name == "Form")
        return ReadPdf(pages, sizes, image_pages, forms, _clusters_below(last, "Powered"))


def _clusters_below(page, word: str) -> int:  # noqa: ANN001
    """Separate groups of vector drawings below `word`, told apart by horizontal gaps."""
    anchor = next((w for w in page.extract_words() if w["text"] == word), None)
    if anchor is None:
        return 0
    shapes = sorted((s for s in page.curves + page.rects + page.lines if s["top"] > anchor["bottom"]),
                    key=lambda s: s["x0"])
    clusters, right = 0, None
    for shape in shapes:
        if right is None or shape["x0"] > right + 10:
            clusters += 1
        right = max(right or shape["x1"], shape["x1"])
    return clusters
