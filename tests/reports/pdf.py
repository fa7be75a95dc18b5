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
    fonts: dict[str, bool]  # every font the pages (and their forms) use: base name -> embedded
    image_xobjects: int  # raster images anywhere in the document (page or form resources)
    filled: list[list[tuple[float, float, tuple]]]  # per page: (x0, x1, fill colour) of each filled rectangle

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
        fonts: dict[str, bool] = {}
        images = [0]
        for page in document.pages:
            _resources(page.page_obj.resources, fonts, images, set())
        filled = [
            [
                (float(r["x0"]), float(r["x1"]), tuple(r.get("non_stroking_color") or ()))
                for r in page.rects
                if r.get("fill")
            ]
            for page in document.pages
        ]
        return ReadPdf(pages, sizes, image_pages, forms, _clusters_below(last, "Powered"), fonts, images[0], filled)


def _resources(resources, fonts: dict[str, bool], images: list[int], seen: set[int]) -> None:
    """Fonts and raster images in a resource dictionary and, recursively, its forms'."""
    from pdfminer.pdftypes import resolve1

    resources = resolve1(resources) or {}
    for ref in (resolve1(resources.get("Font")) or {}).values():
        font = resolve1(ref)
        descendants = [resolve1(d) for d in resolve1(font.get("DescendantFonts")) or []]
        descriptor = (
            resolve1(font.get("FontDescriptor"))
            or next((resolve1(d.get("FontDescriptor")) for d in descendants if d.get("FontDescriptor")), None)
            or {}
        )
        name = str(resolve1(font.get("BaseFont"))).strip("/'")
        fonts[name.split("+", 1)[-1]] = any(key in descriptor for key in ("FontFile", "FontFile2", "FontFile3"))
    for ref in (resolve1(resources.get("XObject")) or {}).values():
        xobject = resolve1(ref)
        if id(xobject) in seen:
            continue
        seen.add(id(xobject))
        subtype = str(xobject.get("Subtype")).strip("/'")
        if subtype == "Image":
            images[0] += 1
        elif subtype == "Form":
            _resources(xobject.get("Resources"), fonts, images, seen)


def _clusters_below(page, word: str) -> int:
    """Separate groups of vector drawings below `word`, told apart by horizontal gaps."""
    anchor = next((w for w in page.extract_words() if w["text"] == word), None)
    if anchor is None:
        return 0
    shapes = sorted(
        (s for s in page.curves + page.rects + page.lines if s["top"] > anchor["bottom"]), key=lambda s: s["x0"]
    )
    clusters, right = 0, None
    for shape in shapes:
        if right is None or shape["x0"] > right + 10:
            clusters += 1
        right = max(right or shape["x1"], shape["x1"])
    return clusters


def column_below(pdf: bytes, word: str, column: int, columns: int = 3) -> str:
    """The text of one of `columns` equal columns of the last page's text area, below the
    first `word` on it (the Powered-by captions sit side by side: read across, their lines
    interleave)."""
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        last = document.pages[-1]
        anchor = next(w for w in last.extract_words() if w["text"] == word)
        left, right = anchor["x0"], last.width - anchor["x0"]
        step = (right - left) / columns
        box = (left + column * step, anchor["bottom"], left + (column + 1) * step, last.height)
        return " ".join((last.crop(box).extract_text() or "").split())
