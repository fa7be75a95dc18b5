from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import strawberry

from api.graphql.scalars import Shares
from desk import PlacedTrade


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
    def from_placed(cls, placed: PlacedTrade) -> TradePlaced:
        """The API's fields of the one declaration (portfolio/trading.py `PlacedTrade`), as
        typed values: a date is a date (the JSON form's text made the Date scalar fail after
        the trade was booked)."""
        return cls(**{name: getattr(placed, name) for name in PlacedTrade.api_fields()})
