from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import strawberry
from strawberry.types import Info

from api.graphql.scalars import Shares
from api.graphql.types.instrument import Instrument
from api.graphql.types.prediction import Prediction


@strawberry.type(description="An open position valued at the latest close, with its exit flags.")
class Position:
    symbol: str
    quantity: Shares
    cost_basis: Decimal
    average_cost: Decimal
    purchase_date: date | None
    price: Decimal = strawberry.field(description="Latest close on or before the valuation day.")
    market_value: Decimal
    unrealized_pnl: Decimal
    realized_pnl: Decimal
    weight: float = strawberry.field(description="Share of the portfolio's equity.")
    flags: list[str] = strawberry.field(description="TRAPPED, SLOW_EXIT, HIGH_SPREAD or UNPRICED.")

    @classmethod
    def from_row(cls, row: dict[str, Any], equity: Decimal) -> Position:
        fields = {name: row[name] for name in cls.__annotations__ if name != "weight"}
        return cls(**fields, weight=round(float(row["market_value"] / equity), 6) if equity > 0 else 0.0)

    @strawberry.field(description="The instrument held.")
    async def instrument(self, info: Info) -> Instrument | None:
        row = await info.context.loaders.instrument.load((self.symbol,))
        return Instrument.from_row(row) if row else None

    @strawberry.field(description="The instrument's prediction on the latest scored day.")
    async def latest_prediction(self, info: Info) -> Prediction | None:
        row = await info.context.loaders.latest_prediction.load((self.symbol,))
        return Prediction.from_row(row) if row else None
