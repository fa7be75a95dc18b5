"""What a client's track record says the book held (issue 55): an all-cash book is flagged
with zero exposure and no fills, an invested one is not, and a book without history says
why instead of serving bare nulls."""

from __future__ import annotations

import pytest

from market.settings import Settings
from portfolio.track_record import TrackRecord
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store.engine import service_engine
from tests.portfolio.seed import CALENDAR, seed_market
from tests.portfolio.test_client_track_record import FRIDAY, MONDAY, TUESDAY, bar
from views.book_record import portfolio_track_record
from views.track_record import NO_CLIENT_HISTORY


def test_an_all_cash_client_book_is_flagged_and_an_invested_one_is_not(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    cash = open_client_portfolio(engine, "cash")
    move_cash(engine, cash, "5000", now=FRIDAY)
    invested = open_client_portfolio(engine, "invested")
    move_cash(engine, invested, "5025", now=FRIDAY)
    place_manual_trade(engine, settings, CALENDAR, invested, ManualTrade("buy", "AAA", 50, 100, 25), now=FRIDAY)
    bar(engine, MONDAY, 90.0)  # the market falls: holding cash "beats" it
    bar(engine, TUESDAY, 81.0)
    with engine.connect() as conn:
        idle, busy = portfolio_track_record(conn, cash).as_dict(), portfolio_track_record(conn, invested).as_dict()
    assert idle["days"] == 3 and idle["reason"] is None  # Friday (from nothing before it), Monday, Tuesday
    assert idle["average_exposure"] == 0.0 and idle["mostly_cash"] is True and idle["fill_count"] == 0
    assert "holding cash, not skill" in idle["note"]
    # all 5,000 left after the fee is in AAA from Friday on
    assert busy["average_exposure"] == pytest.approx(1.0) and busy["mostly_cash"] is False
    assert "3 days of returns, under a year" in busy["note"] and "cash" not in busy["note"]
    assert busy["fill_count"] == 1


def test_a_book_without_history_says_why(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"AAA": {"close": 100.0, "volume": 20_000}})
    empty = open_client_portfolio(engine, "empty")
    recent = open_client_portfolio(engine, "recent")
    move_cash(engine, recent, "1000", now=FRIDAY)
    with engine.connect() as conn:
        none, one = portfolio_track_record(conn, empty), portfolio_track_record(conn, recent).as_dict()
    assert none == TrackRecord(days=0, benchmarks={}, fill_count=0, reason=NO_CLIENT_HISTORY)
    assert one["days"] == 1 and "market day(s) with prices since the first trade or cash movement" in one["reason"]
