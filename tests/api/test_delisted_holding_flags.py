"""A holding the exchange has delisted (its DELISTING notice, dated the session after the
name's last row, as the exchange simulator and the replay send it) was carried at its last
close flagged TRAPPED and SLOW_EXIT, rail flags of a name that still trades, for the
delisting rule's 60 sessions, while a trade in it was already refused as delisted. It is
DELISTED from the notice on: at the rule's value, out of liquid equity, on every surface
(REST positions and summary, GraphQL), and the AI book reads the same absences
(portfolio/delisting.py `stored_absences`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import MORNING
from tests.portfolio.seed import CALENDAR, price_row

GRAPH = "{ portfolio { positions { nodes { symbol flags marketValue } } } }"


def test_a_holding_the_exchange_delisted_is_delisted_not_trapped(api: Api) -> None:
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    later = [CALENDAR.add_trading_days(MORNING.date(), i) for i in range(1, 4)]
    with api.world.engine.begin() as conn:  # MID trades on; LIQ has no row, and the exchange says it is delisted
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, None, None) for d in later])
        notice = {"symbol": "LIQ", "action_date": later[0], "kind": "DELISTING", "amount": None, "source": "test"}
        append_history(conn, tables.corporate_actions, [notice])
    api.clock.moment = datetime.combine(later[-1] + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=13)
    positions, summary = api.acme("GET", "/api/portfolio").json(), api.acme("GET", "/api/portfolio/summary").json()
    (held,) = positions["positions"]
    assert (held["symbol"], held["flags"], Decimal(held["market_value"])) == ("LIQ", ["DELISTED"], 0)
    assert summary["flags"] == {"LIQ": ["DELISTED"]}
    assert Decimal(summary["liquid_equity"]) == Decimal(summary["equity"]) == Decimal(summary["cash"])
    graph = data(api, GRAPH, api.world.acme_key)["portfolio"]
    assert graph["positions"]["nodes"] == [{"symbol": "LIQ", "flags": ["DELISTED"], "marketValue": "0.00"}]
