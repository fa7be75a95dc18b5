"""The API under test: a seeded store (tests/api/world.py) served over real HTTP on loopback."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import httpx
import pytest

from api.app import create_app
from api.problems import ALL_TYPES
from desk import keys as keystore
from market.settings import Settings
from pipeline.serving import serve_in_thread
from store.engine import service_engine
from tests.api import world
from tests.conftest import ADMIN_KEY


class Clock:
    """The app's clock, moved by tests (key grace periods, suggestion expiry)."""

    def __init__(self) -> None:
        self.moment = world.MORNING

    def __call__(self):  # noqa: ANN204
        return self.moment


@contextmanager
def client_served(settings: Settings, client: str, moment: datetime) -> Iterator[tuple[httpx.Client, Clock]]:
    """The app served over real HTTP at `moment` (its Clock, which the test moves), and a
    client holding a new PRO key of `client`'s."""
    key = keystore.generate(service_engine(settings), settings, client, "PRO", now=moment)["api_key"]
    clock = Clock()
    clock.moment = moment
    with serve_in_thread(create_app(settings, now=clock)) as base, httpx.Client(base_url=base, timeout=30) as http:
        http.headers["X-API-Key"] = key
        yield http, clock


# One TLS context for every test's client: each httpx.Client otherwise builds its own from the
# CA bundle (about 30 ms), which a loopback http:// client never uses.
_TLS = ssl.create_default_context()


class Api:
    def __init__(self, base: str, w: world.World, clock: Clock) -> None:
        self.base, self.world, self.clock = base, w, clock
        self.http = httpx.Client(base_url=base, timeout=30, verify=_TLS)

    def call(self, method: str, path: str, key: str | None = None, **kwargs) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}))
        if key is not None:
            headers["X-API-Key"] = key
        return self.http.request(method, path, headers=headers, **kwargs)

    def admin(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self.call(method, path, ADMIN_KEY, **kwargs)

    def acme(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self.call(method, path, self.world.acme_key, **kwargs)


class _Switch:
    """The ASGI app that the `api` fixture's loopback server serves: the current test's app,
    switched per test. One uvicorn server per test process instead of one per test: a
    server's stop waits out uvicorn's own ticks (about 0.2 s), and the app has no lifespan
    of its own to run. A test that needs a server of its own (other settings, proxy
    headers, two workers) starts one with `serve_in_thread`."""

    def __init__(self) -> None:
        self.app = None
        self.base: str | None = None
        self._serving = None

    def serve(self, app) -> str:
        self.app = app
        if self.base is None:
            self._serving = serve_in_thread(self)
            self.base = self._serving.__enter__()
        return self.base

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":  # the server's start and stop: nothing of the apps' to run
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        app = self.app
        if app is None:
            raise RuntimeError("a request reached the tests' API server between two tests")
        await app(scope, receive, send)


_SERVER = _Switch()


@pytest.fixture
def api(unmade_settings: Settings) -> Iterator[Api]:
    w = world.build(unmade_settings)
    clock = Clock()
    client = Api(_SERVER.serve(create_app(w.settings, now=clock)), w, clock)
    try:
        yield client
    finally:
        client.http.close()
        _SERVER.app = None


def assert_problem(response: httpx.Response, status: int, *detail_parts: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    if status == 401:  # RFC 9110: every 401 names its challenge
        assert response.headers["WWW-Authenticate"] == 'APIKey header="X-API-Key"', response.headers
    body = response.json()
    assert body["status"] == status and body["request_id"] and body["instance"]
    # one title per type, whatever the occurrence (RFC 9457 3.1.3): the type's, from its one table
    (kind,) = [k for k in ALL_TYPES if k.status == status and body["type"].endswith(k.uri)] or [None]
    assert kind is not None and body["title"] == kind.title, (body["type"], body["title"])
    assert body["detail"] != body["title"]
    for part in detail_parts:
        assert part in body["detail"], body["detail"]
    return body
