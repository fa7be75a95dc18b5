"""A dividend whose ex-date passes without a trade in the name is counted once.

A client holds 1,000 THN, a thin name last traded on Wednesday at 20.00, and 80,000 cash;
T0 stored a 2.00 dividend of THN ex Thursday, and THN trades neither on Thursday nor on
Friday (LIQ does). Once the credit runs (Friday's deposit credits it first), the cash
holds the 2,000; the close carried from Wednesday still held the dividend, so the
summary, the positions, GraphQL's portfolio, the CLI and the track record's Thursday and
Friday counted it twice until THN traded again. Every valuation that carries Wednesday's
close across Thursday now reads it ex-dividend, as the exchange's reference price (18.00),
exactly when the cash holds the credit: before the credit it is 20.00 beside cash without
it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal

import httpx
import pytest
from pydantic import SecretStr

from market.settings import Settings
from store.engine import service_engine
from tests.api.conftest import Clock, client_served
from tests.api.test_dividend_credited_ahead import _book_days, _cli_shown
from tests.conftest import ADMIN_KEY
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import DAY, seed_market

WEDNESDAY, THURSDAY = date(2026, 11, 18), date(2026, 11, 19)
WEDNESDAY_NOON = datetime(2026, 11, 18, 17, 0, tzinfo=UTC)
FRIDAY_EVENING = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)  # Friday's closes stored, none of THN
BOOK = "{ portfolio { cash equity marketValue positions { nodes { symbol price marketValue } } } }"


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    """Acme's portfolio over REST holding 1,000 THN bought at Wednesday's 20 and 80,000 cash."""
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}}, DAY)
    seed_market(engine, {"THN": {"close": 20.0, "volume": 40_000, "bid": 19.9, "ask": 20.1}}, WEDNESDAY)
    with client_served(settings, "Acme Ltd", WEDNESDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "100000.00"}).status_code == 201
        order = {"side": "buy", "symbol": "THN", "quantity": 1000, "price": "20", "fees": "0"}  # no broker fee
        assert http.post("/api/portfolio/trade", json=order).status_code == 201, "bought"
        yield http, clock, settings


def _shown(http: httpx.Client) -> tuple[Decimal, Decimal, Decimal, Decimal, Decimal]:
    """(cash, summary equity, positions' equity, GraphQL equity, THN's price) as a client reads them."""
    summary = http.get("/api/portfolio/summary").json()
    positions = http.get("/api/portfolio").json()
    graph = http.post("/graphql", json={"query": BOOK}).json()["data"]["portfolio"]
    (held,) = positions["positions"]
    assert graph["positions"]["nodes"] == [
        {"symbol": "THN", "price": held["price"], "marketValue": held["market_value"]}
    ], graph
    assert Decimal(positions["equity"]) == Decimal(positions["cash"]) + Decimal(held["market_value"])
    return (
        Decimal(summary["cash"]),
        Decimal(summary["equity"]),
        Decimal(positions["equity"]),
        Decimal(graph["equity"]),
        Decimal(held["price"]),
    )


def test_a_dividend_ex_on_a_day_the_name_did_not_trade_is_counted_once(served, monkeypatch) -> None:
    http, clock, settings = served
    portfolio_id = http.get("/api/portfolio/summary").json()["portfolio_id"]
    announce_action(service_engine(settings), "THN", "DIVIDEND", 2.0, THURSDAY, "final, ex-date 2026-11-19")
    clock.moment = FRIDAY_EVENING
    assert _shown(http) == (80_000, 100_000, 100_000, 100_000, 20)  # not credited: the carried close holds it
    before = _book_days(settings, portfolio_id)
    assert [before[d.isoformat()][0] for d in (WEDNESDAY, THURSDAY, DAY)] == [100_000.0] * 3

    assert http.post("/api/portfolio/cash", json={"amount": "1000.00"}).status_code == 201  # credits it first
    assert _shown(http) == (83_000, 101_000, 101_000, 101_000, 18)  # was 103,000 at 20.00
    said = _cli_shown(monkeypatch, portfolio_id, FRIDAY_EVENING)
    assert said.startswith(f"{portfolio_id}: cash 83,000.00") and ", equity 101,000.00 at" in said, said
    days = _book_days(settings, portfolio_id)
    assert days[WEDNESDAY.isoformat()] == before[WEDNESDAY.isoformat()]  # the eve: its close, its cash
    assert days[THURSDAY.isoformat()] == (100_000.0, 0.18)  # the credit from Thursday's close, once
    assert days[DAY.isoformat()] == (101_000.0, 18_000 / 101_000)  # and Friday's deposit
    record = http.get("/api/portfolio/track-record").json()
    assert record["days"] == len(days), record
