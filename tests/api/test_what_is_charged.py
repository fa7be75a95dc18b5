"""What a client sees is what it pays (issue 64), on SQLite and Postgres:

- every price a surface shows times its quantity is the value it shows, to the cent, and
  the cash a trade moved is that value plus the fees shown: manual trades (REST, GraphQL),
  a confirmed suggestion (its limit at the instrument's tick, charged with the fees it
  showed) and the AI portfolio's fills (REST history, GraphQL);
- a buy confirmed ahead of its session is shown as pending until that session, and a sell
  of it before then is refused with that reason on REST and GraphQL; from its session on
  it is sold like any holding.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from market.liquidity import tick_size
from tests.api.conftest import Api, assert_problem
from tests.api.graph import data, snake
from tests.api.world import DAY, MONDAY
from tests.portfolio.clients import announce_action
from tests.reports.pdf import read

TRADE = "tradeId tradingDate symbol side quantity price fees value"
AUDIT_ROW = re.compile(r"^\d{4}-\d\d-\d\d \S+ (?:BUY|SELL) ([\d,]+) ([\d,.]+) ([\d,.]+) ", re.M)
SATURDAY = datetime(2026, 11, 21, 15, 0, tzinfo=UTC)  # between DAY (Friday 2026-11-20) and MONDAY's session
TUESDAY = date(2026, 11, 24)
TUESDAY_MORNING = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)  # 08:00 exchange time, before the session


def _priced(rows: list[dict[str, Any]], where: str) -> int:
    """Every row's price x quantity is its value, to the cent; how many rows were checked."""
    for row in rows:
        assert Decimal(row["price"]) * row["quantity"] == Decimal(row["value"]), (where, row)
    return len(rows)


def _moved(api: Api, trade_id: str) -> Decimal:
    """The cash the ledger moved for one trade (its trade and fee entries)."""
    rows = api.acme("GET", "/api/portfolio/cash", params={"limit": 500}).json()["items"]
    return sum((Decimal(r["amount"]) for r in rows if r["trade_id"] == trade_id), Decimal(0))


def _pending(api: Api) -> dict[str, Any]:
    (shown,) = api.acme("GET", "/api/suggestions").json()["items"]
    return shown


def test_every_price_shown_times_its_quantity_is_the_value_and_the_cash_moved(api: Api) -> None:
    key = api.world.acme_key
    shown = _pending(api)
    limit = Decimal(shown["limit_price"])
    assert limit % Decimal(str(float(tick_size(float(limit))))) == 0, shown  # a limit a broker accepts
    assert shown["fees"] is not None
    manual = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 7, "price": "52.05"}
    )
    assert manual.status_code == 201, manual.text
    placed = data(
        api,
        'mutation { placeTrade(order: {side: "BUY", symbol: "LIQ", quantity: 3, price: "51.95", fees: "1.10"}) '
        "{ __typename ... on TradePlaced { tradeId tradingDate price quantity fees } } }",
        key,
    )["placeTrade"]
    assert placed["__typename"] == "TradePlaced" and placed["tradingDate"] == MONDAY.isoformat()
    confirmed = api.acme("POST", f"/api/suggestions/{shown['suggestion_id']}/confirm")
    assert confirmed.status_code == 200, confirmed.text

    trades = api.acme("GET", "/api/portfolio/trade").json()["items"]
    assert _priced(trades, "REST trades") == 3
    for trade in trades:  # the cash moved is the value shown plus the fees shown, to the cent
        charged = Decimal(trade["value"]) + Decimal(trade["fees"])
        assert _moved(api, trade["trade_id"]) == -charged, trade
    (from_suggestion,) = (t for t in trades if t["trade_id"] == confirmed.json()["trade_id"])
    assert (from_suggestion["price"], from_suggestion["quantity"], from_suggestion["fees"]) == (
        shown["limit_price"],
        shown["quantity"],
        shown["fees"],
    )
    graph = data(api, f"{{ portfolio {{ trades {{ nodes {{ {TRADE} }} }} }} }}", key)["portfolio"]["trades"]["nodes"]
    assert snake(graph) == [{k: t[k] for k in snake(graph[0])} for t in trades]
    assert _priced(snake(graph), "GraphQL trades") == 3

    ai_days = api.admin("GET", "/api/ai-portfolio/history").json()["items"]
    fills = [t for d in ai_days for t in d["trades"]]
    assert _priced(fills, "REST AI history") >= 1
    assert all(Decimal(t["price"]) == Decimal(t["price"]).quantize(Decimal("0.01")) for t in fills)
    ai_graph = data(
        api,
        f"{{ aiPortfolio {{ trades {{ nodes {{ {TRADE} }} }} }} }}",
        api.world.settings.admin_key.get_secret_value(),
    )
    assert _priced(snake(ai_graph["aiPortfolio"]["trades"]["nodes"]), "GraphQL AI trades") == len(fills)
    # the Compliance Report's audit trail: Date Symbol Action Quantity Price Value Fees ...
    pdf = api.admin("GET", "/api/compliance-report.pdf")
    assert pdf.status_code == 200, pdf.text
    audited = [
        {"price": p.replace(",", ""), "quantity": int(q.replace(",", "")), "value": v.replace(",", "")}
        for q, p, v in AUDIT_ROW.findall(read(pdf.content).text)
    ]
    assert _priced(audited, "Compliance Report") == len(fills)


