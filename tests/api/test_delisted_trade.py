"""A name the exchange delisted is not traded: the DELISTING notice for Monday, after LIQ's
Friday close, left a client's trade (REST, GraphQL) and a suggestion's confirmation booked
within 15% of that close, and the preview said the whole order filled. Each is refused
naming the delisting (422 problem+json, GraphQL's InvalidInput), and nothing is booked."""

from __future__ import annotations

from tests.api.conftest import Api, assert_problem
from tests.api.graph import data
from tests.api.test_graphql import SUGGESTION_MUTATION, TRADE_MUTATION
from tests.api.world import HISTORY_DAYS, MONDAY, close_of
from tests.portfolio.clients import announce_action

SAID = (
    "LIQ was delisted on 2026-11-23 (the exchange's delisting notice; its last close was {close:,.2f} on 2026-11-20); "
    "a delisted name cannot be traded"
)


def test_a_delisted_name_is_refused_over_rest_graphql_and_a_confirmation(api: Api) -> None:
    announce_action(api.world.engine, "LIQ", "DELISTING", None, MONDAY, "last trading day was the previous session")
    said = SAID.format(close=close_of("LIQ", HISTORY_DAYS - 1))
    price = f"{close_of('LIQ', HISTORY_DAYS - 1):.2f}"  # the last close: inside any band
    order = {"side": "buy", "symbol": "LIQ", "quantity": 10, "price": price}
    assert assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422)["detail"] == said
    refused = data(api, TRADE_MUTATION, api.world.acme_key, {"order": {**order, "side": "BUY"}})["placeTrade"]
    assert (refused["__typename"], refused["message"]) == ("InvalidInput", said)
    sid = api.world.pending_suggestion
    assert assert_problem(api.acme("POST", f"/api/suggestions/{sid}/confirm"), 422)["detail"] == said
    confirm = SUGGESTION_MUTATION % "confirmSuggestion"
    again = data(api, confirm, api.world.acme_key, {"id": sid})["confirmSuggestion"]
    assert again["__typename"] == "InvalidInput" and again["message"] == said
    preview = api.acme("GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "LIQ", "quantity": 10})
    assert preview.status_code == 200 and preview.json()["fillable_in_one_session"] == 0
    assert preview.json()["lapse_reason"] == said
    assert api.acme("GET", "/api/portfolio/trade").json()["items"] == []
    (pending,) = api.acme("GET", "/api/suggestions").json()["items"]
    assert pending["suggestion_id"] == sid and pending["state"] == "PENDING"
