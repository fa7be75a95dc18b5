"""A trade's preview and its booking follow one rule (portfolio/trading.py `price_band`):
what the preview shows is what booking the same order does.

- A name with no close in the 60 days before the session: the preview answered 404 while
  booking the same trade answered 422; both are now the booking's refusal, 422
  problem+json of type invalid-input (GraphQL: placeTrade's InvalidInput, tradePreview's
  error coded BAD_USER_INPUT), saying the same sentence. GraphQL's tradePreview answers
  what REST's preview answers.
- A sell whose fill walks the price past the day's band (SLOW trades about 3,300 shares a
  session): the preview showed the cost model's price, 0.00 for a billion shares (and fees
  of 0.00), or one under the band that booking refuses. The preview now prices it at the
  band's edge, the lowest price a booking admits, says so (`price_bound`, `price_note`),
  and the same order booked at that price without fees is charged the fees it showed.
- A dividend going ex that reaches the close leaves a band of 0.00-0.00: the preview showed
  a price, fees and costs of 0.00 (the whole order fillable) that no booking admits; it is
  now refused as the booking is, the band admitting no price.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from tests.api.conftest import Api, assert_problem
from tests.api.graph import data, gql, snake
from tests.api.test_graphql import TRADE_MUTATION
from tests.api.world import MONDAY
from tests.portfolio.clients import announce_action

PREVIEW = "/api/portfolio/trade/preview"
FIELDS = (
    "symbol side quantity asOf close touch touchSource impact price bandLow bandHigh priceBound priceNote "
    "fillableInOneSession lapseReason fees spreadCost impactCost totalCost "
    "bookingTotal held cashAvailable bookable refusal"
)
PREVIEW_QUERY = (
    "query($s: String!, $y: String!, $q: Shares!) "
    f"{{ tradePreview(side: $s, symbol: $y, quantity: $q) {{ {FIELDS} }} }}"
)


def test_a_name_without_a_recent_close_is_refused_alike_by_its_preview_and_its_booking(api: Api) -> None:
    api.clock.moment += timedelta(days=70)  # the world's last close is now more than 60 days old
    order = {"side": "BUY", "symbol": "LIQ", "quantity": 10, "price": "50.00"}
    shown = assert_problem(api.acme("GET", PREVIEW, params={"side": "buy", "symbol": "LIQ", "quantity": 10}), 422)
    booked = assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422)
    assert (
        (shown["type"], shown["title"])
        == (booked["type"], booked["title"])
        == (booked["type"], "Unprocessable Content")
    )
    assert shown["detail"] == booked["detail"] and "no price for LIQ in the 60 days" in shown["detail"]
    refused = data(api, TRADE_MUTATION, api.world.acme_key, {"order": order})["placeTrade"]
    assert (refused["__typename"], refused["message"]) == ("InvalidInput", shown["detail"])
    (error,) = gql(api, PREVIEW_QUERY, api.world.acme_key, {"s": "BUY", "y": "LIQ", "q": 10}).json()["errors"]
    assert (error["message"], error["extensions"]["code"]) == (shown["detail"], "BAD_USER_INPUT")
    assert api.acme("GET", "/api/portfolio/trade").json()["items"] == []


def test_a_sell_walked_past_the_band_is_shown_at_the_price_and_fees_its_booking_charges(api: Api) -> None:
    huge = api.acme("GET", PREVIEW, params={"side": "sell", "symbol": "SLOW", "quantity": 10**9}).json()
    assert (huge["price"], huge["price_bound"]) == (huge["band_low"], "BAND_LOW") and Decimal(huge["price"]) > 0
    assert huge["price_note"].startswith("the cost model cannot price the whole order") and Decimal(huge["fees"]) > 0
    graph = data(api, PREVIEW_QUERY, api.world.acme_key, {"s": "SELL", "y": "SLOW", "q": 10**9})["tradePreview"]
    assert snake(graph) == huge  # GraphQL's tradePreview answers what REST's preview answers
    (past,) = gql(api, PREVIEW_QUERY, api.world.acme_key, {"s": "SELL", "y": "SLOW", "q": 10**9 + 1}).json()["errors"]
    assert past["extensions"]["code"] == "BAD_USER_INPUT"  # a trade's bound, as REST's preview applies it
    held = 1_500_000
    assert api.acme("POST", "/api/portfolio/cash", json={"amount": "20000000"}).status_code == 201
    buy = {"side": "BUY", "symbol": "SLOW", "quantity": held, "price": "8.20", "fees": "0"}
    assert api.acme("POST", "/api/portfolio/trade", json=buy).status_code == 201
    shown = api.acme("GET", PREVIEW, params={"side": "sell", "symbol": "SLOW", "quantity": held}).json()
    assert (shown["price"], shown["price_bound"]) == (shown["band_low"], "BAND_LOW"), shown
    assert f"below the day's band {shown['band_low']}-{shown['band_high']}" in shown["price_note"]
    assert Decimal(shown["total_cost"]) == sum(Decimal(shown[k]) for k in ("spread_cost", "impact_cost", "fees"))
    assert (
        Decimal(shown["spread_cost"]) + Decimal(shown["impact_cost"])
        == (Decimal(shown["close"]) - Decimal(shown["price"])) * held
    )
    sell = {"side": "SELL", "symbol": "SLOW", "quantity": held, "price": shown["price"]}
    booked = api.acme("POST", "/api/portfolio/trade", json=sell)
    assert booked.status_code == 201, booked.text
    assert (booked.json()["price"], booked.json()["fees"]) == (shown["price"], shown["fees"])
    below = {**sell, "price": f"{Decimal(shown['band_low']) - Decimal('0.01')}"}
    refused = assert_problem(api.acme("POST", "/api/portfolio/trade", json=below), 422)
    assert f"the day's band {shown['band_low']}-{shown['band_high']}" in refused["detail"]


def test_a_band_that_admits_no_price_is_refused_alike_by_the_preview_and_the_booking(api: Api) -> None:
    announce_action(api.world.engine, "LIQ", "DIVIDEND", 60.0, MONDAY, "a special dividend above the close")
    order = {"side": "BUY", "symbol": "LIQ", "quantity": 10, "price": "0.01"}
    booked = assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422, "admits no price")
    for side in ("buy", "sell"):
        shown = assert_problem(api.acme("GET", PREVIEW, params={"side": side, "symbol": "LIQ", "quantity": 10}), 422)
        assert (shown["title"], shown["detail"]) == (booked["title"], booked["detail"])
    assert "the day's band 0.00-0.00" in booked["detail"]
