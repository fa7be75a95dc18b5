from __future__ import annotations

from datetime import date
from typing import Any

import strawberry


@strawberry.type(description="An out-of-sample metric next to its base rate and sample size.")
class Metric:
    value: float | None
    base_rate: float | None
    sample_size: int | None


@strawberry.type(description="The model's live out-of-sample record (GET /api/ai/performance).")
class ModelPerformance:
    model_id: str | None
    trained_through: date | None
    training_rows: int | None
    horizon_days: int | None
    layer1_backend: str | None
    layer1_is_fallback: bool
    evaluated_through: str | None
    binary_accuracy: Metric | None
    three_class_accuracy: Metric | None
    movers_accuracy: Metric | None
    average_error: Metric | None
    information_coefficient: Metric | None
    tercile_spread: Metric | None = strawberry.field(
        description="Up-move rate of TOP minus BOTTOM tercile predictions; base rate 0 (no skill).")
    reason: str | None = strawberry.field(description="Why metrics are missing.")

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ModelPerformance:
        metrics = {name: Metric(**value) if value else None for name, value in record["metrics"].items()}
        return cls(**{k: v for k, v in record.items() if k != "metrics"}, **metrics)
