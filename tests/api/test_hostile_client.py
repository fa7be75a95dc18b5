"""What a hostile or unlucky client sends, answered as the product promises: a refusal
with the reason (problem+json over REST, a user error or BAD_USER_INPUT over GraphQL),
never a masked error or a 500, and nothing written."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

import desk.desk as application
from api.app import create_app
from market.settings import Settings
from pipeline.serving import serve_in_thread
from portfolio.market import market_days
from portfolio.statement_pdfs import sample_holdings_statement
from store import tables
from store.history import append_history
from tests.api import world
from tests.api.conftest import Api, Clock, assert_problem
from tests.api.graph import data, gql
from tests.api.world import DAY

NEW_LISTING = {"symbol": "NEW", "name": "New Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}


def _trades(api: Api) -> int:
    return len(api.acme("GET", "/api/portfolio/trade").json()["items"])


def _remaining(response: httpx.Response) -> int:
    return int(response.headers["RateLimit"].split(";r=")[1].split(";")[0])


def test_a_trade_of_a_listed_name_with_no_close_is_refused_with_the_reason(api: Api) -> None:
    """NEW is listed but has not traded: REST answered 404 (a status POST /trade does not
    declare) and GraphQL's placeTrade a masked "Unexpected error" (NotFound is not in
    TradeResult); both refuse it as a trade the price band cannot check."""
    with api.world.engine.begin() as conn:
        append_history(conn, tables.instruments, [NEW_LISTING])
    before = _trades(api)
    order = {"side": "BUY", "symbol": "NEW", "quantity": 1, "price": "10.00"}
    body = assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422, "no price for NEW")
    assert body["type"].endswith("/problems/invalid-input"), body
    placed = data(
        api,
        'mutation { placeTrade(order: {side: "BUY", symbol: "NEW", quantity: 1, price: "10.00"}) '
        "{ __typename ... on UserError { message } } }",
        api.world.acme_key,
    )["placeTrade"]
    assert placed["__typename"] == "InvalidInput" and "no price for NEW" in placed["message"], placed
    assert _trades(api) == before


def test_a_number_of_thousands_of_digits_is_a_clear_refusal_on_rest_and_graphql(api: Api) -> None:
    """A JSON integer past Python's 4,300 digits answered REST "There was an error parsing
    the body" and /graphql a 500; as a GraphQL literal, `first: 999...` was a masked
    "Unexpected error" and a Decimal argument was refused as "not nan". Each is refused
    saying how long the number is, and nothing is written."""
    huge = "1" + "0" * 5000
    before = api.acme("GET", "/api/portfolio/cash").json()["items"]
    json_body = {"content-type": "application/json"}
    cash = f'{{"amount": {huge}}}'.encode()
    assert_problem(api.acme("POST", "/api/portfolio/cash", content=cash, headers=json_body), 400, "5,001 characters")
    trade = f'{{"side": "BUY", "symbol": "LIQ", "price": "50.00", "quantity": {huge}}}'.encode()
    assert_problem(api.acme("POST", "/api/portfolio/trade", content=trade, headers=json_body), 400, "5,001 characters")
    query = "mutation($a: Decimal!) { moveCash(amount: $a) { __typename } }"
    variables = f'{{"query": "{query}", "variables": {{"a": {huge}}}}}'.encode()
    response = api.call("POST", "/graphql", api.world.acme_key, content=variables, headers=json_body)
    assert_problem(response, 400, "5,001 characters")
    for document in (
        f"mutation {{ moveCash(amount: {huge}) {{ __typename }} }}",
        f"{{ instruments(first: {huge}) {{ nodes {{ symbol }} }} }}",
    ):
        answer = api.call("POST", "/graphql", api.world.acme_key, json={"query": document})
        assert answer.status_code == 200, answer.text
        (error,) = answer.json()["errors"]
        assert error["extensions"]["code"] == "BAD_USER_INPUT" and "5,001 characters" in error["message"], error
    assert api.acme("GET", "/api/portfolio/cash").json()["items"] == before


def test_a_body_that_is_not_json_is_told_what_is_wrong_and_where(api: Api) -> None:
    """A cut-off body answered "the request does not match the schema: 11: JSON decode
    error": an offset where a field's name goes and no reason."""
    cut = api.acme("POST", "/api/portfolio/cash", content=b'{"amount": ', headers={"content-type": "application/json"})
    body = assert_problem(cut, 422, "the body is not valid JSON: Expecting value at character 11")
    assert "schema" not in body["detail"]


