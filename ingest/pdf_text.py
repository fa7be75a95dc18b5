"""Text from untrusted PDFs (disclosures, research notes, account statements), safely.

Reading happens in a worker process (`ingest/pdf_worker.py`) under a memory cap
(RLIMIT_AS, `settings.pdf_sandbox_memory_mb`) and a time limit, so a hostile file (a
page-count bomb, a decompression bomb, deeply nested objects) costs at most `timeout`
seconds and cannot take the service down; a worker that runs over (the file still being
sent to it, or its answer still coming, at the time limit included) is killed and replaced,
and its answer is at most `TEXT_BYTES_PER_PAGE` for each page of the page limit, never read
past that.
At most `settings.pdf_sandboxes` workers live at once in a process (a slot is taken when a
worker starts and given back when it is closed; one more waits up to `timeout`, then is
refused as busy), so hostile files in parallel stay under their product. Before that,
the bytes must be under the size limit and start like a PDF. The text comes back
`printable` (market/text.py): a glyph mapped to a control character (a NUL, which Postgres
refuses in a text column) is dropped for every reader. Every refusal is a
`PdfRejected` whose message says why: too large, not a PDF, encrypted, too many pages, too
slow, too much text, malformed.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from market.errors import BusyError, InvalidInputError, PayloadTooLargeError
from market.settings import Settings
from market.text import printable

# the most text the worker may send back for one page of a file's page limit, as its JSON
# answer's bytes (a dense page is some 5,000 characters, 6 bytes each where JSON escapes them)
TEXT_BYTES_PER_PAGE = 200_000
_SLOTS: dict[int, threading.BoundedSemaphore] = {}  # by size: the process's sandbox slots
_SLOTS_LOCK = threading.Lock()


def _slots(size: int) -> threading.BoundedSemaphore:
    with _SLOTS_LOCK:
        return _SLOTS.setdefault(size, threading.BoundedSemaphore(size))


class PdfRejected(InvalidInputError):
    """A PDF the service does not read (the reason in `detail`)."""


class PdfTooLarge(PdfRejected, PayloadTooLargeError):
    """A PDF over its size limit."""


def read_pdf_file(path: Path, max_bytes: int) -> bytes:
    """A PDF file's bytes for the extractor, at most `max_bytes` + 1 of them read: a larger
    file is PdfTooLarge, with its size where it has one, never read whole into memory (a
    4 GB file, a pipe, /dev/zero: `read_bytes` took them whole, a MemoryError's traceback
    or the machine's memory). An upload over REST is capped as it streams (api/uploads.py)."""
    with path.open("rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) <= max_bytes:
        return data
    size = path.stat().st_size  # a pipe's or a device's is 0
    if size > max_bytes:
        raise PdfTooLarge(f"{path} is {size:,} bytes, more than the limit of {max_bytes:,}")
    raise PdfTooLarge(f"{path} is over the limit of {max_bytes:,} bytes; reading stopped there")


def _ready(stream: int, event: int, deadline: float) -> bool:
    """Whether the worker's pipe `stream` is ready for `event` (POLLIN, POLLOUT; or closed)
    before `deadline`. poll, not select: select refuses a descriptor numbered 1,024 or
    more, and in a process holding that many (an API server with many connections open)
    every PDF was refused as `the reader died on it`."""
    poller = select.poll()
    poller.register(stream, event)
    return bool(poller.poll(max(0.0, deadline - time.monotonic()) * 1000))


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: int


class PdfExtractor:
    """A reusable worker; use as a context manager around a batch of files."""

    def __init__(
        self, max_bytes: int, max_pages: int, timeout: float, memory_mb: int = 512, sandboxes: int = 2
    ) -> None:
        self.max_bytes, self.max_pages, self.timeout = max_bytes, max_pages, timeout
        self.max_text_bytes = max_pages * TEXT_BYTES_PER_PAGE
        self.memory_bytes = memory_mb * 2**20
        self._slots = _slots(sandboxes)
        self._holding = False
        self._worker: subprocess.Popen | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> PdfExtractor:
        """The extractor every reader of untrusted PDFs uses: the settings' size, page,
        time and memory limits and the process's sandbox slots."""
        return cls(
            settings.pdf_max_bytes,
            settings.pdf_max_pages,
            settings.pdf_timeout_seconds,
            settings.pdf_sandbox_memory_mb,
            settings.pdf_sandboxes,
        )

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
        if self._holding:
            self._holding = False
            self._slots.release()

    def extract(self, data: bytes, name: str = "file") -> PdfText:
        if len(data) > self.max_bytes:
            raise PdfTooLarge(f"{name} is {len(data):,} bytes, more than the limit of {self.max_bytes:,}")
        if data.lstrip()[:5] != b"%PDF-":
            start = data[:16].decode("latin-1", errors="replace")
            raise PdfRejected(f"{name} is not a PDF (it starts with {start!r})")
        worker = self._running_worker()
        deadline = time.monotonic() + self.timeout
        try:
            self._sent(worker, len(data).to_bytes(8, "big") + data, name, deadline)
            answer = self._answer(worker, name, deadline)
        except (BrokenPipeError, ValueError):
            answer = None
        if answer is None:  # the worker died on this file (e.g. killed at its memory cap)
            self.close()
            raise PdfRejected(f"{name} could not be read: the reader died on it")
        if "refused" in answer:
            raise PdfRejected(f"{name} {answer['refused']}")
        return PdfText(printable(answer["text"]), answer["pages"])

    def _sent(self, worker: subprocess.Popen, request: bytes, name: str, deadline: float) -> None:
        """`request` written to the worker, all of it within `deadline`: a worker stuck before
        it read a file larger than its pipe holds held its writer (the text stage, an
        upload) for ever. PdfRejected as too slow, the worker killed, past it."""
        stream, left = worker.stdin.fileno(), memoryview(request)
        while left:
            if not _ready(stream, select.POLLOUT, deadline):
                self._too_slow(name)
            try:
                left = left[os.write(stream, left[: 2**20]) :]
            except BlockingIOError:  # the pipe filled between the select and the write
                pass

    def _too_slow(self, name: str) -> NoReturn:
        self.close()
        raise PdfRejected(f"{name} took longer than {self.timeout:g}s to read")

    def _answer(self, worker: subprocess.Popen, name: str, deadline: float) -> dict | None:
        """The worker's answer to one file, all of it within `deadline` (a worker that
        stalled mid-answer held its reader for ever) and at most `max_text_bytes` (an answer
        of any length was read whole into memory); None: the worker died before it was whole."""
        header = self._received(worker, 8, name, deadline)
        if len(header) < 8:
            return None
        size = int.from_bytes(header, "big")
        if size > self.max_text_bytes:
            self.close()  # the rest of its answer is never read: the worker is replaced
            raise PdfRejected(
                f"{name} has more text than the limit of {self.max_text_bytes:,} bytes "
                f"({TEXT_BYTES_PER_PAGE:,} a page for {self.max_pages} pages)"
            )
        body = self._received(worker, size, name, deadline)
        return json.loads(body) if len(body) == size else None

    def _received(self, worker: subprocess.Popen, size: int, name: str, deadline: float) -> bytes:
        """Up to `size` bytes of the worker's answer, fewer where it ended; PdfRejected as too
        slow, the worker killed, where they have not all come by `deadline`."""
        stream, chunks, left = worker.stdout.fileno(), [], size
        while left > 0:
            if not _ready(stream, select.POLLIN, deadline):
                self._too_slow(name)
            chunk = os.read(stream, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _running_worker(self) -> subprocess.Popen:
        if not self._holding:
            if not self._slots.acquire(timeout=self.timeout):
                raise BusyError(
                    f"the service is reading as many PDFs as it reads at once; none finished within "
                    f"{self.timeout:g}s, retry shortly",
                    headers={"Retry-After": str(max(1, round(self.timeout)))},
                )
            self._holding = True
        if self._worker is None or self._worker.poll() is not None:
            self._worker = subprocess.Popen(
                [sys.executable, "-m", "ingest.pdf_worker", str(self.max_pages), str(self.memory_bytes)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            os.set_blocking(self._worker.stdin.fileno(), False)  # written as it takes it (`_sent`)
        return self._worker
