"""Every list pages (issue 57): with more trades, cash movements, suggestions and AI days
than each list's largest page for one client, no GET route in the OpenAPI schema and no
GraphQL list field answers a list longer than its maximum; a walk by `next_cursor` sees
every trade exactly once while trades are placed between its pages."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from typing import Any

import pytest
from graphql import GraphQLList, GraphQLNonNull, GraphQLObjectType
from sqlalchemy import insert, select

from api import paging
from api.graphql.schema import build_schema
from portfolio.ledger import AI_PORTFOLIO
from store import tables
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data, gql
from tests.api.world import DAY, MONDAY, MORNING
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR

# A route without `limit` answers lists bounded by something other than what a client
# writes (the listings, a fixed vocabulary): below the smallest
# page maximum, so a seeded collection it returned whole would exceed it.
UNPAGED = paging.SUGGESTIONS.largest
VALUES = {"symbol": "LIQ", "side": "buy", "quantity": "1"}  # required parameters' values in the walk
# GraphQL list fields that are not a Connection's nodes, and what bounds each.
BOUNDED_FIELDS = {
    ("AIPosition", "flags"): "the exit-flag vocabulary",
    ("Position", "flags"): "the exit-flag vocabulary",
    ("DayAnalysis", "notifications"): "one per notification rule",
    ("FxRate", "periods"): "the report's fixed periods",
    ("InvalidInput", "fields"): "the operation's input fields",
    ("Liquidity", "failedGates"): "the liquidity rail's gates",
    ("MacroIndicator", "fx"): "the currencies quoted",
    ("MacroInsights", "parameters"): "the macro model's parameters",
    ("MacroInsights", "sources"): "the macro sources",
    ("Instrument", "renamedFrom"): "the company's earlier tickers (a handful over its life)",
    ("Instrument", "splits"): "the company's splits and consolidations (a handful over its life)",
    ("MarketBreadth", "indexExcluded"): "the listings",
    ("Metric", "baselines"): "the fixed baselines",
    ("ModelMonitor", "checks"): "the monitor's checks",
    ("PredictionReasons", "inputs"): "the model's features",
    ("PredictionReasons", "missingInputs"): "the model's features (at most 14)",
}


def _seed(api: Api, trades: int, cash: int = 0, suggested: int = 0, ai_days: int = 0, keys: int = 0) -> str:
    """Rows appended straight to the ledger for Acme's portfolio (and AI days before the
    world's, client keys): buy/sell pairs of one LIQ share, deposits of 1.00, pending
    suggestions for Monday, executed days with nothing traded. Returns Acme's portfolio id."""
    pid = api.acme("GET", "/api/portfolio/summary").json()["portfolio_id"]
    now = MORNING - timedelta(hours=1)
    rows: list[tuple[Any, list[dict[str, Any]]]] = [
        (
            tables.trades,
            [
                {
                    "trade_id": f"T-seed-{i:05d}",
                    "portfolio_id": pid,
                    "trading_date": DAY,
                    "executed_at": now,
                    "symbol": "LIQ",
                    "side": "BUY" if i % 2 == 0 else "SELL",
                    "quantity": 1,
                    "price": "50.00",
                    "fees": "0",
                    "origin": "MANUAL",
                    "rationale": {},
                    "recorded_at": now,
                }
                for i in range(trades)
            ],
        ),
        (
            tables.cash_entries,
            [
                {
                    "entry_id": f"C-seed-{i:05d}",
                    "portfolio_id": pid,
                    "amount": "1.00",
                    "kind": "DEPOSIT",
                    "effective_at": now,
                    "recorded_at": now,
                }
                for i in range(cash)
            ],
        ),
        (
            tables.suggestions,
            [
                {
                    "suggestion_id": f"S-seed-{i:05d}",
                    "portfolio_id": pid,
                    "trading_date": MONDAY,
                    "symbol": f"Z{i:05d}",
                    "side": "BUY",
                    "quantity": 1,
                    "limit_price": "1.00",
                    "reason": {},
                    "expires_at": MORNING + timedelta(hours=8),
                    "recorded_at": now,
                }
                for i in range(suggested)
            ],
        ),
        (
            tables.suggestion_events,
            [{"suggestion_id": f"S-seed-{i:05d}", "state": "PENDING", "recorded_at": now} for i in range(suggested)],
        ),
        (tables.portfolio_days, _ai_days(ai_days, now)),
        (
            tables.api_keys,
            [
                {"key_id": f"k-seed-{i:05d}", "client_id": "c-seed", "key_hash": f"{i:064x}", "tier": "STANDARD"}
                | {"recorded_at": now}
                for i in range(keys)
            ],
        ),
    ]
    with api.world.engine.begin() as conn:
        for table, values in rows:
            if values:
                conn.execute(insert(table), values)
    return pid


