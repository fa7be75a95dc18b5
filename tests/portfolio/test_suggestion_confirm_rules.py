"""What a suggestion's confirmation charges and books against the rules a client was shown:
one rule for an order's fee (the trade preview's and a manual trade's, `FeeSchedule.order_fee`)
for a suggestion stored without fees, and the mandate's largest position re-checked with the
holding the portfolio has when it confirms (SQLite and Postgres)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from market.fees import fee_schedule
from market.money import to_cents
from portfolio import ledger, suggestions
from portfolio.book import Mandate
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, DAY, seed_long_and_avoid

MONDAY = CALENDAR.next_trading_day(DAY)
MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time


@pytest.fixture
def store(settings):
    engine = service_engine(settings)
    seed_long_and_avoid(engine)
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=MORNING)
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, acme, now=MORNING)
    return engine, settings, acme, pending


def _stored_before_fees(engine, pending: suggestions.Suggestion, limit: Decimal) -> str:
    """A suggestion as T2 stored it before migration 0021 kept its fees (`fees` null), with a
    limit of six decimals, as the plan priced it then; the morning's own one is rejected."""
    suggestions.reject(engine, pending.portfolio_id, pending.suggestion_id, now=MORNING)
    sid = f"{pending.suggestion_id}-old"
    row = {
        "suggestion_id": sid,
        "portfolio_id": pending.portfolio_id,
        "trading_date": pending.trading_date,
        "symbol": pending.symbol,
        "side": pending.side,
        "quantity": pending.quantity,
        "limit_price": limit,
        "fees": None,
        "reason": pending.reason,
        "expires_at": pending.expires_at,
    }
    with engine.begin() as conn:
        append_history(conn, tables.suggestions, [row])
        event = {"suggestion_id": sid, "state": "PENDING", "portfolio_id": pending.portfolio_id}
        append_history(conn, tables.suggestion_events, [event])
    return sid


def test_a_suggestion_stored_without_fees_is_charged_the_fee_a_preview_and_a_manual_trade_charge(store) -> None:
    """Its fee is the schedule's on the order's value in cents (`order_fee`), the one
    computation the trade preview shows and a manual trade at that price without fees books:
    on 126 shares at 50.103135 the value is 6,313.00, whose fee is 53.66; the fee of the
    six-decimal value 6,312.99501 was 53.65, a cent from what the same order costs by hand."""
    engine, settings, acme, pending = store
    limit = Decimal("50.103135")
    assert pending.quantity == 126
    sid = _stored_before_fees(engine, pending, limit)
    done = suggestions.confirm(engine, settings, CALENDAR, acme, sid, now=MORNING)
    assert done.state == "CONFIRMED"
    order_fee = fee_schedule(settings).order_fee(limit, 126)
    assert order_fee == Decimal("53.66")
    with engine.connect() as conn:
        (trade,) = ledger.trade_rows(conn, acme)
        assert trade["fees"] == order_fee
        assert ledger.cash_balance(conn, acme) == Decimal("100000") - to_cents(limit * 126) - order_fee


def _bought_by_hand(engine, settings, acme: str, quantity: int) -> None:
    order = ManualTrade("BUY", "LIQ", quantity, "50.00")
    place_manual_trade(engine, settings, CALENDAR, acme, order, now=MORNING)


def test_a_buy_confirmed_past_the_mandates_largest_position_is_out_of_date_and_books_nothing(store) -> None:
    """The plan sized the buy to fill LIQ's slot (126 shares) from the 0 held; the client
    bought 200 by hand since: confirming would hold 326, past the mandate's largest position
    (`Mandate.trim`, 2 slots: 252), which the next morning's plan would sell back at a round
    trip's cost. It is refused as out of date (409), stays pending, and books nothing."""
    engine, settings, acme, pending = store
    assert (pending.quantity, pending.reason["limits"]["slot_shares"], Mandate().trim) == (126, 126, 2.0)
    _bought_by_hand(engine, settings, acme, 200)
    with engine.connect() as conn:
        cash = ledger.cash_balance(conn, acme)
    with pytest.raises(suggestions.PlanMoved) as refused:
        suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert refused.value.detail == (
        "the portfolio holds 200 LIQ now, 0 when this suggestion was planned: confirming its 126 would hold 326, "
        "past the mandate's largest position of 2 slots (252 shares of the plan's slot of 126); reject it (the "
        "next morning's suggestions are sized on the holding as it is then)"
    )
    assert [s.suggestion_id for s in suggestions.list_pending(engine, acme, now=MORNING)] == [pending.suggestion_id]
    with engine.connect() as conn:
        assert [t["origin"] for t in ledger.trade_rows(conn, acme)] == ["MANUAL"]
        assert ledger.cash_balance(conn, acme) == cash


def test_a_buy_whose_holding_grew_within_the_mandates_largest_position_confirms(store) -> None:
    """126 bought by hand and the suggestion's 126 hold 252, the mandate's 2 slots: booked."""
    engine, settings, acme, pending = store
    _bought_by_hand(engine, settings, acme, 126)
    done = suggestions.confirm(engine, settings, CALENDAR, acme, pending.suggestion_id, now=MORNING)
    assert done.state == "CONFIRMED"
    with engine.connect() as conn:
        assert ledger.holdings(conn, acme, MONDAY)["LIQ"].quantity == 252
