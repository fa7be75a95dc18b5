"""Text from untrusted PDFs (disclosures, research notes, account statements), safely.

Reading happens in a worker process (`ingest/pdf_worker.py`) under a memory cap and a
time limit, so a hostile file (a page-count bomb, a decompression bomb, deeply nested
objects) costs at most `timeout` seconds and cannot take the service down; a worker that
runs over is killed and replaced. Before that, the bytes must be under the size limit and
start like a PDF. Every refusal is a `PdfRejected` whose message says why: too large, not
a PDF, encrypted, too many pages, too slow, malformed.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from dataclasses import dataclass

from market.errors import InvalidInputError, PayloadTooLargeError

WORKER_MEMORY_BYTES = 1_500_000_000


class PdfRejected(InvalidInputError):
    title = "PDF rejected"


class PdfTooLarge(PdfRejected, PayloadTooLargeError):
    title = "PDF too large"


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: int


class PdfExtractor:
    """A reusable worker; use as a context manager around a batch of files."""

    def __init__(self, max_bytes: int, max_pages: int, timeout: float) -> None:
        self.max_bytes, self.max_pages, self.timeout = max_bytes, max_pages, timeout
        self._worker: subprocess.Popen | None = None

    def __enter__(self) -> PdfExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker.wait()
            for pipe in (self._worker.stdin, self._worker.stdout):
                pipe.close()
            self._worker = None

    def extract(self, data: bytes, name: str = "file") -> PdfText:
        if len(data) > self.max_bytes:
            raise PdfTooLarge(f"{name} is {len(data):,} bytes, more than the limit of {self.max_bytes:,}")
        if data.lstrip()[:5] != b"%PDF-":
            start = data[:16].decode("latin-1", errors="replace")
            raise PdfRejected(f"{name} is not a PDF (it starts with {start!r})")
        worker = self._running_worker()
        try:
            worker.stdin.write(len(data).to_bytes(8, "big") + data)
            worker.stdin.flush()
            ready, _, _ = select.select([worker.stdout], [], [], self.timeout)
            if not ready:
                self.close()
                raise PdfRejected(f"{name} took longer than {self.timeout:g}s to read")
            header = worker.stdout.read(8)
            answer = json.loads(worker.stdout.read(int.from_bytes(header, "big"))) if len(header) == 8 else None
        except (BrokenPipeError, ValueError):
            answer = None
        if answer is None:  # the worker died on this file (e.g. killed at its memory cap)
            self.close()
            raise PdfRejected(f"{name} could not be read: the reader died on it")
        if "refused" in answer:
            raise PdfRejected(f"{name} {answer['refused']}")
        return PdfText(answer["text"], answer["pages"])

    def _running_worker(self) -> subprocess.Popen:
        if self._worker is None or self._worker.poll() is not None:
            self._worker = subprocess.Popen(
                [sys.executable, "-m", "ingest.pdf_worker", str(self.max_pages), str(WORKER_MEMORY_BYTES)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._worker