def _ai_days(count: int, now: Any) -> list[dict[str, Any]]:
    days, day = [], CALENDAR.previous_trading_day(CALENDAR.previous_trading_day(DAY))
    for _ in range(count):
        day = CALENDAR.previous_trading_day(day)
        days.append(
            {
                "portfolio_id": AI_PORTFOLIO,
                "trading_date": day,
                "model_id": None,
                "cash": "1000000",
                "market_value": "0",
                "liquid_equity": "1000000",
                "summary": {},
                "recorded_at": now,
            }
        )
    return days


def _longest(value: Any) -> int:
    """The length of the longest list anywhere in a JSON value."""
    if isinstance(value, list):
        return max([len(value), *(_longest(v) for v in value)])
    if isinstance(value, dict):
        return max([0, *(_longest(v) for v in value.values())])
    return 0


def _get(api: Api, path: str, params: dict[str, Any] | None = None) -> Any:
    response = api.acme("GET", path, params=params)
    if response.status_code == 403:  # admin only
        response = api.admin("GET", path, params=params)
    # 404/503: this world has no such data yet (macro insights need T3); a problem holds no list
    assert response.status_code in (200, 404, 503), (path, response.text)
    return response.json()


def test_no_rest_route_or_graphql_list_answers_more_than_its_maximum_page(api: Api) -> None:
    seeded = {  # path: the Page its items are; one more row than the largest page of each
        "/api/portfolio/trade": paging.TRADES,
        "/api/portfolio/cash": paging.CASH,
        "/api/suggestions": paging.SUGGESTIONS,
        "/api/ai-portfolio/history": paging.AI_DAYS,
        "/api/keys": paging.KEYS,
    }
    _seed(
        api,
        trades=paging.TRADES.largest + 1,
        cash=paging.CASH.largest + 1,
        suggested=paging.SUGGESTIONS.largest + 1,
        ai_days=paging.AI_DAYS.largest + 1,
        keys=paging.KEYS.largest + 1,
    )
    schema = api.call("GET", "/openapi.json").json()
    walked = set()
    for path, operations in schema["paths"].items():
        operation = operations.get("get")
        content = (operation or {}).get("responses", {}).get("200", {}).get("content", {})
        if "application/json" not in content:
            continue
        parameters = operation.get("parameters", [])
        url = path.format(**{p["name"]: VALUES[p["name"]] for p in parameters if p["in"] == "path"})
        required = {p["name"]: VALUES[p["name"]] for p in parameters if p["in"] == "query" and p.get("required")}
        limit = next((p for p in parameters if p["name"] == "limit"), None)
        if limit is None:
            assert path not in seeded, f"{path} takes no limit"
            assert _longest(_get(api, url, required)) <= UNPAGED, f"GET {path} answers a list longer than {UNPAGED}"
            continue
        walked.add(path)
        largest, default = limit["schema"]["maximum"], limit["schema"]["default"]
        assert f"{default} by default, at most {largest}" in limit["description"], path
        for params, size in (({}, default), ({"limit": largest}, largest)):
            body = _get(api, url, params)
            assert _longest(body) <= size, f"GET {path} {params} answers a list longer than {size}"
            if path in seeded:
                assert len(body["items"]) == size and body["next_cursor"], (path, params)
        if path in seeded:
            assert (default, largest) == (seeded[path].default, seeded[path].largest), path
        too_many = api.acme("GET", url, params={"limit": largest + 1})
        if too_many.status_code == 403:
            too_many = api.admin("GET", url, params={"limit": largest + 1})
        assert_problem(too_many, 422)
    assert walked >= set(seeded)

    # GraphQL: every list is a Connection's nodes (or bounded by what BOUNDED_FIELDS says),
    # every Connection takes a bounded `first`, and the seeded ones stop at their largest page.
    for kind in build_schema(api.world.settings)._schema.type_map.values():
        if kind.name.startswith("__") or not isinstance(kind, GraphQLObjectType):
            continue
        for name, field in kind.fields.items():
            named, is_list = _unwrap(field.type)
            if named.endswith("Connection"):
                assert "first" in field.args, f"{kind.name}.{name} takes no first"  # recentBars: no `after`
            if is_list:
                assert name == "nodes" or (kind.name, name) in BOUNDED_FIELDS, f"{kind.name}.{name} is unbounded"
    for root, key, field, page, seeded_rows in (
        ("portfolio", api.world.acme_key, "trades", paging.TRADES, True),
        ("portfolio", api.world.acme_key, "cashMovements", paging.CASH, True),
        ("portfolio", api.world.acme_key, "suggestions", paging.SUGGESTIONS, True),
        ("aiPortfolio", ADMIN_KEY, "days", paging.AI_DAYS, True),
        ("aiPortfolio", ADMIN_KEY, "trades", paging.AI_TRADES, False),  # the world's one AI trade
    ):
        for first, size in (("", page.default), (f"(first: {page.largest})", page.largest)):
            query = f"{{ {root} {{ {field}{first} {{ nodes {{ __typename }} pageInfo {{ hasNextPage }} }} }} }}"
            connection = data(api, query, key)[root][field]
            assert len(connection["nodes"]) <= size, (root, field)
            if seeded_rows:
                assert len(connection["nodes"]) == size and connection["pageInfo"]["hasNextPage"], (root, field)
        query = f"{{ {root} {{ {field}(first: {page.largest + 1}) {{ nodes {{ __typename }} }} }} }}"
        errors = str(gql(api, query, key).json()["errors"])
        assert f"between 1 and {page.largest}" in errors, errors


