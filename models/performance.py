"""The model's live, out-of-sample record as the API and the reports show it.

`t1_predict` appends, each day, the metrics of every earlier prediction whose label is
known (models/scoring.py `track_record`, scope `live:<date>`): binary, 3-class and movers
accuracy, average error and IC, each with its base rate and sample size. This module
reads the latest of those and names the model and layer-1 backend that produced the
latest predictions, saying so when that backend is the fallback.

Tercile spread: the up-move rate of TOP-tercile predictions minus that of BOTTOM-tercile
ones (days whose close moved), in rate units (0.08 = 8 points); its no-skill base rate is
0 and its sample size counts both terciles' predictions.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from models.scoring import latest_model
from store import tables
from store.history import current_rows

REPORTED = ("binary_accuracy", "three_class_accuracy", "movers_accuracy", "average_error", "information_coefficient")


def performance(conn: Connection) -> dict[str, Any]:
    model = latest_model(conn)
    rows = current_rows(conn, tables.model_metrics, where=[tables.model_metrics.c.model_id == "live"])
    scope = max((r["scope"] for r in rows), default=None)
    latest = {r["metric"]: r for r in rows if r["scope"] == scope}
    metrics = {name: {"value": latest[name]["value"], "base_rate": latest[name]["base_rate"],
                      "sample_size": latest[name]["sample_size"]} if name in latest else None for name in REPORTED}
    metrics["tercile_spread"] = _tercile_spread(latest)
    backend = model["layer1_backend"] if model else None
    reason = None
    if model is None:
        reason = "no model has been trained yet (t1_predict trains the first one)"
    elif not latest:
        reason = "no prediction has a realised outcome yet; the record starts the trading day after the first scored day"
    return {
        "model_id": model["model_id"] if model else None,
        "trained_through": model["train_end"] if model else None,
        "training_rows": model["training_rows"] if model else None,
        "horizon_days": model["horizon_days"] if model else None,
        "layer1_backend": backend,
        "layer1_is_fallback": bool(backend and backend.startswith("fallback")),
        "evaluated_through": scope.split(":", 1)[1] if scope else None,
        "metrics": metrics,
        "reason": reason,
    }


def _tercile_spread(latest: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    top, bottom = latest.get("hit_rate_top"), latest.get("hit_rate_bottom")
    if not top or not bottom or top["value"] is None or bottom["value"] is None:
        return None
    return {"value": round(top["value"] - bottom["value"], 6), "base_rate": 0.0,
            "sample_size": int(top["sample_size"]) + int(bottom["sample_size"])}
