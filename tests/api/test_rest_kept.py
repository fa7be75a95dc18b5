"""A REST read already answered for the current data version is answered again from its
kept body before FastAPI resolves a parameter or runs the handler (api/security.py
`KeyCheckedRoute._kept`, api/services.py `Services.answer` and `Recipes`; issue 65,
item 2): its version read alone, on the request's one connection, the key's check riding
on it. What must still hold on that path: the body is only ever the caller's own (never
another key's, never another portfolio's), a revoked key is 401, the request is counted
against its key's limit, an admin route is 403 for a client key, a bad parameter is 422,
and a write moves the version so the next read is fresh. SQLite and Postgres."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event

from api.app import create_app
from api.services import Recipe, Recipes
from desk import keys as keystore
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api import world
from tests.api.conftest import Api, Clock, assert_problem
from tests.api.test_graphql_kept import SCREEN
from tests.api.test_graphql_queries import StatementCounter


@dataclass
class Served:
    api: Api
    app: FastAPI
    counter: StatementCounter
    handled: list[str]  # the portfolio ids the portfolio handlers asked for (Services.portfolio_on)


@pytest.fixture
def served(unmade_settings: Settings) -> Iterator[Served]:
    w = world.build(unmade_settings)
    clock = Clock()
    app = create_app(w.settings, now=clock)
    svc = app.state.services
    handled: list[str] = []
    portfolio_on = svc.portfolio_on

    async def counted(conn: Any, account: Any) -> str:  # only a handler asks: a kept answer never runs one
        handled.append(account.portfolio_id)
        return await portfolio_on(conn, account)

    svc.portfolio_on = counted
    counter = StatementCounter(svc.engine)
    with serve_in_thread(app) as base:
        api = Api(base, w, clock)
        try:
            yield Served(api, app, counter, handled)
        finally:
            api.http.close()


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["ratelimit"].split("r=")[1].split(";")[0])


def test_a_second_read_of_the_same_url_is_its_kept_body_after_one_statement(served: Served) -> None:
    api, counter = served.api, served.counter
    for path in ("/api/portfolio/summary", "/api/market/latest", "/api/market/history/LIQ?limit=5"):
        first = api.acme("GET", path)
        assert first.status_code == 200, first.text
        responses: list[httpx.Response] = []
        statements = counter.during(lambda path=path, into=responses: into.append(api.acme("GET", path)))
        again = responses[0]
        assert again.status_code == 200 and again.content == first.content, path
        assert again.headers["content-type"] == "application/json"
        assert statements == 1, (path, statements)  # the read's version, the key's riding on it
        assert _remaining(again) == _remaining(first) - 1  # counted like any request
    # The portfolio read's handler ran once: the second answer came before FastAPI reached it.
    assert served.handled.count(served.handled[0]) == 1, served.handled


def test_another_callers_url_is_never_answered_with_the_first_callers_body(served: Served) -> None:
    api, w = served.api, served.api.world
    api.acme("POST", "/api/portfolio/cash", json={"amount": "1000.50"}).raise_for_status()
    for path in ("/api/portfolio", "/api/portfolio/summary", "/api/portfolio/cash", "/api/suggestions"):
        acme = [api.acme("GET", path) for _ in range(2)]
        beta = [api.call("GET", path, w.beta_key) for _ in range(2)]
        assert all(r.status_code == 200 for r in acme + beta), [r.text for r in acme + beta]
        assert acme[0].content == acme[1].content and beta[0].content == beta[1].content
        assert beta[0].content != acme[0].content, path  # beta's own book, not acme's kept body
    assert api.call("GET", "/api/portfolio/cash", w.beta_key).json()["items"] == []
    # The admin key reads the house book: its kept body is the house's, and acme's stays acme's.
    house = api.admin("GET", "/api/portfolio/summary")
    assert house.status_code == 200 and house.content != api.acme("GET", "/api/portfolio/summary").content
    # Another key of acme's own client is another caller (its tier or rights may differ): its
    # first read is its own handler's, never the recipe kept for acme's key.
    second_key = served.app.state.services.desk.issue_key("Acme Capital", "PRO")["api_key"]  # world.build's client
    before = len(served.handled)
    assert api.call("GET", "/api/portfolio/summary", second_key).status_code == 200
    assert len(served.handled) == before + 1


def test_a_revoked_key_is_401_not_its_kept_answer(served: Served) -> None:
    api, w = served.api, served.api.world
    for _ in range(2):
        assert api.acme("GET", "/api/portfolio/summary").status_code == 200
        assert api.acme("GET", "/api/market/breadth").status_code == 200
    keystore.revoke(w.engine, w.acme_key_id, now=world.MORNING)  # as another worker would
    assert_problem(api.acme("GET", "/api/portfolio/summary"), 401)
    assert_problem(api.acme("GET", "/api/market/breadth"), 401)
    assert api.call("GET", "/api/portfolio/summary", w.beta_key).status_code == 200


def test_admin_routes_bad_parameters_and_writes_on_the_kept_path(served: Served) -> None:
    api = served.api
    history = "/api/ai-portfolio/history"
    for _ in range(2):
        assert api.admin("GET", history).status_code == 200  # kept for the admin key
    for _ in range(2):
        assert_problem(api.acme("GET", history), 403)  # the client key's rights, before anything kept
    for _ in range(2):
        assert api.acme("GET", "/api/market/history/LIQ?limit=5").status_code == 200
        assert_problem(api.acme("GET", "/api/market/history/LIQ?limit=0"), 422)
        assert api.acme("GET", "/api/market/symbol/NOPE").status_code == 404
    # A write moves the read's version: the next read is built afresh, then kept again.
    before = [api.acme("GET", "/api/portfolio/summary") for _ in range(2)]
    assert before[0].content == before[1].content
    api.acme("POST", "/api/portfolio/cash", json={"amount": "250"}).raise_for_status()
    after = api.acme("GET", "/api/portfolio/summary")
    assert after.status_code == 200 and after.content != before[0].content
    cash = lambda r: float(r.json()["cash"])  # noqa: E731
    assert cash(after) == pytest.approx(cash(before[0]) + 250)
    assert api.acme("GET", "/api/portfolio/summary").content == after.content


def test_kept_answers_take_no_pooled_connection(served: Served) -> None:
    """A kept answer's version read is made on the event loop, on a SQLite file on the
    process's event-loop reader (store/engine.py `EventLoopReader`), on a database server
    awaited on one of its server readers (`ServerReader`), not on a connection checked out
    of the pool and given back in a worker thread for one statement; it still sees a write
    made by another connection on the next request."""
    api, svc = served.api, served.app.state.services
    screen = "/graphql?" + urlencode({"query": SCREEN, "variables": json.dumps({"first": 2})})
    paths = ("/api/portfolio/summary", "/api/market/latest", "/api/market/breadth", screen)
    first = {path: api.acme("GET", path) for path in paths}
    assert all(r.status_code == 200 for r in first.values()), {p: r.text for p, r in first.items()}
    checkouts: list[object] = []
    event.listen(svc.engine, "checkout", lambda *_: checkouts.append(_))
    for path in paths:
        again = api.acme("GET", path)
        assert again.status_code == 200 and again.content == first[path].content, path
    assert checkouts == []
    api.acme("POST", "/api/portfolio/cash", json={"amount": "125"}).raise_for_status()  # on a pooled connection
    after = api.acme("GET", "/api/portfolio/summary")
    assert float(after.json()["cash"]) == pytest.approx(float(first[paths[0]].json()["cash"]) + 125)


def test_recipes_are_bounded() -> None:
    recipes = Recipes()
    recipe = Recipe(lambda conn: None, None)  # type: ignore[arg-type,return-value]
    for n in range(Recipes.ENTRIES + 10):
        recipes.remember(("/api/market/latest", f"n={n}".encode(), None), recipe)
    assert len(recipes) == Recipes.ENTRIES
    assert recipes.get(("/api/market/latest", b"n=0", None)) is None  # the oldest went first
    assert recipes.get(("/api/market/latest", f"n={Recipes.ENTRIES + 9}".encode(), None)) is recipe
    long = ("/api/market/latest", b"x=" + b"a" * Recipes.URL_BYTES, None)
    recipes.remember(long, recipe)
    assert recipes.get(long) is None  # a long URL (ignored parameters) is never kept
