"""One client's track record cannot take the process: a miss (the record rebuilt after a
write) is that client's one expensive read at a time; a second of theirs meanwhile is 429
with Retry-After at once, holding no database slot or thread; the rebuilt record is kept
for REST and GraphQL alike until the book or the prices change (one read model per book,
views/book_record.py, which both transports read)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.api.conftest import Api
from tests.api.graph import data, gql

TRACK = "{ portfolio { trackRecord { days totalReturn } } }"


def _slow_rebuilds(monkeypatch: pytest.MonkeyPatch, seconds: float) -> list[str]:
    """Every book record rebuild (views.book_record.catch_up) made `seconds` slower; the
    list of the books rebuilt, filled as each starts."""
    import views.book_record

    real, rebuilt = views.book_record.catch_up, []

    def slow(conn, portfolio_id, state, version):
        rebuilt.append(portfolio_id)
        time.sleep(seconds)
        return real(conn, portfolio_id, state, version)

    monkeypatch.setattr(views.book_record, "catch_up", slow)
    return rebuilt


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_clients_rebuilds_run_one_at_a_time_and_are_kept(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _slow_rebuilds(monkeypatch, 0.6)
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "0.01"}).status_code == 201
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: api.acme("GET", "/api/portfolio/track-record"), range(4)))
        other = pool.submit(api.acme, "GET", "/api/market/latest")  # another read is served meanwhile
        assert other.result().status_code == 200
    codes = sorted(a.status_code for a in answers)
    assert codes[0] == 200 and set(codes) <= {200, 429} and 429 in codes, codes
    refused = next(a for a in answers if a.status_code == 429)
    assert refused.headers["Retry-After"] == "1" and "still running" in refused.json()["detail"]
    assert len(calls) == 1, "one rebuild for the client's concurrent reads"
    assert api.acme("GET", "/api/portfolio/track-record").status_code == 200 and len(calls) == 1  # kept
    key = api.world.acme_key
    first = data(api, TRACK, key)["portfolio"]["trackRecord"]
    again = data(api, TRACK, key)["portfolio"]["trackRecord"]
    assert first == again and len(calls) == 1, "GraphQL reads the book's read model as REST left it"
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "0.01"}).status_code == 201
    assert data(api, TRACK, key)["portfolio"]["trackRecord"] and len(calls) == 2, "a write: one catch-up"
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "0.01"}).status_code == 201
    with ThreadPoolExecutor(1) as pool:
        rest = pool.submit(api.acme, "GET", "/api/portfolio/track-record")
        started = time.monotonic()
        while len(calls) < 3 and time.monotonic() - started < 10:
            time.sleep(0.005)  # until the REST read is rebuilding (on a loaded machine it starts late)
        # the REST read is rebuilding: GraphQL's meanwhile is refused, with a code
        refused = gql(api, TRACK, key).json()
        assert rest.result().status_code == 200
    assert not (refused["data"]["portfolio"] or {}).get("trackRecord")
    assert (
        refused["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
        and "still running" in refused["errors"][0]["message"]
    )


def _counted(api: Api) -> int:
    """The requests the acme client's count holds, this window and the last (the limiter's
    own counters, so that a minute's edge between two reads changes nothing)."""
    from tests.api.conftest import _SERVER

    limiter = _SERVER.app.state.services.limiter
    return sum(n for (counter, _), n in limiter._counts.items() if counter.startswith("client:"))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_read_refused_while_the_clients_rebuild_runs_is_not_counted(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/api.md: a refused request is not counted. The 429 of a second expensive read
    (REST) and its GraphQL twin took one of the client's 60 requests a minute each, so a
    client doing what Retry-After: 1 says through a 20 s rebuild spent a third of its
    minute on refusals; GraphQL's refusal said nothing of when to retry."""
    rebuilding = _slow_rebuilds(monkeypatch, 1.5)
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "0.01"}).status_code == 201
    before = _counted(api)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(api.acme, "GET", "/api/portfolio/track-record")
        started = time.monotonic()
        while not rebuilding and time.monotonic() - started < 10:
            time.sleep(0.005)
        refused = api.acme("GET", "/api/portfolio/track-record")
        graph = gql(api, TRACK, api.world.acme_key).json()
        assert first.result().status_code == 200
    assert refused.status_code == 429 and graph["errors"][0]["extensions"] == {"code": "RATE_LIMITED", "retryAfter": 1}
    assert _counted(api) - before == 1, "only the read that was answered is counted"
