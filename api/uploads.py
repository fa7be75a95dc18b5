"""Upload checks shared by the multipart endpoints: the form's parts, then size, then what
the bytes are."""

from __future__ import annotations

from fastapi import Request, UploadFile
from starlette.datastructures import FormData

from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.text import checked_text

TEXT_TYPES = ("text/plain", "text/markdown", "application/octet-stream", "")
PDF_TYPES = ("application/pdf", "application/x-pdf")
CHUNK = 1 << 16


UPLOAD_PART = "file"  # the one part of an upload's form


def one_file(form: FormData) -> None:
    """An upload's form is one part, `file`; anything else is 422 naming it, as a JSON
    body's unknown key and a query's unknown parameter are. A second file was dropped
    unsaid (the last one read), and a `preview=true` sent as a form field, not in the query
    string, was ignored: the statement was synchronised when the client asked to see it."""
    names = [name for name, _ in form.multi_items()]
    other = next((name for name in names if name != UPLOAD_PART), None)
    if other is not None:
        raise InvalidInputError(
            f"the form holds a part '{other[:60]}' this upload does not take; send one part, "
            f"'{UPLOAD_PART}' (the upload's options, such as preview and confirm, go in the query string)"
        )
    if len(names) > 1:
        raise InvalidInputError(f"the form holds {len(names)} parts named '{UPLOAD_PART}'; send one file per upload")


async def read_upload(request: Request, file: UploadFile, max_bytes: int, *, pdf_only: bool) -> bytes:
    """The file's bytes, once its form is one file (`one_file`, 422); 413 past `max_bytes`,
    415 when it is not a PDF where only a PDF is taken or where it was declared one (a text
    declared application/pdf is refused as not a PDF, as the statement upload says it),
    else where text is allowed when it is declared neither a PDF nor plain text or markdown."""
    one_file(await request.form())  # the form FastAPI parsed, kept on the request
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
    if (pdf_only or declared in PDF_TYPES) and not is_pdf:
        raise UnsupportedMediaTypeError(
            f"{file.filename or 'the upload'} is not a PDF (declared {declared or 'nothing'})"
        )
    if not pdf_only and not is_pdf and declared not in TEXT_TYPES:
        raise UnsupportedMediaTypeError(f"research notes are PDF or plain text, not {declared}")
    return data
