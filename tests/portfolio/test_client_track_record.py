"""A client's track record from its ledger: the book valued at each close, deposits not
counted as performance, fees as the costs it paid."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from market.settings import Settings
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, seed_market
from views.book_record import portfolio_track_record

FRIDAY = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)  # 13:00 exchange time
MONDAY, TUESDAY = CALENDAR.add_trading_days(DAY, 1), CALENDAR.add_trading_days(DAY, 2)


def bar(engine, day, close: float) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            tables.eod_prices,
            [
                {
                    "symbol": "AAA",
                    "trading_date": day,
                    "close": close,
                    "open": close,
                    "high": close,
                    "low": close,
                    "volume": 20_000,
                    "source": "test",
                }
            ],
        )


def test_a_deposit_is_not_performance_and_fees_are_the_costs(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    pid = open_client_portfolio(engine, "acme")
    move_cash(engine, pid, "5025", now=FRIDAY)
    place_manual_trade(engine, settings, CALENDAR, pid, ManualTrade("buy", "AAA", 50, 100, 25), now=FRIDAY)
    bar(engine, MONDAY, 110.0)
    bar(engine, TUESDAY, 110.0)
    move_cash(engine, pid, "1000", now=datetime(2026, 11, 24, 18, 0, tzinfo=UTC))
    with engine.connect() as conn:
        record = portfolio_track_record(conn, pid).as_dict()
    # Friday 5,000 (after the 25 fee), Monday 5,500, Tuesday 6,500 with 1,000 deposited: +10%, then 0%
    assert (record["days"], record["first"], record["last"]) == (2, MONDAY, TUESDAY)
    assert record["total_return"] == pytest.approx(0.10)
    assert record["costs"]["fees"] == 25.0 and record["costs"]["total"] == 25.0 and record["trades"] == 1
    assert record["max_drawdown"] == 0