def test_a_page_size_is_its_digits_and_nothing_else_on_every_route(api: Api) -> None:
    """`limit` follows the query string's number rule (docs/api.md "Numbers in"), as a
    quantity does: pydantic's lax integers read "1_0" as 10 and "+5", " 5" or "5.0" as 5."""
    schema = api.call("GET", "/openapi.json").json()
    walked = 0
    for path, operations in schema["paths"].items():
        parameters = (operations.get("get") or {}).get("parameters", [])
        if not any(p["name"] == "limit" for p in parameters):
            continue
        url = path.format(**{p["name"]: VALUES[p["name"]] for p in parameters if p["in"] == "path"})
        caller = api.admin if "ai-portfolio" in path or path.startswith("/api/keys") else api.acme
        assert caller("GET", url, params={"limit": "10"}).status_code == 200, path
        for text in ("1_0", "+5", " 5", "5.0", "٥"):
            assert_problem(caller("GET", url, params={"limit": text}), 422, "limit", "digits"), (path, text)
        walked += 1
    assert walked >= 6  # the four ledger lists, market history and the keys


def _unwrap(kind: Any) -> tuple[str, bool]:
    """A field type's named type and whether a list wraps it."""
    is_list = False
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        is_list = is_list or isinstance(kind, GraphQLList)
        kind = kind.of_type
    return kind.name, is_list


