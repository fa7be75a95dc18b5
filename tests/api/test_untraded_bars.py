"""A day without trades in the served bars: the exchange repeats the last close as the
day's high and low (the NSE files, many exchange pages), a range of 0 that says nothing
about the spread, so the bars serve no spread for it rather than 0.00%."""

from __future__ import annotations

from datetime import date

import pytest

from desk import Desk
from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.world import DAY, MONDAY
from views import bars as bar_views


def _untraded_monday(engine, symbol: str) -> float:
    """`symbol`'s no-trade bar on MONDAY as such a file gives it: volume 0, no quotes, the
    last close as open, high, low and close; the close carried."""
    with engine.connect() as conn:
        last = conn.execute(
            tables.eod_prices.select().where(
                tables.eod_prices.c.symbol == symbol, tables.eod_prices.c.trading_date == DAY
            )
        ).one()
    row = {"open": last.close, "high": last.close, "low": last.close, "close": last.close, "volume": 0}
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [{"symbol": symbol, "trading_date": MONDAY, **row, "source": "test"}])
    return last.close


def _bar(api: Api, symbol: str, day: date) -> dict:
    items = api.acme("GET", f"/api/market/history/{symbol}", params={"limit": 5}).json()["items"]
    return next(item for item in items if item["trading_date"] == day.isoformat())


def test_a_day_without_trades_serves_no_spread_computed_or_stored(api: Api) -> None:
    engine = api.world.engine
    close = _untraded_monday(engine, "LIQ")
    traded = _bar(api, "LIQ", DAY)
    assert traded["spread_pct"] > 0  # the quoted spread of a traded day

    computed = _bar(api, "LIQ", MONDAY)  # read before the refresh: built in memory
    assert (computed["volume"], computed["high"], computed["low"], computed["close"]) == (0, close, close, close)
    assert computed["spread_pct"] is None
    with engine.begin() as conn:
        bar_views.refresh_bars(conn)
    assert _bar(api, "LIQ", MONDAY) == computed  # the stored bar says the same
    stats = api.acme("GET", "/api/market/symbol/LIQ").json()["normalised"]["spread_pct"]
    assert stats["value"] == pytest.approx(traded["spread_pct"], abs=0.005)  # the latest spread known, not 0.0


def test_rebuilding_the_bars_puts_right_a_bar_stored_under_an_earlier_definition(api: Api) -> None:
    """A store whose bars were built before a definition changed (here: the 0.00% spread an
    untraded day read) serves them as stored until `marketintel db rebuild-bars`; after it,
    what the definition computes now, and a second rebuild stores nothing."""
    engine = api.world.engine
    _untraded_monday(engine, "LIQ")
    with engine.begin() as conn:
        bar_views.refresh_bars(conn)
        (stored,) = bar_views.built_rows(conn, ["LIQ"], since={"LIQ": MONDAY})
        append_history(conn, tables.daily_bars, [{**stored, "spread_pct": 0.0}])  # as the earlier rule stored it
    assert _bar(api, "LIQ", MONDAY)["spread_pct"] == 0.0
    desk = Desk.from_settings(api.world.settings)
    assert desk.refresh_bars() == 0  # nothing new to build from: the plain refresh keeps it
    assert desk.refresh_bars(every=True) == 1
    assert _bar(api, "LIQ", MONDAY)["spread_pct"] is None
    assert desk.refresh_bars(every=True) == 0
