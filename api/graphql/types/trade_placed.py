from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import strawberry

from api.graphql.scalars import Shares


@strawberry.type(description="A manual trade recorded (or, for a retried idempotency key, the first result replayed).")
class TradePlaced:
    trade_id: str
    portfolio_id: str
    trading_date: date
    executed_at: datetime
    symbol: str
    side: str
    quantity: Shares
    price: Decimal
    fees: Decimal
    cash_after: Decimal | None
    replayed: bool

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> TradePlaced:
        return cls(**{name: result.get(name) for name in cls.__annotations__})
