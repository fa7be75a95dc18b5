from __future__ import annotations

from decimal import Decimal

import strawberry
from strawberry.scalars import JSON

from api.graphql.types.derived import document, printed
from api.graphql.types.position import Position
from desk import domain


@strawberry.type(
    description="An open position of the autonomous AI portfolio with the rationale of the trade that opened it."
)
class AIPosition(Position):
    direction: str = strawberry.field(description="LONG: the AI portfolio never sells short.")
    entered_as: str | None = strawberry.field(
        description="What the opening buy entered as: slot (one of the mandate's slots) or reserve (capacity held "
        "the slots below their size, so the next-ranked eligible name took what was uninvested); null for a "
        "position opened before this was recorded."
    )
    rationale: JSON = document(
        domain.Rationale, "Why the executor bought: score, gates, flags, limits, bound_by, model."
    )
    timestamp: str = strawberry.field(description="Exchange time of the opening trade, ISO 8601 without offset.")

    @classmethod
    def from_row(cls, row: domain.AIPosition, equity: Decimal) -> AIPosition:
        """views/portfolio.py `ai_positions`' row: a valued position's fields and the opening
        trade's, its rationale printed by its declared type."""
        names = [name for _, name, _ in Position.__derived_from__]
        weight = round(float(row["market_value"] / equity), 6) if equity > 0 else 0.0
        rationale = printed(cls, "rationale", row["rationale"])
        return cls(
            **{n: row[n] for n in names},
            direction=row["direction"],
            entered_as=row["entered_as"],
            rationale=rationale,
            timestamp=row["timestamp"],
            weight=weight,
        )
