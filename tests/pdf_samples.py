"""Hostile and ordinary PDFs, made by the tests themselves (nothing is downloaded)."""

from __future__ import annotations

import io


def text_pdf(lines: list[str], pages: int = 1, password: str | None = None) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.pdfencrypt import StandardEncryption
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    encrypt = StandardEncryption(password, ownerPassword="owner-" + password) if password else None
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1, encrypt=encrypt)
    for _ in range(pages):
        y = 800
        for line in lines:
            pdf.drawString(60, y, line)
            y -= 16
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def long_line_pdf(lines: list[str], long_line: str) -> bytes:
    """A one-page PDF of `lines` and then `long_line` in a 1 pt font: one text line of any
    length from a file of a few KB (the page does not bound what its text layer holds)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    for y, line in zip(range(800, 0, -16), lines, strict=False):
        pdf.drawString(60, y, line)
    pdf.setFont("Helvetica", 1)
    pdf.drawString(0, 100, long_line)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def relabelled_pdf(lines: list[str], relabel: dict[str, str]) -> bytes:
    """A one-page PDF of `lines` in Helvetica whose text layer says `relabel[c]` wherever
    the page shows the character c (its font's ToUnicode map): the page shows "1,800.00"
    while a reader extracts "1,৪00.00", a Bengali four that looks like an eight."""

    def hex16(text: str) -> bytes:
        return text.encode("utf-16-be").hex().upper().encode()

    codes = [(b"%02X" % code, hex16(relabel.get(chr(code), chr(code)))) for code in range(32, 127)]
    blocks = [codes[i : i + 100] for i in range(0, len(codes), 100)]
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        b"/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n1 begincodespacerange <00> <FF> endcodespacerange\n"
        + b"".join(
            b"%d beginbfchar\n" % len(block) + b"".join(b"<%s> <%s>\n" % pair for pair in block) + b"endbfchar\n"
            for block in blocks
        )
        + b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    shown = b"".join(
        b"(" + line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b") Tj T*\n"
        for line in lines
    )
    content = b"BT /F1 12 Tf 16 TL 60 800 Td\n" + shown + b"ET"
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>",
            b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
        ]
    )


def scanned_pdf() -> bytes:
    """A valid one-page PDF without a text layer, as a scanned notice is (its page an image)."""
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
        ]
    )


def page_bomb(pages: int = 400) -> bytes:
    """A valid PDF with far more pages than any disclosure has."""
    return text_pdf(["page"], pages=pages)


def _assemble(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def decompression_bomb(expanded_bytes: int = 3_000_000_000) -> bytes:
    """A page whose content stream is a few MB of deflate that expands to gigabytes."""
    import zlib

    # After a full flush every identical chunk compresses to identical bytes, so the
    # stream is built from two compressions plus the right checksum, in about a second.
    chunk, count = b"0" * 10_000_000, expanded_bytes // 10_000_000
    packer = zlib.compressobj(9)
    first = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    repeated = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    checksum = 1
    for _ in range(count):
        checksum = zlib.adler32(chunk, checksum)
    stream = first + repeated * (count - 1) + packer.flush()[:-4] + checksum.to_bytes(4, "big")
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        ]
    )
