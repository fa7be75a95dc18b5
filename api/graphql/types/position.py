from __future__ import annotations

from dataclasses import fields
from datetime import date
from decimal import Decimal

import strawberry
from strawberry.types import Info

from api.graphql.loaders import loaded
from api.graphql.scalars import Shares
from api.graphql.types.instrument import Instrument
from api.graphql.types.prediction import latest_prediction_of
from desk import PENDING_QUANTITY, PENDING_UNTIL, PositionValue


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
    flags: list[str] = strawberry.field(description="TRAPPED, SLOW_EXIT, HIGH_SPREAD, UNPRICED or DELISTED.")
    pending_quantity: Shares = strawberry.field(description=PENDING_QUANTITY)
    pending_until: date | None = strawberry.field(description=PENDING_UNTIL)

    @classmethod
    def from_value(cls, position: PositionValue, equity: Decimal) -> Position:
        """The valuation's position (views/valuation.py), every field of it, with its share
        of `equity` (tests/api/test_shapes.py holds the two field lists together)."""
        weight = round(float(position.market_value / equity), 6) if equity > 0 else 0.0
        return cls(**{f.name: getattr(position, f.name) for f in fields(position)}, weight=weight)

    @strawberry.field(description="The instrument held.")
    async def instrument(self, info: Info) -> Instrument | None:
        return await loaded(info.context.loaders.instrument, self.symbol, Instrument.from_row)

    latest_prediction = strawberry.field(
        resolver=latest_prediction_of, description="The instrument's prediction on the latest scored day."
    )
