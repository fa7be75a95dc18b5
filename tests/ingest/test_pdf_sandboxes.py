"""Hostile PDFs in parallel stay under a stated total: each sandbox is capped at
`pdf_sandbox_memory_mb` of address space and at most `pdf_sandboxes` live at once in a
process, so four decompression bombs read at once take at most 2 x 512 MiB, each refused
with a reason, never the service's memory."""

from __future__ import annotations

import threading
import time

import psutil
import pytest

from ingest.pdf_text import PdfExtractor, PdfRejected
from market.errors import BusyError
from tests.pdf_samples import decompression_bomb, text_pdf

MEMORY_MB, SANDBOXES = 512, 2


def _peak_children(stop: threading.Event, peak: dict[str, int]) -> None:
    """The sandboxes' peak: the children this process starts while the test runs (a worker
    an earlier test in the same process left running, a report builder of the API's, is
    not one of them), once they are the PDF worker: between the fork and the exec a child
    is a copy of this process, whose resident pages it shares and psutil counts (two such
    children read 1.68 GB in a clean-clone run, a 840 MB test worker twice)."""
    me = psutil.Process()
    earlier = {child.pid for child in me.children(recursive=True)}
    while not stop.is_set():
        total, alive = 0, 0
        for child in me.children(recursive=True):
            if child.pid in earlier:
                continue
            try:
                if "ingest.pdf_worker" not in child.cmdline():
                    continue
                total += child.memory_info().rss
                alive += 1
            except psutil.Error:
                pass
        peak["rss"], peak["alive"] = max(peak["rss"], total), max(peak["alive"], alive)
        time.sleep(0.02)


def test_four_bombs_at_once_stay_under_the_stated_total() -> None:
    bomb, outcomes = decompression_bomb(), []

    def read() -> None:
        with PdfExtractor(50_000_000, 50, 60, MEMORY_MB, SANDBOXES) as extractor:
            try:
                extractor.extract(bomb, "bomb.pdf")
                outcomes.append("read")
            except (PdfRejected, BusyError) as error:
                outcomes.append(str(error))

    stop, peak = threading.Event(), {"rss": 0, "alive": 0}
    watcher = threading.Thread(target=_peak_children, args=(stop, peak), daemon=True)
    watcher.start()
    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(timeout=120)
    stop.set()
    watcher.join()
    assert len(outcomes) == 4 and all("exhausted the memory limit" in o for o in outcomes), outcomes
    assert 1 <= peak["alive"] <= SANDBOXES, peak  # the watcher saw the workers, and never more than the slots
    assert peak["rss"] <= SANDBOXES * MEMORY_MB * 2**20, peak


def test_a_sandbox_slot_is_given_back_and_a_plain_pdf_still_reads() -> None:
    with PdfExtractor(5_000_000, 5, 20, MEMORY_MB, 1) as extractor:
        assert "hello" in extractor.extract(text_pdf(["hello"]), "a.pdf").text
    with PdfExtractor(5_000_000, 5, 20, MEMORY_MB, 1) as extractor:  # the one slot is free again
        assert "again" in extractor.extract(text_pdf(["again"]), "b.pdf").text


def test_a_reader_past_the_slots_is_refused_as_busy() -> None:
    with PdfExtractor(5_000_000, 5, 20, MEMORY_MB, 1) as holder:
        holder.extract(text_pdf(["held"]), "a.pdf")  # keeps its worker (and the one slot) until closed
        with pytest.raises(BusyError, match="retry shortly"):
            PdfExtractor(5_000_000, 5, 0.5, MEMORY_MB, 1).extract(text_pdf(["late"]), "b.pdf")


# workers that answer a file as a hostile page could make the real one: the start of an
# answer, then nothing; an answer longer than any file's text may be
_ANSWER_STARTED_THEN_STALLED = (
    "import sys, time\nrequests = sys.stdin.buffer\nrequests.read(int.from_bytes(requests.read(8), 'big'))\n"
    "sys.stdout.buffer.write((1000).to_bytes(8, 'big') + b'{\"text\": \"ab')\nsys.stdout.buffer.flush()\n"
    "time.sleep(60)"
)
_READS_NOTHING = "import time\ntime.sleep(60)"
_ANSWER_OF_A_GIGABYTE = (
    "import sys, time\nrequests = sys.stdin.buffer\nrequests.read(int.from_bytes(requests.read(8), 'big'))\n"
    "sys.stdout.buffer.write((2**30).to_bytes(8, 'big') + b'{\"text\": \"' + b'x' * 2**20)\n"
    "sys.stdout.buffer.flush()\ntime.sleep(60)"
)


@pytest.mark.parametrize(
    ("worker", "reason"),
    [
        (_ANSWER_STARTED_THEN_STALLED, "a.pdf took longer than 2s to read"),
        (_ANSWER_OF_A_GIGABYTE, "a.pdf has more text than the limit of 1,000,000 bytes (200,000 a page for 5 pages)"),
        (_READS_NOTHING, "a.pdf took longer than 2s to read"),
    ],
    ids=["stalled", "gigabyte", "stuck"],
)
def test_a_worker_that_stalls_mid_answer_or_answers_too_much_fails_the_file_within_its_time(
    monkeypatch: pytest.MonkeyPatch, worker: str, reason: str
) -> None:
    """The worker's answer was read with no time limit once its first byte came, and whole
    whatever its length: a worker stalled mid-answer held its reader (the text stage) for
    ever, and one sending a gigabyte of text had it read into the service's memory. A
    worker stuck before it reads the file (the file larger than a pipe holds) held its
    writer for ever too: the file is sent within the same time limit."""
    import subprocess
    import sys

    import ingest.pdf_text as pdf_text

    started_worker = subprocess.Popen
    monkeypatch.setattr(
        pdf_text.subprocess, "Popen", lambda args, **kwargs: started_worker([sys.executable, "-c", worker], **kwargs)
    )
    started = time.monotonic()
    with PdfExtractor(5_000_000, 5, 2, MEMORY_MB, 1) as extractor, pytest.raises(PdfRejected) as refused:
        extractor.extract(text_pdf(["hello"]) + b" " * 2_000_000, "a.pdf")
    assert str(refused.value) == reason
    assert time.monotonic() - started < 5


def test_a_pdf_is_read_in_a_process_holding_more_than_1024_descriptors() -> None:
    """The worker's pipes were waited on with select, which refuses a descriptor numbered
    1,024 or more: in a process holding that many (an API server with many connections)
    every PDF was refused as `the reader died on it`."""
    import os
    import resource

    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 1200:
        pytest.skip("the process may not hold 1,200 descriptors")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with PdfExtractor(5_000_000, 5, 20, MEMORY_MB, 1) as extractor:
            assert extractor.extract(text_pdf(["hello"]), "a.pdf").text == "hello"
    finally:
        for descriptor in held:
            os.close(descriptor)
