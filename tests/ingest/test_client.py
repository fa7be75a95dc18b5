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


def test_a_redirect_to_another_host_is_checked_before_it_is_followed() -> None:
    """A configured site that redirects to an internal address had the client request it
    (the cloud metadata service, a loopback port); a redirect on its own host, or to a
    public address, is followed."""
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        hops = {
            "/inside": "http://169.254.169.254/latest/meta-data/",
            "/moved": "/here",
            "/public": "http://93.184.216.34/here",  # written as an address: nothing is resolved
        }
        where = hops.get(request.url.path)
        return httpx.Response(302, headers={"location": where}) if where else httpx.Response(200, content=b"ok")

    client = ExchangeClient("http://exchange.test", retries=0, transport=httpx.MockTransport(respond))
    with pytest.raises(SourceUnavailableError) as refused:
        client.get("/inside")
    assert str(refused.value) == (
        "http://exchange.test/inside redirected to http://169.254.169.254/latest/meta-data/, not fetched: "
        "169.254.169.254 is an internal address (169.254.169.254); only public addresses are fetched"
    )
    assert client.get("/moved").body == b"ok" and client.get("/public").body == b"ok"
    assert seen == [
        "http://exchange.test/inside",
        "http://exchange.test/moved",
        "http://exchange.test/here",
        "http://exchange.test/public",
        "http://93.184.216.34/here",
    ]
    inside = PageLimits(internal_redirects=True)
    allowing = ExchangeClient("http://exchange.test", retries=0, transport=httpx.MockTransport(respond), limits=inside)
    assert allowing.get("/inside").body == b"ok"


def test_a_whole_url_is_requested_as_it_is_and_a_path_under_the_site() -> None:
    """The text stage reads its feeds through the exchange's client by their whole URL: it is
    requested as it is (joined to the site's address as text it read `http://hosthttp://host/...`,
    answered 404, and the demo's news feed was never read), a path under the site's address."""
    seen: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, content=b"ok")

    with ExchangeClient("http://exchange.test/jse", retries=0, transport=httpx.MockTransport(respond)) as client:
        assert client.get("http://exchange.test/news/rss").body == b"ok"
        assert client.get("/market/daily", {"date": "2026-11-27"}).body == b"ok"
    assert seen == ["http://exchange.test/news/rss", "http://exchange.test/jse/market/daily?date=2026-11-27"]
