from __future__ import annotations

from typing import Any

import strawberry


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
        "(pred_contrib); baseValue plus every input's contribution is the raw score."
    )
)
class PredictionReasons:
    base_value: float = strawberry.field(
        description="The model's expected raw score before any input is read (raw-score units)."
    )
    inputs: list[ReasonInput] = strawberry.field(
        description="The three inputs with the largest absolute contribution, largest first."
    )

    @classmethod
    def from_served(cls, served: dict[str, Any] | None) -> PredictionReasons | None:
        """From models.reasons.served's dict (None stays None)."""
        if not served:
            return None
        return cls(base_value=served["base_value"], inputs=[ReasonInput(**i) for i in served["inputs"]])
