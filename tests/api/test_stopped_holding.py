"""A holding whose rows stopped without the exchange's DELISTING notice was shown TRAPPED and
SLOW_EXIT for the delisting rule's 60 sessions, SLOW_EXIT read from an earlier session's
20-day volume or from none (a day without a row has no volume to read: it is unknown, not
slow), and nothing said that the rule would delist it. It is TRAPPED alone, and `stopped`
says since when and when the rule delists it, on every surface (REST positions and summary,
GraphQL) (docs/portfolio.md, "A name that stops")."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from sqlalchemy import func, select

from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data
from tests.api.world import MORNING
from tests.portfolio.seed import CALENDAR, price_row

GRAPH = "{ portfolio { positions { nodes { symbol flags stopped } } } }"


def _read_on(api: Api, day: date, stored: list[date]) -> tuple[dict, dict, dict]:
    """The client's positions, summary and GraphQL positions the morning after `day`, once
    the sessions `stored` are (MID trades, LIQ has no row)."""
    with api.world.engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("MID", d, 20.0, 10_000, None, None) for d in stored])
    api.clock.moment = datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC) + timedelta(hours=13)
    positions, summary = api.acme("GET", "/api/portfolio"), api.acme("GET", "/api/portfolio/summary")
    assert (positions.status_code, summary.status_code) == (200, 200), (positions.text, summary.text)
    (graph,) = data(api, GRAPH, api.world.acme_key)["portfolio"]["positions"]["nodes"]
    return positions.json()["positions"][0], summary.json(), graph


def test_a_holding_without_rows_is_trapped_alone_and_says_when_the_rule_delists_it(api: Api) -> None:
    bought = api.acme(
        "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 100, "price": "52.05"}
    )
    assert bought.status_code == 201, bought.text
    with api.world.engine.connect() as conn:
        c = tables.eod_prices.c
        last_row = conn.execute(select(func.max(c.trading_date)).where(c.symbol == "LIQ")).scalar()
    later = [CALENDAR.add_trading_days(MORNING.date(), i) for i in range(1, 61)]
    for sessions, stored in ((5, later[:5]), (45, later[5:45])):
        held, summary, graph = _read_on(api, later[sessions - 1], stored)
        told = (
            f"no row since {last_row.isoformat()} ({sessions} sessions): nothing can be sold; delisted after 60 "
            f"sessions without a row ({60 - sessions} more) unless it has one again"
        )
        assert (held["flags"], held["stopped"]) == (["TRAPPED"], told), sessions
        assert summary["flags"] == {"LIQ": ["TRAPPED"]}
        assert graph == {"symbol": "LIQ", "flags": ["TRAPPED"], "stopped": told}
    held, summary, graph = _read_on(api, later[59], later[45:60])
    told = (
        f"delisted on {later[59].isoformat()} (no row since {last_row.isoformat()}, 60 sessions): worth nothing "
        "until a corporate action gives a value per share (its last close: 52.01)"
    )
    assert (held["flags"], held["stopped"], graph["stopped"]) == (["DELISTED"], told, told)
