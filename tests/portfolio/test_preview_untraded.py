"""A trade preview of a name the market has not traded for a month (no volume on its latest
bar, no 20-session average to stand in for it) shows the fees and costs of the whole order,
as its booking charges them (SQLite and Postgres)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from portfolio.trading import (
    ManualTrade,
    move_cash,
    open_client_portfolio,
    place_manual_trade,
    preview_trade,
    previewed_for,
)
from store.engine import service_engine
from tests.portfolio.seed import CALENDAR, seed_market

MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time, Monday


def test_an_untraded_names_preview_shows_the_fees_its_booking_charges(settings) -> None:
    """DRY closed at 10.00 on 25 sessions without a trade: the preview of 100 shares is
    priced at the touch, 10.25 (half the fallback spread above the close), and one session
    fills none of it. It showed fees, spread cost and total cost of 0.00 (the cost model's
    on the 0 shares it fills) beside a `booking_total` of 1,033.72, and the order booked at
    10.25 without fees was charged 8.72: it now shows those 8.72 and the spread its price
    pays over the close on all 100 shares (25.00), as a booking pays them."""
    engine = service_engine(settings)
    seed_market(engine, {"DRY": {"close": 10.0, "volume": 0}})
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=MORNING)
    with engine.connect() as conn:
        shown = preview_trade(conn, settings, CALENDAR, "BUY", "DRY", 100, MORNING)
        shown = previewed_for(conn, settings, CALENDAR, acme, shown, MORNING)
    assert (shown.price, shown.fillable_in_one_session, shown.lapse_reason) == (10.25, 0, "no trades in the session")
    assert shown.bookable and shown.impact is None
    order = ManualTrade("BUY", "DRY", 100, shown.price)  # at the preview's price, stating no fees
    placed = place_manual_trade(engine, settings, CALENDAR, acme, order, now=MORNING)
    assert placed.fees == shown.fees == Decimal("8.72")
    assert (shown.spread_cost, shown.impact_cost, shown.total_cost) == (Decimal("25.00"), 0, Decimal("33.72"))
    assert Decimal(100000) - placed.cash_after == shown.booking_total == Decimal("1033.72")
