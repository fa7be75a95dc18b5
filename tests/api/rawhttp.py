"""A raw HTTP/1.1 client for the body-limit tests: it streams a large body and stops
sending the moment the server answers, the way a client that watches its socket sees an
early 401 or 413 (httpx would push the whole body first). It also samples, while it
sends, what the server holds: the process's RSS and the bytes in open temporary files."""

from __future__ import annotations

import json
import os
import select
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def open_file_bytes(folder: str) -> int:
    """Bytes in this process's open files under `folder`, unlinked ones included (a
    spooled upload is an anonymous temporary file that no directory listing shows)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(folder):
                total += os.fstat(int(fd)).st_size
        except OSError:
            continue
    return total


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    sent: int = 0
    samples: list[tuple[int, int]] = field(default_factory=list)  # (RSS, temp-file bytes) while sending

    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def peak_rss_growth(self) -> int:
        return max(r for r, _ in self.samples) - self.samples[0][0] if self.samples else 0

    @property
    def peak_temp_bytes(self) -> int:
        return max(t for _, t in self.samples) if self.samples else 0


def stream(
    base: str,
    path: str,
    headers: dict[str, str],
    chunks: Iterable[bytes],
    *,
    length: int | None = None,
    temp_folder: str = "/nonexistent",
    stop: Callable[[Answer], bool] | None = None,
    timeout: float = 60,
) -> Answer:
    """POST `chunks` to `path`: with `length`, as a Content-Length body, else chunked.
    Stops sending as soon as the server answers; fails at once when `stop(answer so far)`
    says the server has read (or held) too much already."""
    url = urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
    framing = {"Content-Length": str(length)} if length is not None else {"Transfer-Encoding": "chunked"}
    head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": url.netloc, **headers, **framing}.items())
    sock.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode())
    answer = Answer(0, {}, b"")
    answer.samples.append((rss_bytes(), open_file_bytes(temp_folder)))
    answered = False
    for i, chunk in enumerate(chunks):
        if _readable(sock):
            answered = True
            break
        frame = chunk if length is not None else b"%x\r\n%s\r\n" % (len(chunk), chunk)
        if not _send(sock, frame):
            answered = True
            break
        answer.sent += len(chunk)
        if i % 4 == 0:
            answer.samples.append((rss_bytes(), open_file_bytes(temp_folder)))
        if stop is not None and stop(answer):
            sock.close()
            raise AssertionError(
                f"the server kept reading the body: {answer.sent / 2**20:.0f} MB sent, RSS "
                f"+{answer.peak_rss_growth / 2**20:.0f} MB, temp files {answer.peak_temp_bytes / 2**20:.0f} MB"
            )
    if not answered and length is None:
        _send(sock, b"0\r\n\r\n")
    answer.samples.append((rss_bytes(), open_file_bytes(temp_folder)))
    _read_response(sock, answer, timeout)
    sock.close()
    return answer


def _readable(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def _send(sock: socket.socket, data: bytes) -> bool:
    """Send all of `data` unless the server answers or closes first."""
    view = memoryview(data)
    while view:
        readable, writable, _ = select.select([sock], [sock], [], 30)
        if readable:
            return False
        if not writable:
            raise TimeoutError("the server neither read the body nor answered for 30 s")
        try:
            view = view[sock.send(view) :]
        except (BrokenPipeError, ConnectionResetError):
            return False
    return True


def _read_response(sock: socket.socket, answer: Answer, timeout: float) -> None:
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        part = sock.recv(65536)
        if not part:
            raise ConnectionError(f"the server closed without an answer (got {data[:200]!r})")
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    answer.status = int(status_line.split()[1])
    answer.headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    size = int(answer.headers.get("content-length", "0"))
    while len(body) < size:
        part = sock.recv(65536)
        if not part:
            break
        body += part
    answer.body = body[:size]
