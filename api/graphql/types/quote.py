from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares
from api.graphql.types.enums import Action, Tercile, optional
from api.graphql.types.reasons import PredictionReasons


@strawberry.type(
    description="An instrument's entry in GET /api/market/latest: the market day's close with its prediction."
)
class Quote:
    trading_date: date = strawberry.field(
        description="Date of the last bar (older than the market day when it did not trade)."
    )
    close: float
    volume: Shares
    change_pct: float | None
    rsi: float | None
    predicted_return: float | None = strawberry.field(
        description=(
            "Predicted return over the horizon, a fraction (0.012 = 1.2%): the median of the calibrated "
            "distribution of the next move, 0 unless a move one way is more likely than not."
        )
    )
    score: float | None
    action: Action | None
    tercile: Tercile | None
    model_id: str | None
    layer1_backend: str | None
    held_edge: float | None = strawberry.field(
        description=(
            "What earlier predictions in the same Score band earned from the next session's close, a fraction."
        )
    )
    round_trip_cost: float | None = strawberry.field(
        description="The name's spread and two brokerage fees, a fraction."
    )
    decision_reason: str | None = strawberry.field(description="Why the Action is what it is (held edge against cost).")
    reasons: PredictionReasons | None = strawberry.field(
        description=(
            "The three inputs that moved this prediction most, with their contributions to the raw score and the base "
            "value; null when the prediction has none."
        )
    )
    reason: str | None = strawberry.field(description="Why the prediction fields are null.")

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Quote:
        return cls(
            **{
                **entry,
                "action": optional(Action, entry["action"]),
                "tercile": optional(Tercile, entry["tercile"]),
                "reasons": PredictionReasons.from_served(entry.get("reasons")),
            }
        )
