from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.schemas.portfolio import EVALUATED_THROUGH, PERIOD_END


@strawberry.type(
    description="A simple rule scored on the same rows as the model (majority, last_move_sign, predict_zero)."
)
class Baseline:
    name: str
    value: float


@strawberry.type(description="An out-of-sample metric next to its base rate, sample size and baselines.")
class Metric:
    value: float | None
    base_rate: float | None
    sample_size: int | None
    baselines: list[Baseline]

    @classmethod
    def from_record(cls, metric: dict[str, Any] | None) -> Metric | None:
        if not metric:
            return None
        return cls(
            value=metric["value"],
            base_rate=metric["base_rate"],
            sample_size=metric["sample_size"],
            baselines=[Baseline(name=k, value=v) for k, v in metric.get("baselines", {}).items()],
        )


@strawberry.type(
    description="One out-of-sample record: `validation` (walk-forward over the history before the first "
    "live day) or `live` (from the first live day)."
)
class PerformanceRecord:
    record: str
    label: str
    period_start: str | None
    period_end: str | None = strawberry.field(description=PERIOD_END)
    evaluated_through: str | None = strawberry.field(description=EVALUATED_THROUGH)
    predictions: int
    models: int | None
    layer1_backend: str | None
    binary_accuracy: Metric | None
    three_class_accuracy: Metric | None
    movers_accuracy: Metric | None
    average_error: Metric | None
    rank_ic: Metric | None = strawberry.field(
        description="Mean daily Spearman correlation of the expected excess with the label; base rate 0 (no "
        "skill), sample in days, baseline: the last move's."
    )
    tercile_spread: Metric | None = strawberry.field(
        description="Mean label of the TOP Ranking Tercile minus the BOTTOM's, a fraction of return over the "
        "horizon; base rate 0 (no skill), sample in days."
    )
    reason: str | None = strawberry.field(description="Why metrics are missing.")

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PerformanceRecord:
        metrics = {name: Metric.from_record(value) for name, value in record["metrics"].items()}
        return cls(**{k: v for k, v in record.items() if k != "metrics"}, **metrics)


@strawberry.type(
    description="One check of the model monitor: its state after persistence, the day's own level, its "
    "figure against its thresholds and the first day of the breach (docs/monitoring.md)."
)
class MonitorCheck:
    check: str
    kind: str
    state: str
    level: str
    figure: float | None
    measure: str = strawberry.field(description="What the figure is, in words (its name first).")
    watch_threshold: float | None
    alert_threshold: float | None
    worse_when: str | None = strawberry.field(
        description="`above` when a higher figure is worse, `below` when a lower one is; null without thresholds."
    )
    since: date | None
    note: str = strawberry.field(description="The check in words, or why its figure is missing.")


@strawberry.type(description="The model monitor's latest day: the worst check's state and every check.")
class ModelMonitor:
    state: str | None
    trading_date: date | None
    checks: list[MonitorCheck]
    reason: str | None
    latest_predicted: date | None = strawberry.field(description="The latest trading day with stored predictions.")
    unmonitored_days: int = strawberry.field(
        description="Trading days with stored predictions after tradingDate (every predicted day before the "
        "monitor's first run): above 0, the state is that old."
    )

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ModelMonitor:
        return cls(**{**record, "checks": [MonitorCheck(**c) for c in record["checks"]]})


@strawberry.type(description="The model's validation and live records side by side (GET /api/ai/performance).")
class ModelPerformance:
    model_id: str | None
    trained_through: date | None
    training_rows: int | None
    horizon_days: int | None
    layer1_backend: str | None
    layer1_is_fallback: bool
    validation: PerformanceRecord
    live: PerformanceRecord
    monitor: ModelMonitor = strawberry.field(description="The model monitor's latest state and figures.")

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ModelPerformance:
        records = {k: PerformanceRecord.from_record(record[k]) for k in ("validation", "live")}
        monitor = ModelMonitor.from_record(record["monitor"])
        return cls(
            **{k: v for k, v in record.items() if k not in records and k != "monitor"}, **records, monitor=monitor
        )