def test_a_buy_confirmed_ahead_of_its_session_is_pending_until_then_and_a_sell_says_so(api: Api) -> None:
    key = api.world.acme_key
    api.clock.moment = SATURDAY  # the demo's case: Monday's suggestion confirmed on the weekend
    shown = _pending(api)
    assert api.acme("POST", f"/api/suggestions/{shown['suggestion_id']}/confirm").status_code == 200
    symbol, quantity = shown["symbol"], shown["quantity"]

    (position,) = api.acme("GET", "/api/portfolio").json()["positions"]
    assert (position["symbol"], position["quantity"], position["pending_quantity"], position["pending_until"]) == (
        symbol,
        quantity,
        quantity,
        MONDAY.isoformat(),
    )
    (node,) = data(api, "{ portfolio { positions { nodes { symbol pendingQuantity pendingUntil } } } }", key)[
        "portfolio"
    ]["positions"]["nodes"]
    assert (node["pendingQuantity"], node["pendingUntil"]) == (quantity, MONDAY.isoformat())

    sell = {"side": "SELL", "symbol": symbol, "quantity": quantity, "price": "52.00"}
    why = f"holds 0 on {DAY.isoformat()}; {quantity:,} more are pending until the {MONDAY.isoformat()} session"
    assert_problem(api.acme("POST", "/api/portfolio/trade", json=sell), 422, why)
    refused = data(
        api,
        f'mutation {{ placeTrade(order: {{side: "SELL", symbol: "{symbol}", quantity: {quantity}, price: "52.00"}}) '
        "{ __typename ... on InvalidInput { message } } }",
        key,
    )["placeTrade"]
    assert refused["__typename"] == "InvalidInput" and why in refused["message"]

    api.clock.moment = datetime(2026, 11, 23, 14, 0, tzinfo=UTC)  # Monday's session: the shares count now
    (position,) = api.acme("GET", "/api/portfolio").json()["positions"]
    assert (position["pending_quantity"], position["pending_until"]) == (0, None)
    assert api.acme("POST", "/api/portfolio/trade", json=sell).status_code == 201
    assert api.acme("GET", "/api/portfolio").json()["positions"] == []


def test_a_position_after_a_split_shows_a_price_that_times_its_quantity_is_its_value(api: Api) -> None:
    """A 3-for-2 split known before its ex-date's close: 101 LIQ become 151 at the last close
    divided by 1.5, a price that is no whole number of cents. The position shows that price
    with the places it needs (at most six), and its market value is that price times 151 to
    the cent, on REST and GraphQL (34.67 x 151 once showed 5,235.17 beside a value of 5,234.67)."""
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 101, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    announce_action(api.world.engine, "LIQ", "SPLIT", 1.5, TUESDAY, "3-for-2 split, ex-date 2026-11-24")
    api.clock.moment = TUESDAY_MORNING
    (position,) = api.acme("GET", "/api/portfolio").json()["positions"]
    assert position["quantity"] == 151
    price = Decimal(position["price"])
    assert price != price.quantize(Decimal("0.01")), position  # the case: no whole number of cents
    assert (price * 151).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) == Decimal(position["market_value"])
    (node,) = data(api, "{ portfolio { positions { nodes { quantity price marketValue } } } }", api.world.acme_key)[
        "portfolio"
    ]["positions"]["nodes"]
    assert node == {"quantity": 151, "price": position["price"], "marketValue": position["market_value"]}


def test_a_trade_booked_without_fees_is_charged_the_fees_its_preview_showed(api: Api) -> None:
    """The preview shows the fee schedule's fees; the same order booked without a fees field
    is charged exactly those (REST and GraphQL alike), and the answer says so; an order that
    states its fees, 0 included, is charged what it states."""
    shown = api.acme("GET", "/api/portfolio/trade/preview", params={"side": "buy", "symbol": "LIQ", "quantity": 7})
    preview = shown.json()
    assert shown.status_code == 200 and Decimal(preview["fees"]) > 0, shown.text
    order = {"side": "BUY", "symbol": "LIQ", "quantity": 7, "price": preview["price"]}
    rest = api.acme("POST", "/api/portfolio/trade", json=order).json()
    assert (rest["fees"], rest["fees_from"]) == (preview["fees"], "SCHEDULE"), rest
    assert _moved(api, rest["trade_id"]) == -(Decimal(rest["price"]) * 7 + Decimal(preview["fees"]))
    placed = data(
        api,
        "mutation($o: ManualTradeInput!) { placeTrade(order: $o) { ... on TradePlaced { tradeId fees feesFrom } } }",
        api.world.acme_key,
        {"o": order},
    )["placeTrade"]
    assert (placed["fees"], placed["feesFrom"]) == (preview["fees"], "SCHEDULE"), placed
    stated = api.acme("POST", "/api/portfolio/trade", json={**order, "fees": "0"}).json()
    assert (stated["fees"], stated["fees_from"]) == ("0.00", "STATED"), stated
    assert _moved(api, stated["trade_id"]) == -(Decimal(stated["price"]) * 7)
