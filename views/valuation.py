"""A portfolio at current prices: positions with market value, PnL and exit flags, and
the totals (cash, equity, liquid equity, realised and unrealised PnL).

Prices are each symbol's latest close on or before `day` (point in time); a symbol that
did not trade on `day` is valued at its last close and flagged TRAPPED for that day, as
the rail would. A symbol never priced is valued at its average cost and flagged
UNPRICED, so equity never silently drops a holding.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection

from portfolio import ledger
from portfolio.market import market_days
from portfolio.rails import exit_state, illiquid_discount
from store.splits import stored_splits

CENTS = Decimal("0.01")


def portfolio_view(conn: Connection, portfolio_id: str, day: date) -> dict[str, Any]:
    trades = ledger.trade_rows(conn, portfolio_id)
    book = ledger.replay(trades, stored_splits(conn, day, {t["symbol"] for t in trades}))
    open_positions = {s: p for s, p in book.items() if p.quantity > 0}
    market = market_days(conn, day, list(open_positions))
    cash = ledger.cash_balance(conn, portfolio_id)
    positions, discounts = [], {}
    for symbol, position in sorted(open_positions.items()):
        market_day = market.get(symbol)
        price = Decimal(str(market_day.close)) if market_day else position.average_cost
        value = (price * position.quantity).quantize(CENTS)
        flags = list(exit_state(market_day, position.quantity).flags) if market_day else ["UNPRICED"]
        if market_day:
            discount = illiquid_discount(market_day, position.quantity)
            if discount:
                discounts[symbol] = round(discount, 2)
        positions.append(
            {
                "symbol": symbol,
                "quantity": position.quantity,
                "cost_basis": position.cost_basis.quantize(CENTS),
                "average_cost": position.average_cost,
                "purchase_date": position.opened_on,
                "price": price,
                "market_value": value,
                "unrealized_pnl": (value - position.cost_basis).quantize(CENTS),
                "realized_pnl": position.realized_pnl.quantize(CENTS),
                "flags": flags,
            }
        )
    market_value = sum((p["market_value"] for p in positions), Decimal(0))
    equity = cash + market_value
    return {
        "portfolio_id": portfolio_id,
        "as_of": day,
        "cash": cash.quantize(CENTS),
        "market_value": market_value,
        "equity": equity.quantize(CENTS),
        "liquid_equity": (equity - Decimal(str(sum(discounts.values())))).quantize(CENTS),
        "illiquid_discounts": discounts,
        "unrealized_pnl": sum((p["unrealized_pnl"] for p in positions), Decimal(0)),
        "realized_pnl": sum((p.realized_pnl for p in book.values()), Decimal(0)).quantize(CENTS),
        "positions": positions,
    }
