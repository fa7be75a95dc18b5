"""The model's two out-of-sample records as the API and the reports show them, side by side.

- **validation**: the walk-forward over the history before the first live day
  (models/validation.py): every prediction out of sample, made by a model trained only on
  labels known before its 5-day block; stored once by bootstrapping.
- **live**: from the first live day on, `t1_predict` appends each day the metrics of every
  earlier live prediction whose label is known (models/scoring.py `track_record`, scope
  `live:<date>`).

Each record carries its label, period, prediction and model counts, layer-1 backend and
the same metrics on the model's label (the excess return over `horizon_days`,
market/labels.py; definitions in models/metrics.py): binary, 3-class and movers
accuracy, average error, rank IC (the expected excess's daily Spearman correlation with
the label; sample size in days) and tercile spread (the TOP Ranking Tercile's mean label
minus the BOTTOM's, a fraction of return over the horizon; sample size in days), each
beside its base rate, sample size and baselines, or a reason when it is empty. A record
stored before the rank IC and the tercile spread were measured shows them as null until
`marketintel bootstrap` or the next live day writes them. The top level names the model
that produced the latest live predictions and its layer-1 backend, saying so when that
backend is the fallback.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from models.validation import RECORD
from store import tables
from store.history import current_rows
from store.panels import latest_metrics, latest_model

REPORTED = (
    "binary_accuracy",
    "three_class_accuracy",
    "movers_accuracy",
    "average_error",
    "rank_ic",
    "tercile_spread",
)
LABELS = {
    "validation": "Validation record (walk-forward, out of sample, before the first live day)",
    "live": "Live record (predictions made each trading day, from the first live day)",
}


def performance(conn: Connection) -> dict[str, Any]:
    model = latest_model(conn)
    backend = model["layer1_backend"] if model else None
    return {
        "model_id": model["model_id"] if model else None,
        "trained_through": model["train_end"] if model else None,
        "training_rows": model["training_rows"] if model else None,
        "horizon_days": model["horizon_days"] if model else None,
        "layer1_backend": backend,
        "layer1_is_fallback": bool(backend and backend.startswith("fallback")),
        "validation": validation_record(conn),
        "live": live_record(conn, model),
        "monitor": monitor_state(conn),
    }


MEASURES = {
    "score_drift": "psi_excess: the population stability index of the live Scores against the validation "
    "record's, less the most the record's own windows of that length show",
    "input_psi": "psi_excess: the population stability index of the input over its last {window_days} days "
    "against the validation record's, less the most the record's own windows of that length show",
    "input_tail": "tail_share: the share of the validation record's days whose value was at least as far out "
    "as today's (a market-wide input, or the share of priced names that traded)",
    "live_accuracy": "accuracy: the binary accuracy of the latest live outcomes (P(up) > 0.5 against the label "
    "above zero)",
    "live_brier": "brier: the Brier score of the latest live outcomes' P(up)",
    "live_calibration": "ece: the expected calibration error of the latest live outcomes' P(up) (10 equal-width bins)",
}


def monitor_state(conn: Connection) -> dict[str, Any]:
    """The model monitor's latest day (T1's `t1_monitor`, docs/monitoring.md): the overall
    state (the worst check's) and each check's state, figure, thresholds and since, with
    what the figure measures (`measure`), which way its thresholds run (`worse_when`:
    `above` when a higher figure is worse, `below` when a lower one is, from the thresholds'
    order: the monitor's ALERT threshold lies beyond its WATCH threshold on the worse side)
    and a `note` that reads the check in words (or says why its figure is missing)."""
    m = tables.monitor_checks.c
    day = conn.execute(select(func.max(m.trading_date))).scalar()
    if day is None:
        return {
            "state": None,
            "trading_date": None,
            "checks": [],
            "reason": "the monitor has not run yet: T1's t1_monitor stage checks each trading day",
        }
    order = ["input_drift", "score_drift", "live_accuracy", "live_brier", "live_calibration"]
    rows = sorted(
        current_rows(conn, tables.monitor_checks, where=[m.trading_date == day]),
        key=lambda r: (order.index(r["kind"]) if r["kind"] in order else len(order), r["check_name"]),
    )
    states = [r["state"] for r in rows]
    overall = "ALERT" if "ALERT" in states else "WATCH" if "WATCH" in states else "OK"
    return {
        "state": overall,
        "trading_date": day,
        "reason": None,
        "checks": [_check(r) for r in rows],
    }


def _check(row: dict[str, Any]) -> dict[str, Any]:
    figures = row["figures"] or {}
    worse = _worse_when(row["watch_threshold"], row["alert_threshold"])
    return {
        "check": row["check_name"],
        "kind": row["kind"],
        "state": row["state"],
        "level": row["level"],
        "figure": row["figure"],
        "measure": _measure(row["kind"], figures),
        "watch_threshold": row["watch_threshold"],
        "alert_threshold": row["alert_threshold"],
        "worse_when": worse,
        "since": row["since"],
        "note": figures.get("note") or _reading(row, worse),
    }


def _measure(kind: str, figures: dict[str, Any]) -> str:
    if kind == "input_drift":
        if "reference_days" in figures:
            return MEASURES["input_tail"]
        return MEASURES["input_psi"].format(window_days=figures.get("window_days", "N"))
    return MEASURES.get(kind, kind)


def _worse_when(watch: float | None, alert: float | None) -> str | None:
    if watch is None or alert is None or watch == alert:
        return None
    return "above" if alert > watch else "below"


def _reading(row: dict[str, Any], worse: str | None) -> str:
    """The check in words: its figure against its thresholds and the day's level."""
    if row["figure"] is None or worse is None:
        return f"level {row['level']}, state {row['state']}"
    return (
        f"{row['figure']:.4g}: WATCH {worse} {row['watch_threshold']:.4g}, ALERT {worse} "
        f"{row['alert_threshold']:.4g}; level {row['level']}, state {row['state']}"
    )


def shown_record(perf: dict[str, Any]) -> dict[str, Any]:
    """The record a one-box summary shows: the live record once it has metrics, else the
    validation record (the reports' rule, written once)."""
    live = perf["live"]
    return live if any(live["metrics"].values()) else perf["validation"]


def validation_record(conn: Connection) -> dict[str, Any]:
    scope, latest = latest_metrics(conn, RECORD)
    any_row = next(iter(latest.values()), None)
    detail = any_row["detail"] if any_row else {}
    return _record(
        "validation",
        latest,
        period_start=detail.get("period_start"),
        period_end=detail.get("period_end"),
        evaluated_through=detail.get("period_end"),
        models=detail.get("models"),
        layer1_backend=detail.get("layer1_backend"),
        reason=None
        if scope
        else "no validation record yet: `marketintel bootstrap` (the demo runs it) builds it from the stored history",
    )


def live_record(conn: Connection, model: dict[str, Any] | None) -> dict[str, Any]:
    rows = current_rows(conn, tables.model_metrics, where=[tables.model_metrics.c.model_id == "live"])
    scope = max((r["scope"] for r in rows), default=None)
    latest = {r["metric"]: r for r in rows if r["scope"] == scope}
    p = tables.predictions.c
    first = conn.execute(select(func.min(p.trading_date))).scalar()
    models = conn.execute(select(func.count(func.distinct(p.model_id)))).scalar() or None
    reason = None
    if model is None:
        reason = "no model has been trained yet (t1_predict trains the first one)"
    elif not latest:
        reason = (
            "no prediction has a realised outcome yet; the record starts the trading day after the first scored day"
        )
    return _record(
        "live",
        latest,
        period_start=first.isoformat() if first else None,
        period_end=scope.split(":", 1)[1] if scope else None,
        evaluated_through=scope.split(":", 1)[1] if scope else None,
        models=models,
        layer1_backend=model["layer1_backend"] if model else None,
        reason=reason,
    )


def _record(
    kind: str,
    latest: dict[str, dict[str, Any]],
    *,
    period_start: str | None,
    period_end: str | None,
    evaluated_through: str | None,
    models: int | None,
    layer1_backend: str | None,
    reason: str | None,
) -> dict[str, Any]:
    metrics: dict[str, Any] = {name: _metric(latest[name]) if name in latest else None for name in REPORTED}
    three = latest.get("three_class_accuracy")
    return {
        "record": kind,
        "label": LABELS[kind],
        "period_start": period_start,
        "period_end": period_end,
        "evaluated_through": evaluated_through,
        "predictions": int(three["sample_size"]) if three else 0,
        "models": models,
        "layer1_backend": layer1_backend,
        "metrics": metrics,
        "reason": reason if not latest else None,
    }


def _metric(row: dict[str, Any]) -> dict[str, Any]:
    baselines = (row.get("detail") or {}).get("baselines") or {}
    return {
        "value": row["value"],
        "base_rate": row["base_rate"],
        "sample_size": row["sample_size"],
        "baselines": {k: v for k, v in baselines.items() if v is not None},
    }
