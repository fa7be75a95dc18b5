"""What a hostile or unlucky client sends, answered as the product promises: a refusal
with the reason (problem+json over REST, a user error or BAD_USER_INPUT over GraphQL),
never a masked error or a 500, and nothing written."""

from __future__ import annotations

from store import tables
from store.history import append_history
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data

NEW_LISTING = {"symbol": "NEW", "name": "New Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}


def _trades(api: Api) -> int:
    return len(api.acme("GET", "/api/portfolio/trade").json()["items"])


def test_a_trade_of_a_listed_name_with_no_close_is_refused_with_the_reason(api: Api) -> None:
    """NEW is listed but has not traded: REST answered 404 (a status POST /trade does not
    declare) and GraphQL's placeTrade a masked "Unexpected error" (NotFound is not in
    TradeResult); both refuse it as a trade the price band cannot check."""
    with api.world.engine.begin() as conn:
        append_history(conn, tables.instruments, [NEW_LISTING])
    before = _trades(api)
    order = {"side": "BUY", "symbol": "NEW", "quantity": 1, "price": "10.00"}
    body = assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422, "no price for NEW")
    assert body["title"] == "Trade rejected"
    placed = data(
        api,
        'mutation { placeTrade(order: {side: "BUY", symbol: "NEW", quantity: 1, price: "10.00"}) '
        "{ __typename ... on UserError { message } } }",
        api.world.acme_key,
    )["placeTrade"]
    assert placed["__typename"] == "InvalidInput" and "no price for NEW" in placed["message"], placed
    assert _trades(api) == before
