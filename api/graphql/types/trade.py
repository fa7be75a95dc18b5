from __future__ import annotations

from datetime import date

import strawberry
from strawberry.scalars import JSON

from api.graphql.scalars import Money, Price, Shares
from api.graphql.types.derived import document, printed
from desk import domain


@strawberry.type(description="One executed trade of a portfolio.")
class Trade:
    trade_id: str
    trading_date: date
    timestamp: str = strawberry.field(description="Exchange time, ISO 8601 without offset.")
    symbol: str
    side: str = strawberry.field(description="BUY or SELL.")
    quantity: Shares
    price: Price
    fees: Money
    value: Money
    origin: str = strawberry.field(description="MANUAL, AI, SUGGESTION or STATEMENT_SYNC.")
    rationale: JSON = document(domain.TradeRationale)

    @classmethod
    def from_row(cls, row: domain.TradeView) -> Trade:
        """views/portfolio.py's trade, its rationale printed by its declared type."""
        fields = {name: row[name] for name in Trade.__annotations__ if name != "rationale"}
        return cls(**fields, rationale=printed(Trade, "rationale", row["rationale"]))
