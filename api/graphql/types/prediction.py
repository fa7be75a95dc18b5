from __future__ import annotations

from functools import partial
from typing import Protocol

from strawberry.types import Info

from api.graphql.loaders import loaded
from api.graphql.types.derived import Reshaped, derived, from_domain
from api.graphql.types.enums import Action, Tercile, optional
from api.graphql.types.reasons import PredictionReasons
from desk import ServedPrediction


@derived(
    ServedPrediction,
    "The two-layer model's output for one instrument and trading day.",
    # its `p_up` is `probabilityUp` here, its `layer1_p_up` `layer1Probability`
    renamed={"p_up": "probability_up", "layer1_p_up": "layer1_probability"},
    reshaped={
        "action": Reshaped(Action | None, partial(optional, Action)),
        "tercile": Reshaped(Tercile | None, partial(optional, Tercile)),
        "reasons": Reshaped(PredictionReasons | None, PredictionReasons.from_served),
    },
)
class Prediction:
    """A served prediction (models/scoring.py `ServedPrediction`), field for field in its
    order (derived), the action and tercile as enums, the reasons typed."""

    @classmethod
    def from_row(cls, row: ServedPrediction) -> Prediction:
        """From the served prediction the views hand over (views/instrument.py)."""
        return from_domain(cls, row)


class Listed(Protocol):
    """A type that names one instrument by its symbol (an Instrument, a Position)."""

    symbol: str


async def latest_prediction_of(root: Listed, info: Info) -> Prediction | None:
    """The prediction of the latest scored day for `root`'s instrument, batched across a list
    (loaders.latest_prediction): one resolver for every type that carries a symbol, declared
    on each as `strawberry.field(resolver=latest_prediction_of, ...)`."""
    return await loaded(info.context.loaders.latest_prediction, root.symbol, Prediction.from_row)
