"""HTTP client for the exchange website: timeouts, bounded retries with exponential
backoff for what is transient (timeouts, connection errors, 5xx, 429), and a clear
user agent. A 404 that says the day is not published is a `NotPublishedError` (it may come
later); one that says the day had no session (before the site's first, or not a trading
day) a `SourceUnavailableError` giving the site's reason; any other 4xx is not retried.

The client's timeout bounds each wait for bytes only, so every body is read with
`bounded_body`: at most `PageLimits.max_bytes` (a larger page is refused, not retried)
within `PageLimits.max_seconds` in all, its head included (ingest/addresses.py `followed`
shuts the connection at the limit: a server sending a byte every few seconds is a timeout,
retried): the end-of-day pages, the news feed and the disclosure PDFs alike."""

from __future__ import annotations

import hashlib
import html
import logging
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

import httpx

from ingest.addresses import configured_reach, followed
from market.budget import Deadline
from market.errors import BudgetExceededError, MarketIntelError, NotPublishedError, SourceUnavailableError
from market.text import masked_urls

log = logging.getLogger(__name__)
USER_AGENT = "marketintel-t0/0.1 (end-of-day data collector; contact: operations)"


@dataclass(frozen=True)
class PageLimits:
    """What one attempt may read: `max_bytes` of body (a 2,000-name day's quotes page is a
    few MB) within `max_seconds` however slowly it comes, and from where: a redirect to
    another host is checked before it is followed, refused at an internal address and
    requested at the address checked (ingest/addresses.py `followed`) unless `internal_redirects` (the
    `allow_private_enclosures` setting: a demo's or test's sites on 127.0.0.1)."""

    max_bytes: int = 64 * 1024 * 1024
    max_seconds: float = 120.0
    internal_redirects: bool = False


def bounded_body(response: httpx.Response, max_bytes: int, deadline: Deadline) -> bytes:
    """A streamed response's body, decoded (`Content-Encoding`): MarketIntelError past
    `max_bytes` of it, `deadline`'s BudgetExceededError once its time is spent (checked as
    each chunk arrives). It is decoded here, at most `DECODED_PIECE` bytes at a time, so a
    few bytes that decode to gigabytes are refused at the limit: decoded by the client, each
    chunk was expanded whole before it was counted, and each layer of `gzip, gzip` again
    (980 bytes took 1 GiB of memory against a limit of 1 MiB)."""
    chunks, size = [], 0
    layers, raws = _raw_body(response)
    for raw in raws:
        deadline.check()
        for piece in _decoded(layers, raw):
            size += len(piece)
            if size > max_bytes:
                raise MarketIntelError(f"the body exceeds the limit of {max_bytes:,} bytes")
            chunks.append(piece)
    return b"".join(chunks)


# the most one decoding step yields; a body's every layer holds at most this much at once
DECODED_PIECE = 1 << 20
# the content codings read, as zlib's window bits: gzip or zlib-wrapped deflate, told by the header
_CODINGS = {"gzip": 47, "x-gzip": 47, "deflate": 47}
# what a request says it reads (httpx says br and zstd too once their packages are installed)
ACCEPT_ENCODING = "gzip, deflate"


def _raw_body(response: httpx.Response) -> tuple[list[zlib._Decompress], Iterable[bytes]]:
    """The decoders of a response's body and its chunks as sent, then b"" (the end, which
    flushes each decoder). An answer already read whole (one held in memory, as a test's
    transport gives) is its decoded content: nothing is left to decode."""
    if response.is_stream_consumed:
        return [], [response.content]
    return _decoders(response.headers.get("content-encoding", "")), chain(response.iter_raw(), [b""])


def _decoders(header: str) -> list[zlib._Decompress]:
    """One decompressor per coding of a `Content-Encoding` header, the outermost (the last
    applied) first; MarketIntelError for a coding not read (br, zstd, compress)."""
    codings = [c.strip().lower() for c in header.split(",") if c.strip().lower() not in ("", "identity")]
    unknown = [c for c in codings if c not in _CODINGS]
    if unknown:
        raise MarketIntelError(f"the body's content encoding {unknown[0]!r} is not read")
    return [zlib.decompressobj(_CODINGS[coding]) for coding in reversed(codings)]


