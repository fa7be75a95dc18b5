"""A client whose only holding is suspended (no row) for longer than the market days' 60
calendar days but within the spread estimator's 140 could not read its portfolio: every
read (REST positions and summary, GraphQL) answered 500, because the market days of a
window with no recent bar failed instead of reading no sessions. The holding is carried at
its last close, TRAPPED and out of liquid equity, and DELISTED once the delisting rule's
sessions pass (docs/portfolio.md, "A name that stops")."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import MORNING
from tests.portfolio.seed import CALENDAR, price_row


def _read_on(api: Api, day: date, stored: list[date] = ()) -> tuple[dict, dict, dict]:
    """The positions, summary and GraphQL portfolio the client reads the morning after `day`,
    once the market's sessions `stored` are (MID trades, LIQ has no row)."""
    with api.world.engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, None, None) for d in stored])
    api.clock.moment = datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=13)
    positions, summary = api.acme("GET", "/api/portfolio"), api.acme("GET", "/api/portfolio/summary")
    assert (positions.status_code, summary.status_code) == (200, 200), (positions.text, summary.text)
    graph = data(api, "{ portfolio { cash equity liquidEquity } }", api.world.acme_key)["portfolio"]
    return positions.json(), summary.json(), graph


def test_a_holding_suspended_past_the_market_days_window_is_carried_then_delisted(api: Api) -> None:
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    later = [CALENDAR.add_trading_days(MORNING.date(), i) for i in range(1, 61)]
    (before,) = _read_on(api, MORNING.date())[0]["positions"]
    # 45 sessions (over 60 calendar days) without a row: at its last close, TRAPPED, out of liquid equity
    positions, summary, graph = _read_on(api, later[44], later[:45])
    (carried,) = positions["positions"]
    assert positions["as_of"] == later[44].isoformat()
    assert (carried["symbol"], carried["quantity"]) == ("LIQ", 100) and "TRAPPED" in carried["flags"]
    assert carried["price"] == before["price"] and Decimal(carried["market_value"]) > 0
    assert Decimal(summary["liquid_equity"]) == Decimal(summary["equity"]) - Decimal(carried["market_value"])
    assert Decimal(graph["equity"]) == Decimal(summary["equity"])
    # 60 sessions: delisted, worth nothing under the default rule
    positions, summary, graph = _read_on(api, later[59], later[45:60])
    (delisted,) = positions["positions"]
    assert positions["as_of"] == later[59].isoformat()
    assert (delisted["flags"], Decimal(delisted["market_value"])) == (["DELISTED"], 0)
    assert Decimal(summary["equity"]) == Decimal(summary["cash"]) == Decimal(graph["equity"])
