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
    # Friday 5,000 from the 5,025 deposited that morning (the 25 fee: its first day counts, from
    # nothing before it), Monday 5,500, Tuesday 6,500 with 1,000 deposited: -0.5%, +10%, then 0%
    assert (record["days"], record["first"], record["last"]) == (3, DAY, TUESDAY)
    assert record["total_return"] == pytest.approx(5500 / 5025 - 1, abs=1e-4)
    assert record["costs"]["fees"] == 25.0 and record["costs"]["total"] == 25.0 and record["trades"] == 1
    assert record["max_drawdown"] == pytest.approx(25 / 5025, abs=1e-4)


def test_a_deposit_counts_from_the_start_of_its_day_and_the_first_day_has_a_return(settings: Settings) -> None:
    """1,000 on Friday, 100,000 more on Monday spent at once: Monday's return is earned on the
    101,000 there that morning, not on Friday's 1,000 (a deposit counted at the day's end made
    Monday's loss of 5,000 a return of -500%, and a first day's fees vanished)."""
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    pid = open_client_portfolio(engine, "acme")
    move_cash(engine, pid, "1000", now=FRIDAY)
    monday = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    move_cash(engine, pid, "100000", now=monday)
    place_manual_trade(engine, settings, CALENDAR, pid, ManualTrade("buy", "AAA", 990, 100, 50), now=monday)
    bar(engine, MONDAY, 95.0)
    bar(engine, TUESDAY, 95.0)
    with engine.connect() as conn:
        record = portfolio_track_record(conn, pid).as_dict()
    # 101,000 deposited, 1,950 cash and 990 x 95 = 94,050 at Tuesday's close: 96,000
    assert (record["days"], record["first"]) == (3, DAY)
    assert record["total_return"] == pytest.approx(96_000 / 101_000 - 1, abs=1e-4)
    assert record["max_drawdown"] == pytest.approx(1 - 96_000 / 101_000, abs=1e-4)


def test_a_weekend_trade_and_its_cash_are_the_same_session(settings: Settings) -> None:
    """A deposit and a buy entered on Saturday: the trade is Friday's session, and so are its
    cash and the deposit that paid for it, so Friday is valued with both (the trade's cash on
    Monday made Friday's book 5,000 of shares bought with nothing: -97%)."""
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    pid = open_client_portfolio(engine, "acme")
    saturday = datetime(2026, 11, 21, 15, 0, tzinfo=UTC)  # 10:00 exchange time
    move_cash(engine, pid, "5025", now=saturday)
    trade = place_manual_trade(engine, settings, CALENDAR, pid, ManualTrade("buy", "AAA", 50, 100, 25), now=saturday)
    assert trade.trading_date == DAY
    bar(engine, MONDAY, 110.0)
    bar(engine, TUESDAY, 110.0)
    with engine.connect() as conn:
        record = portfolio_track_record(conn, pid).as_dict()
    # 5,025 deposited, 50 x 110 = 5,500 held: what the summary's equity says
    assert (record["days"], record["first"]) == (3, DAY)
    assert record["total_return"] == pytest.approx(5500 / 5025 - 1, abs=1e-4)