def test_trades_walked_by_next_cursor_are_every_trade_exactly_once(api: Api) -> None:
    pid = _seed(api, trades=250)
    order = {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": "52.00"}
    seen: list[str] = []
    cursor = None
    placed = 0
    while True:
        params = {"limit": 60} | ({"cursor": cursor} if cursor else {})
        body = api.acme("GET", "/api/portfolio/trade", params=params).json()
        seen += [t["trade_id"] for t in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
        if placed < 3:  # appended between pages: listed once, after everything before it
            assert api.acme("POST", "/api/portfolio/trade", json=order).status_code == 201
            placed += 1
    with api.world.engine.connect() as conn:
        c = tables.trades.c
        ledger = list(conn.execute(select(c.trade_id).where(c.portfolio_id == pid).order_by(c.id)).scalars())
    assert len(seen) == len(set(seen)) == 253 and seen == ledger
    # the same cursor is GraphQL's endCursor; another list's cursor is refused, naming the list
    cash_cursor = paging.CASH.cursor(1)
    assert_problem(api.acme("GET", "/api/portfolio/trade", params={"cursor": cash_cursor}), 422, "cashMovements")
    assert_problem(api.acme("GET", "/api/portfolio/trade", params={"cursor": "not-a-cursor"}), 422, "cursor")
    forged = paging.TRADES.cursor("1")
    assert_problem(api.acme("GET", "/api/portfolio/trade", params={"cursor": forged}), 422, "trades")
    assert_problem(api.admin("GET", "/api/ai-portfolio/history", params={"cursor": paging.TRADES.cursor(5)}), 422)


def _forged(value: Any) -> str:
    """A cursor as a forger writes it: any JSON, base64url-encoded like the API's own."""
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


# Cursors this API never issues that got past its checks: a row id past 64 bits reached
# the store (500 on SQLite and Postgres, "Unexpected error" in GraphQL), nesting past the
# JSON decoder's depth exhausted it (GraphQL's cursor had no length bound), an AI day
# outside the supported dates was served a page.
DEEP = base64.urlsafe_b64encode(b"[" * 100_000).decode()
REST_FORGED = (
    ("acme", "/api/portfolio/trade", _forged(["trades", 2**63])),
    ("acme", "/api/portfolio/cash", _forged(["cashMovements", -(2**63) - 1])),
    ("admin", "/api/ai-portfolio/history", _forged(["aiDays", "0001-01-01"])),
    ("admin", "/api/ai-portfolio/history", _forged(["aiDays", "9999-12-31"])),
)
GRAPHQL_FORGED = (
    ("acme", "portfolio { trades(after: $after) { nodes { tradeId } } }", _forged(["trades", 2**63])),
    ("acme", "portfolio { cashMovements(after: $after) { nodes { entryId } } }", _forged(["cashMovements", 2**64])),
    ("admin", "aiPortfolio { trades(after: $after) { nodes { tradeId } } }", _forged(["aiTrades", -(2**63) - 1])),
    ("admin", "aiPortfolio { days(after: $after) { nodes { tradingDate } } }", _forged(["aiDays", "0001-01-01"])),
    ("acme", "portfolio { trades(after: $after) { nodes { tradeId } } }", DEEP),
)


def test_forged_cursors_are_bad_input_on_rest_and_graphql_never_an_error_of_the_server(api: Api) -> None:
    keys = {"acme": api.world.acme_key, "admin": ADMIN_KEY}
    for who, path, cursor in REST_FORGED:
        assert_problem(api.call("GET", path, keys[who], params={"cursor": cursor}), 422)
    for who, field, cursor in GRAPHQL_FORGED:
        body = gql(api, f"query($after: String) {{ {field} }}", keys[who], {"after": cursor}).json()
        codes = {e.get("extensions", {}).get("code") for e in body.get("errors", [])}
        assert codes == {"BAD_USER_INPUT"}, (field, cursor[:40], body)
    # the API's own cursors still lead on (a page after the first row; a portfolio's cursor names it)
    first = paging.TRADES.of(api.acme("GET", "/api/portfolio/summary").json()["portfolio_id"]).cursor(1)
    assert api.acme("GET", "/api/portfolio/trade", params={"cursor": first}).status_code == 200


def test_a_query_parameter_no_route_takes_is_named_never_ignored_on_every_route(api: Api) -> None:
    """`?offset=5` on a route that pages by cursor answered the first page as if it were
    the sixth: every GET route of the OpenAPI schema refuses a parameter it does not take
    with a 422 naming it (and what it takes), after its key, and still answers the ones it
    declares; a kept answer's URL is never one that was refused."""
    schema = api.call("GET", "/openapi.json").json()
    walked = 0
    for path, operations in schema["paths"].items():
        if "get" not in operations or not path.startswith("/api/") or path.endswith(".pdf"):
            continue
        parameters = operations["get"].get("parameters", [])
        url = path.format(**{p["name"]: VALUES[p["name"]] for p in parameters if p["in"] == "path"})
        caller = api.admin if "ai-portfolio/history" in path or path.startswith("/api/keys") else api.acme
        required = {p["name"]: VALUES[p["name"]] for p in parameters if p["in"] == "query" and p.get("required")}
        assert caller("GET", url, params=required).status_code in (200, 403, 503), path  # kept now, where it can be
        body = assert_problem(caller("GET", url, params={**required, "offset": "5"}), 422, "offset", "this route takes")
        assert body["errors"] == [
            {"loc": ["query", "offset"], "msg": body["errors"][0]["msg"], "type": "extra_forbidden"}
        ]
        assert api.call("GET", url, key="svc-nope", params={"offset": "5"}).status_code == 401  # the key first
        walked += 1
    assert walked >= 15
    assert_problem(api.acme("GET", "/api/portfolio/trade", params={"limit": "5", "page": "2"}), 422, "page", "cursor")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_history_cursor_pages_its_instrument_s_bars_only_the_way_it_was_issued(api: Api) -> None:
    """REST's history cursors were bare dates (`2026-11-13`, `before:2026-11-13`): LIQ's
    next_cursor sent to MID's history paged MID's bars from LIQ's date, silently, where
    GraphQL's `history` refuses another instrument's cursor. They are opaque now and name the
    instrument and the way they page, one rule with GraphQL's (api/paging.py `bars_after`)."""
    backward = api.acme("GET", "/api/market/history/LIQ", params={"limit": 5}).json()["next_cursor"]
    ahead = {"limit": 5, "start": "2026-09-01"}
    forward = api.acme("GET", "/api/market/history/LIQ", params=ahead).json()["next_cursor"]
    for cursor, params in ((backward, {"limit": 5}), (forward, ahead)):
        refused = api.acme("GET", "/api/market/history/MID", params={**params, "cursor": cursor})
        assert_problem(refused, 422, "that cursor belongs to LIQ's", "not MID's")
        assert api.acme("GET", "/api/market/history/liq", params={**params, "cursor": cursor}).status_code == 200
    # what the cursors were (a bare date, either way), another list's: not issued for this list
    for cursor in ("2026-11-13", "before:2026-11-13", paging.TRADES.cursor(5)):
        assert_problem(api.acme("GET", "/api/market/history/LIQ", params={"cursor": cursor}), 422, "cursor")
    # forward, REST's cursor is GraphQL's endCursor on the same bar, and each leads on in the other
    query = 'query($after: String) { instrument(symbol: "LIQ") { history(first: 5, start: "2026-09-01", after: $after)'
    graph = data(api, query + " { pageInfo { endCursor } } } }", api.world.acme_key)["instrument"]["history"]
    assert graph["pageInfo"]["endCursor"] == forward
    rest_next = api.acme("GET", "/api/market/history/LIQ", params={**ahead, "cursor": forward}).json()
    graph_next = data(api, query + " { nodes { tradingDate } } } }", api.world.acme_key, {"after": forward})
    dates = [n["tradingDate"] for n in graph_next["instrument"]["history"]["nodes"]]
    assert dates == [b["trading_date"] for b in rest_next["items"]] and dates[0] > "2026-09-01"
