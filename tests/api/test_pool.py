"""One connection per request, never nested (issue 23): every read endpoint answers on a
pool of ONE connection (a handler that held a connection and asked for a second would
wait for itself until the pool timeout), and 64 concurrent requests to every read
endpoint on a pool of two answer like a lone request, with no 500 and no timeout; on
SQLite and on Postgres."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import httpx
import pytest
from sqlalchemy import event

from api.app import create_app
from desk import keys as keystore
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api import world
from tests.api.conftest import Clock
from tests.conftest import ADMIN_KEY

SCREEN = (
    "{ instruments(first: 60) { nodes { symbol latestPrediction { score action } "
    "recentBars(first: 20) { nodes { tradingDate close rsi14 } } } } }"
)
PORTFOLIOS = "{ portfolio { equity } aiPortfolio { equity } }"
READS = [  # (path, key: "client" or "admin")
    ("/api/market/latest", "client"),
    ("/api/market/breadth", "client"),
    ("/api/market/symbol/LIQ", "client"),
    ("/api/market/history/LIQ?limit=250", "client"),
    ("/api/market/history/MID?limit=5", "client"),
    ("/api/portfolio", "client"),
    ("/api/portfolio/summary", "client"),
    ("/api/portfolio/trade", "client"),
    ("/api/portfolio/summary", "admin"),
    ("/api/ai-portfolio/positions", "client"),
    ("/api/ai-portfolio/summary", "client"),
    ("/api/ai-portfolio/history", "admin"),
    ("/api/ai/performance", "client"),
    ("/api/suggestions", "client"),
    ("/api/v1/macro/indicators", "client"),
    ("/graphql?" + urlencode({"query": SCREEN}), "client"),
    ("/graphql?" + urlencode({"query": PORTFOLIOS}), "client"),
]


@pytest.fixture
def seeded(unmade_settings: Settings) -> Iterator[tuple[world.World, str]]:
    w = world.build(unmade_settings)
    keystore.set_option(
        w.engine,
        w.acme_key_id,
        "RATE_LIMIT_SET",
        10_000_000,  # 64 at once, many times
        now=world.MORNING,  # in effect at the app's pinned clock (not at the real time)
    )
    yield w, w.acme_key


def _serve(w: world.World, pool_size: int) -> tuple:
    settings = w.settings.model_copy(update={"db_pool_size": pool_size, "db_max_overflow": 0, "db_pool_timeout": 20})
    app = create_app(settings, now=Clock())
    pool = app.state.services.engine.pool
    assert pool.size() == pool_size and pool._max_overflow == 0  # the pool under test
    return app, serve_in_thread(app)


def _get(http: httpx.Client, path: str, key: str) -> tuple[int, bytes]:
    response = http.get(path, headers={"X-API-Key": key})
    return response.status_code, response.content


def test_every_read_endpoint_answers_on_a_pool_of_one_connection(seeded) -> None:
    w, client_key = seeded
    app, server = _serve(w, 1)
    held: list[int] = []
    event.listen(app.state.services.engine, "checkout", lambda *_: held.append(1))
    with server as base, httpx.Client(base_url=base, timeout=60) as http:
        for path, who in READS:
            before = len(held)
            status, body = _get(http, path, ADMIN_KEY if who == "admin" else client_key)
            assert status == 200, (path, body[:300])
            if not path.startswith("/graphql"):  # a REST request: at most one checkout, key check and reads
                # together (none when its version read on the event loop finds its body kept or built
                # from a read model kept: store/engine.py `EventLoopReader`, `ServerReader`)
                assert len(held) - before <= 1, path


def test_sixty_four_concurrent_requests_to_every_read_endpoint_on_a_pool_of_two(seeded) -> None:
    w, client_key = seeded
    app, server = _serve(w, 2)
    with (
        server as base,
        httpx.Client(
            base_url=base, timeout=60, limits=httpx.Limits(max_connections=64, max_keepalive_connections=64)
        ) as http,
    ):
        alone = {(path, who): _get(http, path, ADMIN_KEY if who == "admin" else client_key) for path, who in READS}
        assert all(status == 200 for status, _ in alone.values()), {k: v[0] for k, v in alone.items()}
        with ThreadPoolExecutor(64) as workers:
            for path, who in READS:  # 64 at once to each endpoint in turn ...
                answers = list(
                    workers.map(lambda _: _get(http, path, ADMIN_KEY if who == "admin" else client_key), range(64))  # noqa: B023 - list() waits for all 64 in this iteration
                )
                assert answers == [alone[(path, who)]] * 64, (path, {s for s, _ in answers})
            mixed = [READS[i % len(READS)] for i in range(64 * 4)]  # ... and all of them mixed, 64 at a time
            answers = list(
                workers.map(lambda r: (r, _get(http, r[0], ADMIN_KEY if r[1] == "admin" else client_key)), mixed)
            )
        assert all(answer == alone[read] for read, answer in answers), sorted(
            {(read[0], answer[0]) for read, answer in answers if answer != alone[read]}
        )


def test_a_bodiless_write_gives_the_request_connection_back_before_writing(seeded) -> None:
    """POST /api/suggestions/{id}/reject carries no body, so its key is checked on the
    request's connection; the write then runs in its own locked transaction, which on a
    pool of one would wait for the request's connection if it still held it."""
    w, client_key = seeded
    _, server = _serve(w, 1)
    with server as base, httpx.Client(base_url=base, timeout=60) as http:
        response = http.post(f"/api/suggestions/{w.pending_suggestion}/reject", headers={"X-API-Key": client_key})
        assert response.status_code == 200 and response.json()["state"] == "REJECTED", response.text
        assert http.get("/api/suggestions", headers={"X-API-Key": client_key}).json()["items"] == []
