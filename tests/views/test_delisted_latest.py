"""A delisted name leaves the day's market at once: the latest quotes, breadth's counts and
its capitalisation index are of the names listed on the day. Its last bar read "latest" for
60 days (LATEST_LOOKBACK_DAYS), counted as not traded and as an index constituent."""

from __future__ import annotations

from sqlalchemy import Engine

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, price_row
from views import bars as bar_views
from views import market as market_views
from views.breadth import market_breadth

DAYS = days_up_to(DAY, 30)
GONE = DAYS[-5]  # OLD's delisting day: its last bar is the session before


def _store(engine: Engine) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
                for s in ("KEEP", "OLD")
            ],
        )
        rows = [price_row("KEEP", d, 10.0 + i / 10, 5_000, 9.9, 10.1) for i, d in enumerate(DAYS)]
        rows += [price_row("OLD", d, 20.0, 5_000, 19.9, 20.1) for d in DAYS if d < GONE]
        append_history(conn, tables.eod_prices, rows)
        bar_views.refresh_bars(conn)
        old = {"symbol": "OLD", "name": "OLD Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
        append_history(conn, tables.instruments, [old | {"delisted_on": GONE}])


def test_a_delisted_name_is_not_in_the_days_market_from_its_delisting(settings: Settings) -> None:
    engine = service_engine(settings)
    _store(engine)
    with engine.connect() as conn:
        before = market_views.latest_market(conn, CALENDAR, DAY, DAYS[-6])
        after = market_views.latest_market(conn, CALENDAR, DAY, GONE)
        later = market_views.latest_market(conn, CALENDAR, DAY, DAY)
        breadth = market_breadth(conn, CALENDAR, DAY, DAY)
    assert set(before) == {"KEEP", "OLD"}  # listed, and traded that day
    assert set(after) == set(later) == {"KEEP"}
    assert (breadth["instruments"], breadth["not_traded"]) == (1, 0)
    assert "OLD" not in breadth["index_excluded"]  # not a constituent at all, not one without shares
