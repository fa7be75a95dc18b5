from __future__ import annotations

from decimal import Decimal
from typing import Any

import strawberry


@strawberry.type(
    description="One cash movement of a portfolio: a deposit, withdrawal, trade, fee, dividend or statement "
    "reconciliation."
)
class CashMovement:
    entry_id: str
    timestamp: str = strawberry.field(
        description="Exchange time, ISO 8601 without offset (a dividend: the ex-date's close)."
    )
    kind: str = strawberry.field(description="DEPOSIT, WITHDRAWAL, TRADE, FEE, DIVIDEND or RECONCILIATION.")
    amount: Decimal = strawberry.field(description="Positive into the portfolio, negative out of it.")
    balance: Decimal = strawberry.field(description="The cash balance after this movement, in timestamp order.")
    trade_id: str | None = strawberry.field(description="The trade a TRADE or FEE movement belongs to.")
    note: str | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CashMovement:
        return cls(**{name: row[name] for name in CashMovement.__annotations__})
