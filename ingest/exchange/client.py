"""HTTP client for the exchange website: timeouts, bounded retries with exponential
backoff for what is transient (timeouts, connection errors, 5xx, 429), and a clear
user agent. A 404 that says the day is not published is a `NotPublishedError`; any other
4xx is not retried."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from market.errors import NotPublishedError, SourceUnavailableError

log = logging.getLogger(__name__)
USER_AGENT = "marketintel-t0/0.1 (end-of-day data collector; contact: operations)"


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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ExchangeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, params: dict[str, str] | None = None) -> Fetched:
        url = f"{self.base_url}{path}"
        last_problem = ""
        for attempt in range(1, self.retries + 2):
            try:
                response = self._http.get(path, params=params)
            except httpx.TimeoutException:
                last_problem = f"timed out after {self._http.timeout.read}s"
            except httpx.TransportError as exc:
                last_problem = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                if response.status_code == 200:
                    return Fetched(str(response.url), response.content, attempt)
                if response.status_code == 404 and b"not-published" in response.content:
                    raise NotPublishedError(
                        f"{url} says {params.get('date') if params else 'the day'} is not published yet"
                    )
                if response.status_code < 500 and response.status_code != 429:
                    raise SourceUnavailableError(f"{url} answered {response.status_code}; not retried")
                last_problem = f"answered {response.status_code}"
            if attempt <= self.retries:
                delay = self.backoff * 2 ** (attempt - 1)
                log.warning("%s %s (attempt %d); retrying in %.1fs", url, last_problem, attempt, delay)
                self._sleep(delay)
        raise SourceUnavailableError(f"{url} {last_problem} on all {self.retries + 1} attempts")
