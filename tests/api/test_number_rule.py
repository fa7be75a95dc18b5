"""docs/api.md "Numbers in": one rule (market/money.py) for REST bodies, GraphQL variables
and literals, and the CLI (tests/pipeline/test_cli_number_rule.py). An adversarial run
found placeTrade taking a variable's quantity 1.0 as one share (GraphQL's Int coerces it)
where REST refuses it, and the CLI taking 52.001 as a price. A JSON number and a GraphQL
number literal are read by their value (1e3 is 1000, as REST always read it); text by its
characters ("1e3" is refused everywhere)."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from tests.api.conftest import Api, assert_problem
from tests.api.graph import gql

TRADE = "mutation($o: ManualTradeInput!) { placeTrade(order: $o) { __typename ... on TradePlaced { price } } }"


def _close(api: Api, symbol: str = "LIQ") -> str:
    return f"{api.acme('GET', '/api/market/latest').json()[symbol]['close']:.2f}"


def _book(api: Api) -> tuple[int, int, str]:
    trades = api.acme("GET", "/api/portfolio/trade").json()["items"]
    cash = api.acme("GET", "/api/portfolio/cash").json()["items"]
    return len(trades), len(cash), api.acme("GET", "/api/portfolio/summary").json()["cash"]


def _refused(response, words: str) -> None:
    assert response.status_code == 200, response.text
    (error,) = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT", error
    assert words in error["message"], error["message"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_quantity_is_a_whole_number_in_graphql_variables_and_literals(api: Api) -> None:
    key, price = api.world.acme_key, _close(api)
    before = _book(api)
    order = {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": price}
    for wrong in (1.0, 10.0, "1", True):
        _refused(gql(api, TRADE, key, {"o": {**order, "quantity": wrong}}), "whole number of shares")
    for literal in ("1.0", "1e0", '"1"'):
        fields = f'side: "buy", symbol: "LIQ", quantity: {literal}, price: "{price}"'
        mutation = f"mutation {{ placeTrade(order: {{{fields}}}) {{ __typename }} }}"
        _refused(gql(api, mutation, key), "whole number of shares")
    assert_problem(api.acme("POST", "/api/portfolio/trade", json={**order, "quantity": 1.0}), 422, "whole number")
    raw = ('{"side": "buy", "symbol": "LIQ", "quantity": 1e0, "price": "%s"}' % price).encode()
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", content=raw, headers={"content-type": "application/json"}),
        422,
        "whole number",
    )
    assert _book(api) == before
    placed = gql(api, TRADE, key, {"o": order}).json()["data"]["placeTrade"]
    assert placed == {"__typename": "TradePlaced", "price": price}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_money_is_whole_cents_over_rest_and_graphql_alike(api: Api) -> None:
    key, price = api.world.acme_key, _close(api)
    before = _book(api)
    order = {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": price}
    sub_cent = f"{Decimal(price) + Decimal('0.001')}"
    words = "must be a whole number of cents"
    for field, value in (("price", sub_cent), ("price", float(sub_cent)), ("fees", "0.005")):
        assert_problem(api.acme("POST", "/api/portfolio/trade", json={**order, field: value}), 422, words)
        _refused(gql(api, TRADE, key, {"o": {**order, field: value}}), words)
    _refused(
        gql(
            api,
            f'mutation {{ placeTrade(order: {{side: "buy", symbol: "LIQ", quantity: 1, price: {sub_cent}}}) '
            "{ __typename } }",
            key,
        ),
        words,
    )
    assert_problem(api.acme("POST", "/api/portfolio/cash", json={"amount": "100.005"}), 422, words)
    _refused(gql(api, "mutation { moveCash(amount: 100.005) { __typename } }", key), words)
    _refused(gql(api, 'mutation { moveCash(amount: "100.005") { __typename } }', key), words)
    assert _book(api) == before
    # trailing zeros are not precision: 52.000 is 52.00 (an idempotent retry may spell it so)
    again = api.acme("POST", "/api/portfolio/trade", json={**order, "price": price + "0"})
    assert again.status_code == 201 and again.json()["price"] == price, again.text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_json_number_is_read_by_its_value_and_text_by_its_characters(api: Api) -> None:
    """The written decision (docs/api.md "Numbers in"): 1e3 as a JSON number or a GraphQL
    number literal is 1000, the same over REST and GraphQL; "1e3" as text is refused."""
    key, price = api.world.acme_key, _close(api)
    start = Decimal(_book(api)[2])
    rest = api.acme(
        "POST", "/api/portfolio/cash", content=b'{"amount": 1e3}', headers={"content-type": "application/json"}
    )
    assert rest.status_code == 201 and rest.json()["balance"] == f"{start + 1000:.2f}", rest.text
    literal = gql(api, "mutation { moveCash(amount: 1e3) { __typename ... on CashMoved { balance } } }", key).json()
    assert literal["data"]["moveCash"]["balance"] == f"{start + 2000:.2f}", literal
    exponent = f"{Decimal(price).scaleb(-1)}e1"  # 52.00 as 5.200e1
    placed = gql(
        api,
        f'mutation {{ placeTrade(order: {{side: "buy", symbol: "LIQ", quantity: 1, price: {exponent}}}) '
        "{ __typename ... on TradePlaced { price } } }",
        key,
    ).json()["data"]["placeTrade"]
    assert placed == {"__typename": "TradePlaced", "price": price}
    before = _book(api)
    assert_problem(api.acme("POST", "/api/portfolio/cash", json={"amount": "1e3"}), 422, "decimal number like 101.50")
    _refused(gql(api, 'mutation { moveCash(amount: "1e3") { __typename } }', key), "decimal number like 101.50")
    _refused(gql(api, "mutation($a: Decimal!) { moveCash(amount: $a) { __typename } }", key, {"a": "1e3"}), "101.50")
    assert _book(api) == before


def _raw(api: Api, path: str, body: str) -> httpx.Response:
    return api.acme("POST", path, content=body.encode(), headers={"content-type": "application/json"})


# Numbers past a float's digits: a float reads each as whole cents (52.0, 0.01, 0.005, 100.005 would
# round to 100.01 half up, 100.00 as the float is just below).
PAST_A_FLOAT = ("51.999999999999999999", "0.009999999999999999", "0.0050000000000000001", "100.00499999999999999999")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_json_number_past_a_floats_digits_is_refused_never_rounded_to_cents(api: Api) -> None:
    """A JSON number (REST body, GraphQL variable) and a GraphQL number literal are read by the
    exact value they denote, from their text: 51.999999999999999999 is not whole cents, so it
    is refused as its text form is, never booked as the 52.00 its nearest float prints as."""
    key, price, words = api.world.acme_key, _close(api), "whole number of cents"
    before = _book(api)
    deposit = "mutation($a: Decimal!) { moveCash(amount: $a) { __typename ... on CashMoved { balance } } }"
    for written in PAST_A_FLOAT:
        assert_problem(_raw(api, "/api/portfolio/cash", '{"amount": %s}' % written), 422, words)
        trade = '{"side": "buy", "symbol": "LIQ", "quantity": 1, "price": %s}' % written
        assert_problem(_raw(api, "/api/portfolio/trade", trade), 422, words)
        variables = '{"query": %s, "variables": {"a": %s}}' % (json.dumps(deposit), written)
        _refused(_raw(api, "/graphql", variables), words)
        _refused(gql(api, f"mutation {{ moveCash(amount: {written}) {{ __typename }} }}", key), words)
        literal = f'mutation {{ placeTrade(order: {{side: "buy", symbol: "LIQ", quantity: 1, price: {written}}}) '
        _refused(gql(api, literal + "{ __typename } }", key), words)
    assert _book(api) == before
    # A number whole cents by value, however many zeros it is written with, is that amount.
    start = Decimal(before[2])
    padded = _raw(api, "/api/portfolio/cash", '{"amount": 52.000000000000000000000000}')
    assert padded.status_code == 201 and padded.json()["balance"] == f"{start + 52:.2f}", padded.text
    placed = _raw(
        api, "/api/portfolio/trade", '{"side": "buy", "symbol": "LIQ", "quantity": 1, "price": %s0000}' % price
    )
    assert placed.status_code == 201 and placed.json()["price"] == price, placed.text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_quantities_and_whole_numbers_read_json_numbers_as_before(api: Api) -> None:
    """Reading money exactly changes no other input: a quantity is still a JSON integer (1.0
    and 1e0 refused, named as written), GraphQL's `first` still takes 2.0 as 2 and a key's
    per-minute limit, a strict integer, still refuses 100.0."""
    order = '{"side": "buy", "symbol": "LIQ", "quantity": %s, "price": "%s"}'
    for written in ("1.0", "1e0", "1.00000000000000000001"):
        assert_problem(_raw(api, "/api/portfolio/trade", order % (written, _close(api))), 422, f"not {written}")
    screen = '{"query": "query($n: Int) { instruments(first: $n) { nodes { symbol } } }", "variables": {"n": 2.0}}'
    answer = _raw(api, "/graphql", screen)
    assert answer.status_code == 200 and len(answer.json()["data"]["instruments"]["nodes"]) == 2, answer.text
    limit = api.admin(
        "PUT",
        f"/api/keys/{api.world.beta_key_id}/rate-limit",
        content=b'{"per_minute": 100.0}',
        headers={"content-type": "application/json"},
    )
    assert_problem(limit, 422, "valid integer")  # a strict whole number, as it was


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_whole_number_too_long_to_read_is_said_to_be_too_long(api: Api) -> None:
    """A quantity or a page size in a query string of more digits than a whole number there
    may have is refused as too long, not as something that is not a whole number: a
    preview of 1000000000000000000 shares was told "the quantity must be a whole number of
    shares", which it is."""
    preview = {"side": "BUY", "symbol": "LIQ", "quantity": "1" + "0" * 18}
    refused = assert_problem(api.acme("GET", "/api/portfolio/trade/preview", params=preview), 422, "19 digits")
    assert "whole number of shares, not" not in refused["detail"], refused["detail"]
    assert_problem(api.acme("GET", "/api/portfolio/trade", params={"limit": "9" * 16}), 422, "16 digits", "at most 15")
    assert_problem(api.acme("GET", "/api/portfolio/trade/preview", params={**preview, "quantity": "1e3"}), 422, "whole")
