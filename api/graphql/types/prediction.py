from __future__ import annotations

from datetime import date
from typing import Protocol

import strawberry
from strawberry.types import Info

from api.graphql.loaders import loaded
from api.graphql.types.enums import Action, Tercile, optional
from api.graphql.types.reasons import PredictionReasons
from api.schemas.market import PREDICTION_FIELDS
from desk import ServedPrediction


@strawberry.type(description="The two-layer model's output for one instrument and trading day.")
class Prediction:
    # A served prediction (models/scoring.py `ServedPrediction`), field for field in its order:
    # its `p_up` is `probability_up` here, its `layer1_p_up` `layer1_probability`
    # (tests/api/test_shapes.py).
    symbol: str
    trading_date: date
    model_id: str
    horizon_days: int = strawberry.field(description="Trading days the prediction looks ahead.")
    score: float | None = strawberry.field(description=PREDICTION_FIELDS["score"])
    action: Action | None
    weight: float | None = strawberry.field(description=PREDICTION_FIELDS["weight"])
    tercile: Tercile | None
    predicted_return: float | None = strawberry.field(description=PREDICTION_FIELDS["predicted_return"])
    probability_up: float | None = strawberry.field(
        description="Layer 2's calibrated probability that the name beats the equal-weighted liquid universe over "
        "the horizon (the Score over 100)."
    )
    layer1_probability: float | None = strawberry.field(
        description="The foundation model's P(close rises over the horizon), one of the 14 inputs."
    )
    layer1_backend: str | None = strawberry.field(
        description="Foundation-model backend; `fallback-...` names the labelled fallback."
    )
    held_edge: float | None = strawberry.field(description=PREDICTION_FIELDS["held_edge"])
    round_trip_cost: float | None = strawberry.field(description=PREDICTION_FIELDS["round_trip_cost"])
    decision_reason: str | None = strawberry.field(description=PREDICTION_FIELDS["decision_reason"])
    reasons: PredictionReasons | None = strawberry.field(
        description=(
            "The three inputs that moved this prediction most, with their contributions to the raw score and the base "
            "value; null when the prediction has none (stored before migration 0015)."
        )
    )

    @classmethod
    def from_row(cls, row: ServedPrediction) -> Prediction:
        """From the served prediction the views hand over (views/instrument.py)."""
        return cls(
            symbol=row.symbol,
            trading_date=row.trading_date,
            model_id=row.model_id,
            horizon_days=row.horizon_days,
            score=row.score,
            action=optional(Action, row.action),
            weight=row.weight,
            tercile=optional(Tercile, row.tercile),
            predicted_return=row.predicted_return,
            probability_up=row.p_up,
            layer1_probability=row.layer1_p_up,
            layer1_backend=row.layer1_backend,
            held_edge=row.held_edge,
            round_trip_cost=row.round_trip_cost,
            decision_reason=row.decision_reason,
            reasons=PredictionReasons.from_served(row.reasons),
        )


class Listed(Protocol):
    """A type that names one instrument by its symbol (an Instrument, a Position)."""

    symbol: str


async def latest_prediction_of(root: Listed, info: Info) -> Prediction | None:
    """The prediction of the latest scored day for `root`'s instrument, batched across a list
    (loaders.latest_prediction): one resolver for every type that carries a symbol, declared
    on each as `strawberry.field(resolver=latest_prediction_of, ...)`."""
    return await loaded(info.context.loaders.latest_prediction, root.symbol, Prediction.from_row)
