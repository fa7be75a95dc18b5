from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares
from api.graphql.types.enums import Action, Tercile, optional
from api.graphql.types.reasons import PredictionReasons
from api.schemas.market import CHANGE_PCT, HALTED_SINCE, PREDICTION_FIELDS


@strawberry.type(
    description="An instrument's entry in GET /api/market/latest: the market day's close with its prediction."
)
class Quote:
    trading_date: date = strawberry.field(
        description="The market day. A ticker without a bar that day is quoted as the day's no-trade row, as the "
        "exchange states an untraded name: its last close on the day's share count, volume 0, change 0.0."
    )
    close: float
    volume: Shares
    halted_since: date | None = strawberry.field(description=HALTED_SINCE)
    change_pct: float | None = strawberry.field(description=CHANGE_PCT)
    rsi_14: float | None = strawberry.field(description=PREDICTION_FIELDS["rsi_14"])
    predicted_return: float | None = strawberry.field(description=PREDICTION_FIELDS["predicted_return"])
    score: float | None = strawberry.field(description=PREDICTION_FIELDS["score"])
    action: Action | None
    weight: float | None = strawberry.field(description=PREDICTION_FIELDS["weight"])
    tercile: Tercile | None
    model_id: str | None
    layer1_backend: str | None
    held_edge: float | None = strawberry.field(description=PREDICTION_FIELDS["held_edge"])
    round_trip_cost: float | None = strawberry.field(description=PREDICTION_FIELDS["round_trip_cost"])
    decision_reason: str | None = strawberry.field(description=PREDICTION_FIELDS["decision_reason"])
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
