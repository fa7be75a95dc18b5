"""The PDF reading worker: `python -m ingest.pdf_worker MAX_PAGES MEMORY_BYTES`.

Reads requests from stdin (8-byte big-endian length, then the PDF bytes) and answers on
stdout (8-byte length, then JSON: {"text", "pages"} or {"refused": reason}). It runs in
its own process under a memory cap so a hostile PDF can only hurt this process.
"""

from __future__ import annotations

import io
import json
import resource
import sys


def read_pdf(data: bytes, max_pages: int) -> dict:
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    encrypted = (PDFPasswordIncorrect, PDFEncryptionError)
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            pages = len(pdf.pages)
            if pages > max_pages:
                return {"refused": f"has {pages} pages, more than the limit of {max_pages}"}
            return {"text": "\n".join(page.extract_text() or "" for page in pdf.pages), "pages": pages}
    except encrypted:
        return {"refused": "is encrypted (a password is required)"}
    except RecursionError:
        return {"refused": "is malformed: its objects nest too deeply"}
    except MemoryError:
        return {"refused": "is malformed: reading it exhausted the memory limit"}
    except Exception as exc:  # noqa: BLE001 - any parser failure means "not readable"
        cause = exc.args[0] if exc.args else None  # pdfplumber wraps pdfminer's errors
        if isinstance(cause, encrypted) or isinstance(exc.__context__, encrypted):
            return {"refused": "is encrypted (a password is required)"}
        if isinstance(cause, MemoryError) or isinstance(exc.__context__, MemoryError):
            return {"refused": "is malformed: reading it exhausted the memory limit"}
        return {"refused": f"is malformed ({type(exc).__name__}: {str(exc)[:120]})"}


def main() -> None:
    max_pages, memory = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = requests.read(8)
        if len(header) < 8:
            return
        data = requests.read(int.from_bytes(header, "big"))
        answer = json.dumps(read_pdf(data, max_pages)).encode()
        answers.write(len(answer).to_bytes(8, "big") + answer)
        answers.flush()


if __name__ == "__main__":
    main()
