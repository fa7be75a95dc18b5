"""Upload checks shared by the multipart endpoints: size first, then what the bytes are."""

from __future__ import annotations

from fastapi import UploadFile

from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.text import checked_text

TEXT_TYPES = ("text/plain", "text/markdown", "application/octet-stream", "")
CHUNK = 1 << 16


async def read_upload(file: UploadFile, max_bytes: int, *, pdf_only: bool) -> bytes:
    """The file's bytes; 413 past `max_bytes`, 415 when it is not a PDF (or, where text is
    allowed, not a PDF and not declared as plain text or markdown)."""
    if file.filename:
        checked_text(file.filename, "the upload's filename")
    parts, size = [], 0
    while chunk := await file.read(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise PayloadTooLargeError(f"{file.filename or 'the upload'} is over the limit of {max_bytes:,} bytes")
        parts.append(chunk)
    data = b"".join(parts)
    if not data:
        raise InvalidInputError(f"{file.filename or 'the upload'} is empty")
    is_pdf = data.lstrip()[:5] == b"%PDF-"
    declared = (file.content_type or "").split(";")[0].strip().lower()
    if pdf_only and not is_pdf:
        raise UnsupportedMediaTypeError(
            f"{file.filename or 'the upload'} is not a PDF (declared {declared or 'nothing'})"
        )
    if not pdf_only and not is_pdf and declared not in TEXT_TYPES:
        raise UnsupportedMediaTypeError(f"research notes are PDF or plain text, not {declared}")
    return data
