"""Retry policy of the exchange client, with the transport and the clock stubbed."""

import httpx
import pytest

from ingest.exchange.client import USER_AGENT, ExchangeClient, PageLimits
from market.errors import NotPublishedError, SourceUnavailableError


def _client(responses: list, sleeps: list) -> tuple[ExchangeClient, list]:
    seen: list[httpx.Request] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    client = ExchangeClient(
        "http://exchange.test", retries=3, backoff=0.5, transport=httpx.MockTransport(respond), sleep=sleeps.append
    )
    return client, seen


def test_transient_failures_are_retried_with_exponential_backoff() -> None:
    sleeps: list[float] = []
    client, seen = _client(
        [httpx.Response(503), httpx.ConnectError("refused"), httpx.Response(200, content=b"ok")], sleeps
    )
    fetched = client.get("/market/trade-quotes", {"date": "2026-11-20"})
    assert fetched.body == b"ok" and fetched.attempts == 3
    assert sleeps == [0.5, 1.0]
    assert seen[0].headers["User-Agent"] == USER_AGENT
    assert seen[0].url.params["date"] == "2026-11-20"


def test_retries_are_bounded() -> None:
    sleeps: list[float] = []
    client, seen = _client([httpx.Response(500)] * 4, sleeps)
    with pytest.raises(SourceUnavailableError, match="answered 500 on all 4 attempts"):
        client.get("/x")
    assert len(seen) == 4 and sleeps == [0.5, 1.0, 2.0]


def test_timeouts_are_transient() -> None:
    client, _ = _client([httpx.ReadTimeout("slow")] * 4, [])
    with pytest.raises(SourceUnavailableError, match="timed out"):
        client.get("/x")


@pytest.mark.parametrize("status", [400, 403, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    client, seen = _client([httpx.Response(status, content=b"no such page")], [])
    with pytest.raises(SourceUnavailableError, match=f"answered {status}; not retried"):
        client.get("/x")
    assert len(seen) == 1


def test_a_late_day_says_not_published() -> None:
    client, seen = _client([httpx.Response(404, content=b'<p class="not-published">later</p>')], [])
    with pytest.raises(NotPublishedError, match="2026-11-23 is not published yet"):
        client.get("/market/trade-quotes", {"date": "2026-11-23"})
    assert len(seen) == 1


def test_a_day_without_a_session_is_named_with_the_sites_reason_and_not_retried() -> None:
    page = b'<p class="no-session" data-date="2026-11-21">2026-11-21 was not a trading day of the exchange.</p>'
    client, seen = _client([httpx.Response(404, content=page)], [])
    with pytest.raises(
        SourceUnavailableError, match="has no trade quotes for 2026-11-21: 2026-11-21 was not a trading day"
    ):
        client.get("/market/trade-quotes", {"date": "2026-11-21"})
    assert len(seen) == 1


def test_a_page_sent_a_byte_at_a_time_is_a_timeout_and_a_huge_one_is_refused() -> None:
    """The client's timeout bounds each wait only: a body dripping in past `max_seconds` is
    a timeout (retried, then SourceUnavailable), and one past `max_bytes` is refused at
    once, not retried, nor held in memory whole."""
    import time as clock

    def drip():
        for _ in range(40):
            clock.sleep(0.01)
            yield b"x"

    seen: list[httpx.Request] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=drip() if request.url.path == "/slow" else b"y" * 5000)

    client = ExchangeClient(
        "http://exchange.test", retries=1, transport=httpx.MockTransport(respond), sleep=lambda _: None,
        limits=PageLimits(max_bytes=1000, max_seconds=0.1),
    )  # fmt: skip
    started = clock.monotonic()
    with pytest.raises(SourceUnavailableError, match="sent its page for longer than the 0.1 s allowed on all 2"):
        client.get("/slow")
    assert clock.monotonic() - started < 0.6 and len(seen) == 2
    with pytest.raises(SourceUnavailableError, match="exceeds the limit of 1,000 bytes; not retried"):
        client.get("/huge")
    assert len(seen) == 3
