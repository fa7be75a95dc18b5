from __future__ import annotations

from decimal import Decimal

import strawberry
from strawberry.types import Info

from api.graphql.loaders import loaded
from api.graphql.types.derived import derived, from_domain
from api.graphql.types.instrument import Instrument
from api.graphql.types.prediction import latest_prediction_of
from desk import PositionValue


@derived(
    PositionValue,
    "An open position valued at the latest close, with its exit flags.",
    before={"weight": "flags"},
)
class Position:
    """views/valuation.py `PositionValue`, every field of it (derived), with its share of
    equity and its relations."""

    weight: float = strawberry.field(description="Share of the portfolio's equity.")

    @classmethod
    def from_value(cls, position: PositionValue, equity: Decimal) -> Position:
        """The valuation's position with its share of `equity`."""
        weight = round(float(position.market_value / equity), 6) if equity > 0 else 0.0
        return from_domain(cls, position, weight=weight)

    @strawberry.field(description="The instrument held.")
    async def instrument(self, info: Info) -> Instrument | None:
        return await loaded(info.context.loaders.instrument, self.symbol, Instrument.from_row)

    latest_prediction = strawberry.field(
        resolver=latest_prediction_of, description="The instrument's prediction on the latest scored day."
    )
