from __future__ import annotations

from typing import Any

import strawberry

from api.schemas.market import BASE_VALUE, LISTED_INPUTS, MISSING_INPUTS, OTHER_INPUTS, RAW_SCORE


@strawberry.type(description="One input's signed contribution to a prediction's raw score.")
class ReasonInput:
    input: str = strawberry.field(description="The model input, by its label (one of the 14 features).")
    contribution: float = strawberry.field(
        description=(
            "Its signed contribution to the prediction's raw score, in raw-score units, before calibration (a "
            "predicted daily rank of the label, -0.5 to 0.5: +0.01 is about one percentile point): positive pushes the "
            "Score up, negative down."
        )
    )


@strawberry.type(
    description=(
        "The reasons behind one prediction: LightGBM's own per-prediction contributions of the risk model "
        "(pred_contrib); baseValue plus the listed inputs' contributions plus otherInputs is rawScore."
    )
)
class PredictionReasons:
    base_value: float = strawberry.field(description=BASE_VALUE)
    inputs: list[ReasonInput] = strawberry.field(description=LISTED_INPUTS)
    raw_score: float | None = strawberry.field(default=None, description=RAW_SCORE)
    other_inputs: float | None = strawberry.field(default=None, description=OTHER_INPUTS)
    missing_inputs: list[str] | None = strawberry.field(default=None, description=MISSING_INPUTS)

    @classmethod
    def from_served(cls, served: dict[str, Any] | None) -> PredictionReasons | None:
        """From models.reasons.served's dict (None stays None)."""
        if not served:
            return None
        return cls(
            base_value=served["base_value"],
            inputs=[ReasonInput(**i) for i in served["inputs"]],
            raw_score=served.get("raw_score"),
            other_inputs=served.get("other_inputs"),
            missing_inputs=served.get("missing_inputs"),
        )
