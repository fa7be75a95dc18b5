"""A held name with fewer than 20 sessions of history (a new listing) has no ADV_20, so the
exit rail cannot measure its days to exit. It read SLOW_EXIT with no end ("never"), as if
the name could never be sold; its position says instead that the history is too short to
measure, and its exit is capped at a quarter of the session's volume as any slow one is."""

from __future__ import annotations

from datetime import UTC, datetime

from market.settings import Settings
from portfolio.market import market_days
from portfolio.rails import SHORT_HISTORY, SLOW_EXIT, exit_state
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store.engine import service_engine
from tests.portfolio.seed import CALENDAR, DAY, seed_market
from views.valuation import portfolio_view

FRIDAY_NOON = datetime(2026, 11, 20, 17, 0, tzinfo=UTC)


def test_a_name_with_a_short_history_says_so_instead_of_slow_exit(settings: Settings) -> None:
    engine = service_engine(settings)
    seed_market(engine, {"LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1}})
    seed_market(engine, {"NEW": {"close": 10.0, "volume": 4_000, "bid": 9.95, "ask": 10.05}}, history=10)
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=FRIDAY_NOON)
    for order in (ManualTrade("buy", "NEW", 1_000, "10.05", 0), ManualTrade("buy", "LIQ", 100, "50.10", 0)):
        place_manual_trade(engine, settings, CALENDAR, acme, order, now=FRIDAY_NOON)
    with engine.connect() as conn:
        positions = {p.symbol: p for p in portfolio_view(conn, acme, DAY).positions}
        new = market_days(conn, DAY, ["NEW"])["NEW"]
    assert SLOW_EXIT not in positions["NEW"].flags and positions["NEW"].flags == ()
    assert positions["NEW"].stopped == SHORT_HISTORY
    assert "too short to measure its days to exit" in SHORT_HISTORY
    assert positions["LIQ"].stopped is None and positions["LIQ"].flags == ()
    state = exit_state(new, 1_000)
    assert state.as_dict()["days_to_exit"] is None and state.sellable_today == 1_000  # 25% of 4,000
    assert exit_state(new, 5_000).sellable_today == 1_000
