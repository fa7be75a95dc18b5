from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.scalars import Shares


@strawberry.type(description="One executed trade of a portfolio.")
class Trade:
    trade_id: str
    trading_date: date
    timestamp: str = strawberry.field(description="Exchange time, ISO 8601 without offset.")
    symbol: str
    side: str = strawberry.field(description="BUY or SELL.")
    quantity: Shares
    price: Decimal
    fees: Decimal
    value: Decimal
    origin: str = strawberry.field(description="MANUAL, AI, SUGGESTION or STATEMENT_SYNC.")
    rationale: JSON

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Trade:
        return cls(**{name: row[name] for name in Trade.__annotations__})