@contextmanager
def _slow_trades(unmade_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """A served app whose GraphQL budget (0.2 s) a trade outlasts: each booking takes 0.5 s
    more (in life, a write that waited for its portfolio's lock)."""
    booked = application.place_manual_trade

    def slow(*args: Any, **kwargs: Any) -> Any:
        placed = booked(*args, **kwargs)
        time.sleep(0.5)
        return placed

    monkeypatch.setattr(application, "place_manual_trade", slow)
    w = world.build(unmade_settings)
    app = create_app(w.settings.model_copy(update={"graphql_timeout_seconds": 0.2}), now=Clock())
    with serve_in_thread(app) as base:
        api = Api(base, w, Clock())
        try:
            yield api
        finally:
            api.http.close()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_trade_that_outlasts_the_operations_budget_is_still_answered(
    unmade_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trade is booked after the operation's wall-clock budget ran out (here a slow
    write; in life one that waited for its portfolio's lock): placeTrade answered null
    with BUDGET_EXCEEDED for a trade that was booked, and a client that retried bought
    twice. The answer of a write that happened is given whatever the clock says."""
    with _slow_trades(unmade_settings, monkeypatch) as api:
        before = _trades(api)
        body = gql(
            api,
            'mutation { placeTrade(order: {side: "BUY", symbol: "LIQ", quantity: 5, price: "52.00"}) '
            "{ __typename ... on TradePlaced { tradeId quantity price } } }",
            api.world.acme_key,
        ).json()
        trades = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert "errors" not in body, body
    placed = body["data"]["placeTrade"]
    assert len(trades) == before + 1 and trades[-1]["trade_id"] == placed["tradeId"], (placed, trades[-1])
    assert (placed["quantity"], placed["price"]) == (5, "52.00")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_write_refused_for_the_budget_does_not_take_an_earlier_writes_answer(
    unmade_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two trades in one operation, the first outlasting the budget (in life: waiting for
    the portfolio's lock): the second is refused before it begins, and its error nulled
    the whole `data` (the root fields were non-null), the first trade's answer with it,
    though it was booked: a client that retried bought twice. The first is answered, the
    second null with BUDGET_EXCEEDED saying it was not made, and one trade is booked:
    the one write made is the one request counted of the three charged."""
    trade = '(order: {side: "BUY", symbol: "LIQ", quantity: %d, price: "52.00"}) { ... on TradePlaced { tradeId } }'
    with _slow_trades(unmade_settings, monkeypatch) as api:
        listed = api.acme("GET", "/api/portfolio/trade")
        before = len(listed.json()["items"])
        writes = f"a: placeTrade{trade % 5} b: placeTrade{trade % 7} c: placeTrade{trade % 9}"
        answer = gql(api, f"mutation {{ {writes} }}", api.world.acme_key)
        body = answer.json()
        after = api.acme("GET", "/api/portfolio/trade")
        trades = after.json()["items"]
    assert _remaining(answer) == _remaining(listed) - 1, answer.headers["RateLimit"]
    assert _remaining(after) == _remaining(listed) - 2  # the count itself, not only the header
    assert len(trades) == before + 1 and trades[-1]["quantity"] == 5, trades[-1]
    assert body["data"]["a"]["tradeId"] == trades[-1]["trade_id"] and body["data"]["b"] is None, body
    assert body["data"]["c"] is None  # each write not run says so at its own path (c's error was dropped)
    assert [e["path"] for e in body["errors"]] == [["b"], ["c"]], body["errors"]
    for error, key in zip(body["errors"], "bc", strict=True):
        assert error["extensions"]["code"] == "BUDGET_EXCEEDED", error
        assert f"`{key}` was not run" in error["message"] and "nothing was written for it" in error["message"]


def test_a_query_parameter_named_twice_is_refused_on_rest_and_graphql(api: Api) -> None:
    """`?side=buy&side=sell` previewed a sell and `GET /graphql?query=A&query=B` ran B:
    the last one counted, where a proxy or a log reading the first saw another request;
    the ambiguity a JSON body's key named twice is refused for."""
    preview = "/api/portfolio/trade/preview?side=buy&symbol=LIQ&quantity=5&side=sell"
    assert_problem(api.acme("GET", preview), 422, "names the parameter 'side' more than once")
    escaped = "/api/portfolio/trade?limit=1&%6cimit=500"
    assert_problem(api.acme("GET", escaped), 422, "names the parameter 'limit' more than once")
    graph = "/graphql?query=%7B__typename%7D&query=%7Binstruments%7Bnodes%7Bsymbol%7D%7D%7D"
    assert_problem(api.acme("GET", graph), 422, "names the parameter 'query' more than once")
    assert_problem(api.call("GET", preview, "svc-sk-" + "0" * 40), 401)  # the key first, as ever
    once = api.acme("GET", "/api/portfolio/trade/preview?side=sell&symbol=LIQ&quantity=5")
    assert once.status_code == 200 and once.json()["side"] == "SELL", once.text


def _statement(api: Api) -> tuple[str, bytes, str]:
    """A holdings statement of the world's day, as an upload's file part."""
    with api.world.engine.connect() as conn:
        return ("statement.pdf", sample_holdings_statement(market_days(conn, DAY), DAY), "application/pdf")


def _book(api: Api) -> tuple[int, list]:
    cash = api.acme("GET", "/api/portfolio/cash").json()["items"]
    return _trades(api), cash


def test_an_upload_is_one_file_and_its_options_go_in_the_query(api: Api) -> None:
    """A statement sent with `preview=true` as a form field (the query string's option) was
    synchronised: the unknown part was ignored and the book changed when the client asked
    to see the changes. Two files in one upload filed the last one and dropped the first
    unsaid. Both are 422 naming the part, and nothing is written."""
    statement = _statement(api)
    before = _book(api)
    as_field = api.acme("POST", "/api/portfolio/upload-pdf", files=[("file", statement)], data={"preview": "true"})
    assert_problem(as_field, 422, "a part 'preview' this upload does not take", "query string")
    two = [("file", statement), ("file", ("other.pdf", b"%PDF-1.4 another", "application/pdf"))]
    assert_problem(api.acme("POST", "/api/portfolio/upload-pdf", files=two), 422, "2 parts named 'file'")
    notes = [("file", ("a.txt", b"LIQ Holdings reported record profit.", "text/plain"))] * 2
    assert_problem(api.acme("POST", "/api/portfolio/upload-research", files=notes), 422, "2 parts named 'file'")
    assert _book(api) == before
    previewed = api.acme("POST", "/api/portfolio/upload-pdf", files=[("file", statement)], params={"preview": "true"})
    assert previewed.status_code == 200 and previewed.json()["status"] == "PREVIEW", previewed.text
    assert _book(api) == before


def test_a_body_sent_to_a_route_that_takes_none_is_refused(api: Api) -> None:
    """`{"quantity": 10}` sent to confirm a suggestion of 243 shares was ignored and all 243
    were bought; a body on a route that takes none is a 422 saying so, and nothing is
    written. The same suggestion confirmed with an empty JSON object, which many clients send
    with every POST, is booked as it was shown."""
    (shown,) = api.acme("GET", "/api/suggestions").json()["items"]
    confirm = f"/api/suggestions/{shown['suggestion_id']}/confirm"
    before = _trades(api)
    partial = api.acme("POST", confirm, json={"quantity": 10})
    assert_problem(partial, 422, "this route takes no request body")
    assert _trades(api) == before
    assert [s["suggestion_id"] for s in api.acme("GET", "/api/suggestions").json()["items"]] == [shown["suggestion_id"]]
    assert_problem(api.acme("GET", "/api/portfolio/summary", json={"as_of": "2026-01-01"}), 422, "no request body")
    padded = api.acme(
        "POST", confirm, content=b'{"quantity": 10}' + b" " * 64, headers={"content-type": "application/json"}
    )
    assert_problem(padded, 422, "this route takes no request body")
    assert _trades(api) == before
    # an empty JSON object says nothing (many clients send one with every POST): booked as shown
    confirmed = api.acme("POST", confirm, content=b" {\n} ", headers={"content-type": "application/json"})
    assert confirmed.status_code == 200 and confirmed.json()["quantity"] == shown["quantity"], confirmed.text
    assert _trades(api) == before + 1


def test_a_header_read_as_one_value_sent_twice_is_refused(api: Api) -> None:
    """Two X-API-Key headers acted as the first key's client and two Idempotency-Keys keyed
    the write by the first, where a proxy or a log may take the last: a doubled key is a
    bad key (401), a doubled Idempotency-Key a 422, and nothing is written."""
    w = api.world
    before = api.acme("GET", "/api/portfolio/cash").json()["items"]
    keys = [("X-API-Key", w.acme_key), ("X-API-Key", w.beta_key)]
    assert_problem(api.http.get("/api/portfolio/summary", headers=keys), 401, "sent 2 times")
    assert_problem(api.http.post("/api/portfolio/cash", json={"amount": "5"}, headers=keys), 401, "sent 2 times")
    idempotency = [("X-API-Key", w.acme_key), ("Idempotency-Key", "a"), ("Idempotency-Key", "b")]
    moved = api.http.post("/api/portfolio/cash", json={"amount": "5"}, headers=idempotency)
    assert_problem(moved, 422, "the Idempotency-Key header is sent 2 times")
    assert api.acme("GET", "/api/portfolio/cash").json()["items"] == before


def test_a_symbol_is_case_insensitive_in_ascii_letters_only(api: Api) -> None:
    """ "lıq" (a dotless ı) booked a trade of LIQ: str.upper() capitalises it into an ASCII
    I. A symbol is compared in capitals of ASCII letters only; "lıq" is no listed symbol,
    over REST and GraphQL, and "liq" is LIQ as ever."""
    before = _trades(api)
    order = {"side": "BUY", "symbol": "lıq", "quantity": 1, "price": "52.00"}
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=order), 422, "unknown symbol 'lıq'")
    preview = {"side": "buy", "symbol": "lıq", "quantity": 1}
    assert_problem(api.acme("GET", "/api/portfolio/trade/preview", params=preview), 404, "no instrument")
    placed = data(
        api,
        'mutation { placeTrade(order: {side: "BUY", symbol: "ﬁ", quantity: 1, price: "52.00"}) '
        "{ __typename ... on UserError { message } } }",
        api.world.acme_key,
    )["placeTrade"]
    assert placed["__typename"] == "InvalidInput" and "unknown symbol" in placed["message"], placed
    found = gql(api, '{ instrument(symbol: "lıq") { symbol } }', api.world.acme_key).json()
    assert found["data"]["instrument"] is None and found["errors"][0]["extensions"]["code"] == "NOT_FOUND", found
    assert _trades(api) == before
    ascii_lower = api.acme("POST", "/api/portfolio/trade", json={**order, "symbol": "liq"})
    assert ascii_lower.status_code == 201 and ascii_lower.json()["symbol"] == "LIQ", ascii_lower.text
