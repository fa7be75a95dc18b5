from __future__ import annotations

from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.types.position import Position


@strawberry.type(
    description="An open position of the autonomous AI portfolio with the rationale of the trade that opened it."
)
class AIPosition(Position):
    direction: str = strawberry.field(description="LONG: the AI portfolio never sells short.")
    rationale: JSON = strawberry.field(
        description="Why the executor bought: score, gates, flags, limits, bound_by, model."
    )
    timestamp: str = strawberry.field(description="Exchange time of the opening trade, ISO 8601 without offset.")

    @classmethod
    def from_row(cls, row: dict[str, Any], equity: Decimal) -> AIPosition:
        fields = {name: row[name] for name in {**Position.__annotations__, **cls.__annotations__} if name != "weight"}
        return cls(**fields, weight=round(float(row["market_value"] / equity), 6) if equity > 0 else 0.0)
