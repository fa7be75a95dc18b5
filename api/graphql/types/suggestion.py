from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import strawberry
from strawberry.scalars import JSON

from api.graphql.scalars import Shares
from desk import domain as suggestions  # the domain's Suggestion and its texts, through the desk


@strawberry.type(description="A morning trade suggestion for the caller's portfolio.")
class Suggestion:
    suggestion_id: strawberry.ID
    trading_date: date
    symbol: str
    side: str
    quantity: Shares
    limit_price: Decimal
    fees: Decimal | None = strawberry.field(description=suggestions.SUGGESTION_FEES)
    reason: JSON
    expires_at: datetime
    state: str = strawberry.field(description="PENDING, CONFIRMED, REJECTED or EXPIRED.")
    trade_id: str | None

    @classmethod
    def from_row(cls, row: suggestions.Suggestion) -> Suggestion:
        return cls(**{name: getattr(row, name) for name in cls.__annotations__})
