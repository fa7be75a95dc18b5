"""Upload checks shared by the multipart endpoints: the form's parts, the filename, then
size, then what the bytes are.

A filename is at most FILENAME_LENGTH characters (255: the usual filesystem limit on a
file's name) with no control or format character (market.text `checked_name`: a U+202E
RIGHT-TO-LEFT OVERRIDE makes `note<U+202E>fdp.exe` display as `noteexe.pdf` wherever the
name is shown back). A much longer one never reaches these checks: the multipart parser
refuses a part's header line over about 4 KB (its Content-Disposition, which holds the
filename: python-multipart's limit), and the 400 says so (`unreadable_form`, read by
api/problems.py) in place of Starlette's "Invalid multipart data."."""

from __future__ import annotations

from fastapi import Request, UploadFile
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException

from market.errors import InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError
from market.text import PDF_TYPES, checked_name, media_type

TEXT_TYPES = ("text/plain", "text/markdown", "application/octet-stream", "")
FILENAME_LENGTH = 255
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


def unreadable_form(error: MultiPartException) -> str:
    """The 400's detail for a multipart body the parser refused: Starlette says "Invalid
    multipart data." for every error of the parser it raised it from, which names the cause.
    The likely one, a header line over the parser's limit, is said with what to do."""
    cause = str(error.__cause__ or error.message)
    if "header size" in cause:
        return (
            f"the multipart body could not be read: {cause}; a part's header line is at most about 4 KB and holds "
            f"its filename, which may be at most {FILENAME_LENGTH} characters"
        )
    return f"the multipart body could not be read: {cause}"


async def read_upload(request: Request, file: UploadFile, max_bytes: int, *, pdf_only: bool) -> bytes:
    """The file's bytes, once its form is one file (`one_file`, 422) and its filename a name
    (`checked_name`, 422); 413 past `max_bytes`, 415 when it is not a PDF where only a PDF
    is taken or where it was declared one (a text declared application/pdf is refused as
    not a PDF, as the statement upload says it), else where text is allowed when it is
    declared neither a PDF nor plain text or markdown."""
    one_file(await request.form())  # the form FastAPI parsed, kept on the request
    if file.filename:
        checked_name(file.filename, "the upload's filename", FILENAME_LENGTH)
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
    declared = media_type(file.content_type)
    if (pdf_only or declared in PDF_TYPES) and not is_pdf:
        raise UnsupportedMediaTypeError(
            f"{file.filename or 'the upload'} is not a PDF (declared {declared or 'nothing'})"
        )
    if not pdf_only and not is_pdf and declared not in TEXT_TYPES:
        raise UnsupportedMediaTypeError(f"research notes are PDF or plain text, not {declared}")
    return data
