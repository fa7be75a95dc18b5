"""A write's answer tells the truth (issue 64): an error means nothing was written.

Every write route and mutation renders its answer inside the write's transaction (the
desk's `respond`, store/transactions.py `answered`). Each test here plants a fault in the
response path (REST: the output contract every body passes through, api/contract.py;
GraphQL: the schema's own Decimal scalar, which serialises every write's answer) and
checks that the request was answered as an error and that no table of the store gained a
row; then, with the fault gone, that the same request is answered and written. A write
route added to the OpenAPI document without a case here fails
`test_every_write_route_is_covered`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from api.graphql.schema import build_schema
from store import tables
from tests.api.conftest import Api
from tests.api.graph import gql
from tests.api.world import DAY

PLACE = (
    'mutation($key: String) { placeTrade(order: {side: "BUY", symbol: "LIQ", quantity: 5, price: "52.00"}, '
    "idempotencyKey: $key) { __typename ... on TradePlaced { tradeId replayed } } }"
)


class Boom(RuntimeError):
    """The planted fault."""


def _boom(*_: Any, **__: Any) -> Any:
    raise Boom("a fault planted in the response path")


def _rows(api: Api) -> dict[str, int]:
    """Rows per table of the store: what a write leaves behind."""
    with api.world.engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in tables.metadata.sorted_tables
        }


def _statement(api: Api) -> dict[str, Any]:
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement

    with api.world.engine.connect() as conn:
        return {"file": ("statement.pdf", sample_holdings_statement(market_days(conn, DAY), DAY), "application/pdf")}


NOTE = {"file": ("note.txt", b"LIQ Holdings reported record profit and strong growth.", "text/plain")}
# Each write route: how to call it (the Api, then the response).
REST_WRITES: dict[tuple[str, str], Callable[[Api], httpx.Response]] = {
    ("POST", "/api/portfolio/trade"): lambda api: api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 5, "price": "52.00"}
    ),
    ("POST", "/api/portfolio/cash"): lambda api: api.acme("POST", "/api/portfolio/cash", json={"amount": "100.00"}),
    ("POST", "/api/suggestions/{suggestion_id}/confirm"): lambda api: api.acme(
        "POST", f"/api/suggestions/{api.world.pending_suggestion}/confirm"
    ),
    ("POST", "/api/suggestions/{suggestion_id}/reject"): lambda api: api.acme(
        "POST", f"/api/suggestions/{api.world.pending_suggestion}/reject"
    ),
    ("POST", "/api/portfolio/upload-pdf"): lambda api: api.acme(
        "POST", "/api/portfolio/upload-pdf", files=_statement(api)
    ),
    ("POST", "/api/portfolio/upload-research"): lambda api: api.acme(
        "POST", "/api/portfolio/upload-research", files=NOTE
    ),
    ("POST", "/api/keys/generate"): lambda api: api.admin(
        "POST", "/api/keys/generate", json={"client_name": "Answer Fund", "tier": "PRO"}
    ),
    ("POST", "/api/keys/{key_id}/revoke"): lambda api: api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke"),
    ("POST", "/api/keys/{key_id}/rotate"): lambda api: api.admin(
        "POST", f"/api/keys/{api.world.beta_key_id}/rotate", json={}
    ),
    ("PUT", "/api/keys/{key_id}/rate-limit"): lambda api: api.admin(
        "PUT", f"/api/keys/{api.world.beta_key_id}/rate-limit", json={"per_minute": 77}
    ),
    ("PUT", "/api/keys/{key_id}/macro-access"): lambda api: api.admin(
        "PUT", f"/api/keys/{api.world.beta_key_id}/macro-access", json={"enabled": False}
    ),
    ("PUT", "/api/keys/{key_id}/tier"): lambda api: api.admin(
        "PUT", f"/api/keys/{api.world.beta_key_id}/tier", json={"tier": "STANDARD"}
    ),
}


def test_every_write_route_is_covered(api: Api) -> None:
    document = api.call("GET", "/openapi.json").json()
    writes = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
        if method in ("post", "put", "patch", "delete")
    }
    assert writes == set(REST_WRITES)


@pytest.mark.parametrize("route", list(REST_WRITES), ids=lambda r: f"{r[0]} {r[1]}")
def test_a_rest_write_whose_answer_fails_writes_nothing(api: Api, monkeypatch: pytest.MonkeyPatch, route) -> None:
    before = _rows(api)
    with monkeypatch.context() as planted:
        planted.setattr("api.contract.conform", _boom)
        failed = REST_WRITES[route](api)
    assert failed.status_code == 500, failed.text
    assert _rows(api) == before  # the error means nothing was written
    answered = REST_WRITES[route](api)
    assert answered.status_code in (200, 201), answered.text
    assert _rows(api) != before  # and the same request, answered, was written


GRAPHQL_WRITES: dict[str, Callable[[Api], httpx.Response]] = {
    "placeTrade": lambda api: gql(api, PLACE, api.world.acme_key),
    "moveCash": lambda api: gql(
        api, 'mutation { moveCash(amount: "100.00") { __typename ... on CashMoved { balance } } }', api.world.acme_key
    ),
    "confirmSuggestion": lambda api: gql(
        api,
        f'mutation {{ confirmSuggestion(suggestionId: "{api.world.pending_suggestion}") '
        "{ __typename ... on Suggestion { state limitPrice } } }",
        api.world.acme_key,
    ),
    "rejectSuggestion": lambda api: gql(
        api,
        f'mutation {{ rejectSuggestion(suggestionId: "{api.world.pending_suggestion}") '
        "{ __typename ... on Suggestion { state limitPrice } } }",
        api.world.acme_key,
    ),
}


def test_every_mutation_is_covered(api: Api) -> None:
    assert set(build_schema(api.world.settings)._schema.mutation_type.fields) == set(GRAPHQL_WRITES)


@pytest.mark.parametrize("mutation", list(GRAPHQL_WRITES))
def test_a_mutation_whose_answer_fails_writes_nothing(api: Api, monkeypatch: pytest.MonkeyPatch, mutation) -> None:
    before = _rows(api)
    decimal = build_schema(api.world.settings)._schema.get_type("Decimal")
    with monkeypatch.context() as planted:
        planted.setattr(decimal, "serialize", _boom)
        failed = GRAPHQL_WRITES[mutation](api).json()
    assert failed["data"] == {mutation: None} and failed["errors"], failed  # the field null: it was not made
    assert _rows(api) == before  # the error means nothing was written
    answered = GRAPHQL_WRITES[mutation](api).json()
    assert "errors" not in answered and answered["data"][mutation]["__typename"] != "InvalidInput", answered
    assert _rows(api) != before


def test_place_trade_sent_twice_with_an_idempotency_key_books_once(api: Api) -> None:
    first = gql(api, PLACE, api.world.acme_key, {"key": "retry-1"}).json()["data"]["placeTrade"]
    again = gql(api, PLACE, api.world.acme_key, {"key": "retry-1"}).json()["data"]["placeTrade"]
    assert (first["replayed"], again["replayed"]) == (False, True) and first["tradeId"] == again["tradeId"]
    trades = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert [t["trade_id"] for t in trades] == [first["tradeId"]]