def _decoded(layers: list[zlib._Decompress], data: bytes) -> Iterator[bytes]:
    """`data` through `layers` (outermost first), in pieces of at most DECODED_PIECE bytes;
    `data` empty: what each layer still holds (the body's end)."""
    if not layers:
        if data:
            yield data
        return
    layer, inner = layers[0], layers[1:]
    try:
        piece = layer.decompress(data, DECODED_PIECE)
        while piece:
            yield from _decoded(inner, piece)
            piece = layer.decompress(layer.unconsumed_tail, DECODED_PIECE)
    except zlib.error as exc:
        raise MarketIntelError(f"the body is not readable as its content encoding says ({exc})") from None
    if not data:
        yield from _decoded(inner, b"")


@dataclass(frozen=True)
class Fetched:
    url: str
    body: bytes
    attempts: int

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class ExchangeClient:
    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        limits: PageLimits = PageLimits(),
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.limits = limits
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ExchangeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, params: dict[str, str] | None = None) -> Fetched:
        url = masked_urls(self.url_of(path))  # as it is shown: the request uses it as it is
        last_problem = ""
        for attempt in range(1, self.retries + 2):
            try:
                status, final_url, body = self._fetch(path, params)
            except httpx.TimeoutException:
                last_problem = f"timed out after {self._http.timeout.read}s"
            except BudgetExceededError:
                last_problem = f"sent its page for longer than the {self.limits.max_seconds:g} s allowed"
            except httpx.TransportError as exc:
                last_problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if status == 200:
                    return Fetched(final_url, body, attempt)
                if status == 404 and b"not-published" in body:
                    raise NotPublishedError(f"{url} says {_day(params)} is not published yet")
                if status == 404 and b"no-session" in body:
                    raise SourceUnavailableError(f"{url} has no trade quotes for {_day(params)}: {_said(body)}")
                if status < 500 and status != 429:
                    raise SourceUnavailableError(f"{url} answered {status}; not retried")
                last_problem = f"answered {status}"
            if attempt <= self.retries:
                delay = self.backoff * 2 ** (attempt - 1)
                log.warning("%s %s (attempt %d); retrying in %.1fs", url, last_problem, attempt, delay)
                self._sleep(delay)
        raise SourceUnavailableError(f"{url} {last_problem} on all {self.retries + 1} attempts")

    def url_of(self, path: str) -> str:
        """The address `path` names: a path under `base_url` (`/market/daily`), or a whole
        URL as it is (a feed or a disclosure the text stage reads elsewhere), as httpx's
        `base_url` merges them; joined as text, a feed's URL read `http://hosthttp://host/...`
        and answered 404."""
        return path if httpx.URL(path).is_absolute_url else f"{self.base_url}{path}"

    def _fetch(self, path: str, params: dict[str, str] | None) -> tuple[int, str, bytes]:
        """One attempt: the status, the final URL and the body, read by `bounded_body` (a
        body past `max_bytes` is refused here, not retried), its redirects followed as every
        download's are (`followed`: one to another host checked and requested at the
        address checked; one refused is SourceUnavailableError, not retried)."""
        deadline = Deadline(self.limits.max_seconds, "the page", "retried")
        url = str(httpx.URL(self.url_of(path)).copy_merge_params(params or {}))
        reach = configured_reach(url, self.limits.internal_redirects)
        with followed(self._http, url, deadline, reach) as hop:
            try:
                body = bounded_body(hop.response, self.limits.max_bytes, deadline)
            except BudgetExceededError:
                raise
            except MarketIntelError as exc:
                shown = masked_urls(self.url_of(path))
                raise SourceUnavailableError(f"{shown}: {exc.detail}; not retried") from None
            return hop.response.status_code, hop.url, body


def _day(params: dict[str, str] | None) -> str:
    return params.get("date", "the day") if params else "the day"


_NO_SESSION = re.compile(rb'<p class="no-session"[^>]*>([^<]{1,300})</p>')


def _said(body: bytes) -> str:
    """The reason a no-session page gives, as plain text."""
    found = _NO_SESSION.search(body)
    return html.unescape(found.group(1).decode("utf-8", "replace")) if found else "no session that day"
