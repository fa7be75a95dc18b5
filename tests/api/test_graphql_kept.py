"""A market query's answer kept for the current data version is served without its
client's heavy turn (api/graphql/schema.py `KeptAnswerRoute`, issue 65): the turn is for
work that has to be done, so a client whose turn is held by one of its own operations
still has its kept answers at once, while anything that has to run waits for the turn as
before. The key is checked on that path as on every other: a key revoked meanwhile is 401,
never a kept answer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from urllib.parse import urlencode

import httpx
from fastapi import FastAPI

from api.app import create_app
from desk import keys as keystore
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api import world
from tests.api.conftest import Api, Clock

SCREEN = (
    "query Screen($first: Int) { instruments(first: $first) { nodes { symbol latestPrediction { score action } "
    "recentBars(first: 3) { nodes { tradingDate close rsi14 } } } } }"
)
CASH = {"query": "{ portfolio { cash } }"}


@contextmanager
def _turn_held(app: FastAPI, client: str) -> Iterator[None]:
    """`client`'s one heavy turn taken and held (as one of its long operations would) until
    the block ends."""
    held, release = threading.Event(), threading.Event()

    async def hold() -> None:
        async with app.state.services.heavy_turns.queued(client):
            held.set()
            await asyncio.to_thread(release.wait, 60)

    holder = threading.Thread(target=asyncio.run, args=(hold(),))
    holder.start()
    try:
        assert held.wait(10), "the turn was never taken"
        yield
    finally:
        release.set()
        holder.join(10)


def _get(api: Api, key: str, variables: dict) -> httpx.Response:
    query = urlencode({"query": SCREEN, "variables": json.dumps(variables)})
    return api.call("GET", f"/graphql?{query}", key)


def test_a_kept_market_answer_is_served_while_its_clients_heavy_turn_is_held(unmade_settings: Settings) -> None:
    w = world.build(unmade_settings)
    clock = Clock()
    app = create_app(w.settings.model_copy(update={"heavy_requests": 2, "heavy_requests_per_client": 1}), now=clock)
    with w.engine.connect() as conn:
        acme = f"client:{app.state.services.desk.key_record(conn, w.acme_key).client_id}"
    with serve_in_thread(app) as base:
        api = Api(base, w, clock)
        asked = {"query": SCREEN, "variables": {"first": 10}}
        first = api.call("POST", "/graphql", w.acme_key, json=asked)  # executed in acme's turn, then kept
        assert first.status_code == 200 and "errors" not in first.json(), first.text
        assert _get(api, w.beta_key, {"first": 10}).content == first.content  # beta's key now known here
        with ThreadPoolExecutor(2) as pool:
            with _turn_held(app, acme):
                waiting = pool.submit(api.call, "POST", "/graphql", w.acme_key, json=CASH)  # has to run: waits
                other = pool.submit(api.call, "POST", "/graphql", w.acme_key, json={**asked, "variables": {"first": 2}})
                # The kept answer, by POST and by GET, while acme's turn is held: not queued behind it.
                assert api.call("POST", "/graphql", w.acme_key, json=asked).content == first.content
                kept = _get(api, w.acme_key, {"first": 10})
                assert kept.status_code == 200 and kept.content == first.content
                assert "r=" in kept.headers["ratelimit"]  # counted against acme's limit as any request
                assert not waiting.done() and not other.done()  # what has to run waits for the turn
            assert waiting.result().status_code == 200 and "errors" not in waiting.result().json()
            assert [n["symbol"] for n in other.result().json()["data"]["instruments"]["nodes"]] == [
                n["symbol"] for n in first.json()["data"]["instruments"]["nodes"][:2]
            ]
        keystore.revoke(w.engine, w.beta_key_id, now=world.MORNING)  # as another worker would
        revoked = _get(api, w.beta_key, {"first": 10})
        assert revoked.status_code == 401, revoked.text  # the key's version rode on the version read
        api.http.close()


def _validation_record(engine: object, day: object) -> None:
    """The validation record's LIQ prediction for `day`, written as `marketintel bootstrap`
    writes it while the API serves."""
    from store import tables
    from tests.portfolio.seed import seed_predictions

    walk = {"LIQ": {"score": 61.0, "action": "LONG", "tercile": "TOP"}}
    seed_predictions(engine, day, walk, model_id="wf-1", table=tables.validation_predictions)


def test_a_validation_record_written_while_the_app_serves_reaches_graphql_at_once(api: Api) -> None:
    """The validation record serves the days before the live record's first: a prediction
    written to it moves the kept market answers (desk/versions.py SERVED_PREDICTIONS), as it
    moves REST's /api/market/latest, instead of GraphQL answering the earlier body."""
    from tests.portfolio.seed import CALENDAR, DAY

    before = CALENDAR.previous_trading_day(CALENDAR.previous_trading_day(DAY))  # before the live record
    asked = {
        "query": f'{{ instrument(symbol: "LIQ") {{ predictions(start: "{before.isoformat()}") '
        "{ nodes { tradingDate score record } } } }"
    }

    def served() -> list[dict]:
        answer = api.acme("POST", "/graphql", json=asked)
        assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
        return answer.json()["data"]["instrument"]["predictions"]["nodes"]

    assert [n["record"] for n in served()] == ["live", "live"]  # answered, and kept
    _validation_record(api.world.engine, before)
    assert served()[0] == {"tradingDate": before.isoformat(), "score": 61.0, "record": "validation"}
    rest = api.acme("GET", "/api/market/latest", params={"date": before.isoformat()}).json()["LIQ"]
    assert rest["score"] == 61.0  # REST and GraphQL agree


def test_before_the_first_live_day_a_validation_record_written_reaches_latest_prediction(
    settings: Settings,
) -> None:
    """With no live record yet (a service started before `marketintel bootstrap`), a position's
    latestPrediction is the validation record's latest day as soon as it is written, over
    GraphQL as over REST, not the null kept from before."""
    from pydantic import SecretStr

    from store.engine import service_engine
    from tests.conftest import ADMIN_KEY
    from tests.portfolio.seed import DAY

    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)})
    engine = service_engine(settings)
    world.seed_prices(engine)
    app = create_app(settings, now=Clock())
    held = {"query": "{ portfolio { positions { nodes { symbol latestPrediction { tradingDate score record } } } } }"}
    with serve_in_thread(app) as base:
        with httpx.Client(base_url=base, timeout=30, headers={"X-API-Key": ADMIN_KEY}) as http:
            assert http.post("/api/portfolio/cash", json={"amount": "100000.00"}).status_code == 201
            bought = {"side": "buy", "symbol": "LIQ", "quantity": 10, "price": "52.00"}
            assert http.post("/api/portfolio/trade", json=bought).status_code == 201

            def latest() -> dict | None:
                answer = http.post("/graphql", json=held).json()
                return answer["data"]["portfolio"]["positions"]["nodes"][0]["latestPrediction"]

            assert latest() is None  # nothing scored yet, and that answer kept
            _validation_record(engine, DAY)
            assert latest() == {"tradingDate": DAY.isoformat(), "score": 61.0, "record": "validation"}
            assert http.get("/api/market/latest").json()["LIQ"]["score"] == 61.0
