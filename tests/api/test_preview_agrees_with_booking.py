"""A trade's preview and its booking follow one rule (portfolio/trading.py `price_band`):
what the preview shows is what booking the same order does.

- A name with no close in the 60 days before the session: the preview answered 404 while
  booking the same trade answered 422; both are now the booking's refusal, 422
  problem+json titled "Trade rejected" (GraphQL's InvalidInput), saying the same sentence.
"""

from __future__ import annotations

from datetime import timedelta

from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.api.test_graphql import TRADE_MUTATION

PREVIEW = "/api/portfolio/trade/preview"


def test_a_name_without_a_recent_close_is_refused_alike_by_its_preview_and_its_booking(api: Api) -> None:
    api.clock.moment += timedelta(days=70)  # the world's last close is now more than 60 days old
    order = {"side": "BUY", "symbol": "LIQ", "quantity": 10, "price": "50.00"}
    shown = assert_problem(api.acme("GET", PREVIEW, params={"side": "buy", "symbol": "LIQ", "quantity": 10}), 422)
    booked = assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422)
    assert (shown["type"], shown["title"]) == (booked["type"], booked["title"]) == (booked["type"], "Trade rejected")
    assert shown["detail"] == booked["detail"] and "no price for LIQ in the 60 days" in shown["detail"]
    refused = data(api, TRADE_MUTATION, api.world.acme_key, {"order": order})["placeTrade"]
    assert (refused["__typename"], refused["message"]) == ("InvalidInput", shown["detail"])
    assert api.acme("GET", "/api/portfolio/trade").json()["items"] == []
