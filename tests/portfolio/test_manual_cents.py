"""A manual trade's price and fees and a deposit are the client's own money: whole cents
in the domain too (portfolio/trading.py, ledger._terms), whichever way they came, so a
trade's stored price and the cash it moves agree to the cent. A trade the service prices
itself (an AI fill with its costs, a statement's average cost) keeps six decimals."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.settings import Settings
from portfolio import ledger
from portfolio.ledger import TradeRejected, TradeRequest
from portfolio.trading import move_cash
from store import tables
from tests.portfolio import clients

NOW = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)


def _rows(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return tuple(
            conn.execute(select(func.count()).select_from(t)).scalar_one() for t in (tables.trades, tables.cash_entries)
        )


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sub_cent_client_money_is_refused_not_rounded(settings: Settings) -> None:
    client = clients.open_funded_client(settings, "10000", NOW)
    engine, _, portfolio_id = client
    before = _rows(engine)
    for price, fees, field in [
        (Decimal("100.001"), 0, "price"),
        ("100.001", 0, "price"),
        (100.001, 0, "price"),
        (100, Decimal("0.005"), "fees"),
    ]:
        with pytest.raises(TradeRejected, match=f"{field} must be a whole number of cents"):
            clients.trade(client, "buy", "AAA", 1, price, NOW, fees)
    for amount in (Decimal("1.005"), "1.005", "-0.001"):
        with pytest.raises(TradeRejected, match="amount must be a whole number of cents"):
            move_cash(engine, portfolio_id, amount, now=NOW)
    assert _rows(engine) == before
    placed = clients.trade(client, "buy", "AAA", 1, Decimal("100.010000"), NOW, "0.50")
    assert (placed.price, placed.gross, placed.fees) == (Decimal("100.01"), Decimal("100.01"), Decimal("0.50"))


def test_the_ledger_refuses_a_sub_cent_manual_price_and_keeps_a_priced_fill() -> None:
    request = TradeRequest("client:x", date(2026, 11, 20), NOW, "AAA", "BUY", 3, Decimal("52.001"), trade_id="T-1")
    with pytest.raises(TradeRejected, match="price must be a whole number of cents"):
        ledger.check_trade(request, [], [], Decimal(1000))
    with pytest.raises(TradeRejected, match="fees must be a whole number of cents"):
        ledger.check_trade(
            TradeRequest(**{**vars(request), "price": Decimal("52"), "fees": Decimal("0.001")}), [], [], Decimal(1000)
        )
    fill = ledger.check_trade(TradeRequest(**{**vars(request), "origin": "AI"}), [], [], Decimal(1000))
    assert fill.row["price"] == Decimal("52.001") and fill.gross == Decimal("156.00")


def test_a_trade_shows_the_value_the_ledger_moved_for_a_price_with_more_decimals(settings: Settings) -> None:
    """A fill the service priced (six decimals) moves its gross rounded to the cent half up
    (market.money.to_cents); the trade history shows that value, not one rounded half to
    even: 52.005 x 1 moved 52.01 and was shown as 52.00."""
    from views.portfolio import trade_history

    engine, _, portfolio_id = clients.open_funded_client(settings, "10000", NOW)
    request = TradeRequest(portfolio_id, date(2026, 11, 20), NOW, "AAA", "BUY", 1, Decimal("52.005"), trade_id="T-1")
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.record_trade(conn, TradeRequest(**{**vars(request), "origin": "AI"}))
    with engine.connect() as conn:
        (shown,) = trade_history(conn, portfolio_id)
        moved = conn.execute(
            select(tables.cash_entries.c.amount).where(tables.cash_entries.c.entry_id == "T-1:gross")
        ).scalar_one()
    assert shown["value"] == -moved == Decimal("52.01")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_positions_cost_is_shown_as_the_ledger_moved_it(settings: Settings) -> None:
    """The portfolio's valuation rounds money as the ledger stores it (half up,
    market.money.to_cents): a position bought at 52.005 cost the 52.01 the ledger took, and
    was shown costing 52.00 (half to even)."""
    from views.valuation import portfolio_view

    engine, _, portfolio_id = clients.open_funded_client(settings, "10000", NOW)
    request = TradeRequest(portfolio_id, date(2026, 11, 20), NOW, "AAA", "BUY", 1, Decimal("52.005"), trade_id="T-1")
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        ledger.record_trade(conn, TradeRequest(**{**vars(request), "origin": "AI"}))
    with engine.connect() as conn:
        (position,) = portfolio_view(conn, portfolio_id, date(2026, 11, 20)).positions
    assert position.cost_basis == Decimal("52.01")
