"""The validation record: the model's walk-forward, out-of-sample track record over the
history that is in the store before the first live day.

A new deployment has years (or, on the simulator, months) of history but no live
predictions, so it has no record to show. `build_validation_record` (pipeline/validation.py)
runs the same walk-forward the benchmark runs (models/walkforward.py: expanding window,
retrain every 5 trading days with a warm start, full refit every 120, purge and embargo)
over the stored prices and sentiment, and stores:

- every out-of-sample prediction, with the Score, Action, Weight and Tercile the day's
  decision rules give (models/decisions.py), in `validation_predictions`;
- every walk-forward model in `model_runs` (kind `validation`: training window, rows,
  parameters, warm-start parent, layer-1 backend; boosters are not kept, a re-run
  rebuilds them bit for bit);
- the record's metrics (models/metrics.py: each beside its base rate and baselines) in
  `model_metrics` under model_id `validation`, scope `validation:<first>:<last>`.

Period: the last `days` trading days up to `end` (the day before the first live
prediction, or the latest priced day), after at least `min_train_days` trading days of
training history; on a short history the period shrinks rather than training on less.
Layer 1 over history is the empirical fallback (`fallback-empirical-v2`, models/layer1.py): running the
foundation model over every past day is the cost a record must not need, and the live
model trains on the same fallback values for its history rows. Everything is seeded
and single-threaded, so the same history gives the same record bit for bit, and
`append_history` makes a re-run insert nothing.

No look-ahead: a prediction for day D uses features of days <= D and a model trained on
labels known before the first day of D's 5-day block, less the embargo; changing any price
after D leaves it unchanged (tests/models/test_validation.py checks this bit for bit).

This module computes and opens no connection: the record's rows (`prediction_rows`,
`model_rows`, `metric_rows`) are built here, and pipeline/validation.py reads the history
(store/panels.py), runs the walk-forward here and appends them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TypedDict

import pandas as pd

from models.decisions import DEFAULT_FEE_RATE, decide, prediction_columns
from models.features import FEATURE_NAMES
from models.walkforward import WalkForwardConfig, WalkForwardResult, run_params, walk_forward

RECORD = "validation"  # model_metrics.model_id and model_runs.kind of the validation record
DEFAULT_DAYS = 250
DEFAULT_MIN_TRAIN_DAYS = 120


class EvaluatedMetric(TypedDict):
    """One metric of the record as models/metrics.py `evaluate` gives it."""

    value: float | None
    base_rate: float | None
    sample_size: int
    baselines: dict[str, float | None]


@dataclass(frozen=True)
class ValidationRecord:
    first: date | None
    last: date | None
    predictions: int
    models: int
    inserted: dict[str, int]
    metrics: dict[str, EvaluatedMetric]
    seconds: float
    reason: str | None = None


def plan(dates: list[date], days: int, min_train_days: int) -> int | None:
    """Index of the record's first day among `dates`, or None when the history is too short."""
    first = max(min_train_days, len(dates) - days)
    return first if first < len(dates) else None


def run_walk_forward(
    panel: pd.DataFrame, end: date, horizon: int, days: int, min_train_days: int, fee_rate: float = DEFAULT_FEE_RATE
) -> tuple[WalkForwardResult, pd.DataFrame] | None:
    """The walk-forward over `panel` (rows up to `end`) and its decided predictions (at
    the fee schedule's rate per side, `fee_rate`)."""
    panel = panel[panel["date"] <= end]
    dates = sorted(panel["date"].unique())
    first = plan(dates, days, min_train_days)
    if first is None:
        return None
    config = WalkForwardConfig(
        horizon=horizon, min_train_days=min_train_days, first_test_date=dates[first], explain=True
    )
    result = walk_forward(panel, config)
    if result.predictions.empty:
        return None
    return result, decide(result.predictions.reset_index(drop=True), fee_rate=fee_rate, horizon=horizon)


def model_ids(result: WalkForwardResult, horizon: int) -> list[str]:
    return [f"wf-{m.block_start.isoformat()}-h{horizon}-{'warm' if m.warm_start else 'full'}" for m in result.models]


def _whole(value: object) -> int | None:
    """A class label or None: a walk-forward too short to calibrate has no `predicted_class`
    column at all (`marketintel demo --days 135` stopped on it)."""
    return None if value is None or pd.isna(value) else int(value)  # type: ignore[arg-type]


def prediction_rows(decided: pd.DataFrame, horizon: int, backend: str) -> list[dict]:
    """The record's decided predictions as `validation_predictions` rows."""
    return [
        {
            "symbol": r.symbol,
            "trading_date": r.date,
            "model_id": r.model_id,
            "horizon_days": horizon,
            "layer1_p_up": None if pd.isna(r.layer1_p_up) else float(r.layer1_p_up),
            "layer1_backend": backend,
            "calibration_rows": int(r.calibration_rows),
            "reasons": getattr(r, "reasons", None),
            "predicted_class": _whole(getattr(r, "predicted_class", None)),
            **prediction_columns(r),
        }
        for r in decided.itertuples()
    ]


def model_rows(
    result: WalkForwardResult, ids: list[str], history_start: date, horizon: int, backend: str
) -> list[dict]:
    """The walk-forward's models as `model_runs` rows (kind `validation`, no artifact)."""
    config = WalkForwardConfig(horizon=horizon)  # run_walk_forward's recipe (defaults)
    rows = []
    for i, (model, model_id) in enumerate(zip(result.models, ids)):
        rows.append(
            {
                "model_id": model_id,
                "kind": RECORD,
                "parent_model_id": ids[i - 1] if model.warm_start else None,
                "train_start": history_start,
                "train_end": model.train_end,
                "horizon_days": horizon,
                "layer1_backend": backend,
                "warm_start": model.warm_start,
                "training_rows": model.training_rows,
                "feature_names": FEATURE_NAMES,
                "params": run_params(model.params, config),
                "artifact_path": None,
            }
        )
    return rows


def metric_rows(record: ValidationRecord, backend: str, horizon: int) -> list[dict]:
    """The record's metrics as `model_metrics` rows under model_id `validation`, scope
    `validation:<first>:<last>`, each with its baselines and the record's period."""
    first, last = record.first, record.last
    if first is None or last is None:
        return []
    scope = f"{RECORD}:{first.isoformat()}:{last.isoformat()}"
    context = {
        "period_start": first.isoformat(),
        "period_end": last.isoformat(),
        "models": record.models,
        "layer1_backend": backend,
        "horizon_days": horizon,
    }
    return [
        {
            "model_id": RECORD,
            "scope": scope,
            "metric": name,
            "value": m["value"],
            "base_rate": m["base_rate"],
            "sample_size": m["sample_size"],
            "detail": {"baselines": m["baselines"], **context},
        }
        for name, m in record.metrics.items()
    ]
