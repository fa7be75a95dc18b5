"""Every suggestion T2 hands out confirms on an unchanged market (reviewer's t11).

A client holds 8,000 WRM bought at its Friday close of 14.75, some 17 slots, so Monday's
plan trims it; WRM's closing bid sits at 12.40, under the 15% band's floor of 12.54 that
every trade a client books passes (`trading.within_band`). Before the fix the plan priced
the trim at the bid less its impact (11.80), outside the band, so its confirmation was refused
(422) and the buys planned on its proceeds were then refused for cash. Now the plan applies
the confirmation's band: the trim is left out with the band's refusal as its reason
(the stage's `left_out` table), its proceeds are not spent, and every suggestion listed
over REST confirms on Monday's morning."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr

from market.settings import Settings
from pipeline.runner import run_stage
from store.engine import service_engine
from tests.api.conftest import Clock, client_served
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR, DAY, seed_market, seed_predictions

MONDAY = CALENDAR.next_trading_day(DAY)
FRIDAY_NOON = datetime(2026, 11, 20, 17, 0, tzinfo=UTC)  # 12:00 exchange time, DAY's session
MONDAY_MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time
BAND = "the limit price 11.80 is outside the day's band 12.54-16.96 (15% around the 2026-11-20 close of 14.75)"


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    engine = service_engine(settings)
    seed_market(
        engine,
        {
            "WRM": {"close": 14.75, "volume": 40_000, "bid": 12.40, "ask": 14.80},
            "LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1},
            "MID": {"close": 20.0, "volume": 40_000, "bid": 19.9, "ask": 20.1},
        },
    )
    seed_predictions(
        engine,
        DAY,
        {
            "WRM": {"score": 52.0, "action": "HOLD", "tercile": "MIDDLE"},
            "LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP", "weight": 0.1, "held_edge": 0.02},
            "MID": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1, "held_edge": 0.01},
        },
    )
    with client_served(settings, "Wide Co", FRIDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "130000.00"}).status_code == 201
        bought = http.post(
            "/api/portfolio/trade", json={"side": "buy", "symbol": "WRM", "quantity": 8000, "price": "14.75"}
        )
        assert bought.status_code == 201, bought.text
        yield http, clock, settings


def test_every_planned_suggestion_confirms_and_a_trim_outside_the_band_is_left_out(served) -> None:
    http, clock, settings = served
    stage = run_stage("t2_suggestions", MONDAY, settings=settings)
    clock.moment = MONDAY_MORNING
    listed = http.get("/api/suggestions").json()["items"]
    refused = []
    for suggestion in listed:  # as listed: the sells first
        confirmed = http.post(f"/api/suggestions/{suggestion['suggestion_id']}/confirm")
        if confirmed.status_code != 200 or confirmed.json()["state"] != "CONFIRMED":
            refused.append((suggestion["symbol"], suggestion["side"], confirmed.text))
    assert listed and refused == []
    # no WRM sell it could not book, and the buys planned on the cash the client has
    assert {s["symbol"] for s in listed} == {"LIQ", "MID"}, listed
    (left_out,) = stage.tables["left_out"]
    assert (left_out["symbol"], left_out["side"]) == ("WRM", "SELL")
    assert left_out["reason"].startswith("trimmed to its slot") and left_out["reason"].endswith(BAND)


HELD = {f"H{i}": {"close": 100.0, "volume": 40_000, "bid": 99.9, "ask": 100.1} for i in range(8)}


@pytest.fixture
def cash_short(settings: Settings) -> Iterator[tuple[httpx.Client, Clock, Settings]]:
    """A client with 960,000 in eight names and 40,000 cash: the LIQ slot (about 1,266
    shares at 50) costs more than the cash, so T2 sizes the buy to the cash."""
    settings = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000})
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}, **HELD})
    signals = {"LIQ": {"score": 80.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}}
    signals |= {s: {"score": 60.0, "action": "LONG", "tercile": "TOP", "weight": 0.1} for s in HELD}
    seed_predictions(engine, DAY, signals)
    with client_served(settings, "Short Co", FRIDAY_NOON) as (http, clock):
        assert http.post("/api/portfolio/cash", json={"amount": "1000000.00"}).status_code == 201
        for symbol in HELD:
            trade = {"side": "buy", "symbol": symbol, "quantity": 1200, "price": "100", "fees": "0"}
            assert http.post("/api/portfolio/trade", json=trade).status_code == 201
        yield http, clock, settings


def test_a_buy_sized_to_the_cash_confirms(cash_short) -> None:
    """The cash cap is priced at the quantity's own price (impact and the tick included),
    not one share's: before the fix T2 suggested 791 LIQ at 50.15 with 337.18 in fees,
    40,005.83 against 40,000 cash, and the confirmation refused it."""
    http, clock, settings = cash_short
    run_stage("t2_suggestions", MONDAY, settings=settings)
    clock.moment = MONDAY_MORNING
    (suggestion,) = http.get("/api/suggestions").json()["items"]
    assert (suggestion["symbol"], suggestion["reason"]["limits"]["bound_by"]) == ("LIQ", "cash")
    confirmed = http.post(f"/api/suggestions/{suggestion['suggestion_id']}/confirm")
    assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED", confirmed.text
