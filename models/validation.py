"""The validation record: the model's walk-forward, out-of-sample track record over the
history that is in the store before the first live day.

A new deployment has years (or, on the simulator, months) of history but no live
predictions, so it has no record to show. `build_validation_record` runs the same
walk-forward the benchmark runs (models/walkforward.py: expanding window, retrain every 5
trading days with a warm start, full refit every 120, purge and embargo) over the stored
prices and sentiment, and stores:

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
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import pandas as pd
from sqlalchemy import Connection, func, select

from models.dataset import build_panel
from models.decisions import DEFAULT_FEE_RATE, HORIZON, decide, prediction_columns
from models.features import FEATURE_NAMES
from models.layer1 import EmpiricalFallback
from models.metrics import evaluate
from models.scoring import sentiment_inputs
from models.sentiment.composite import METHOD
from models.walkforward import WalkForwardConfig, WalkForwardResult, run_params, walk_forward
from store import tables
from store.history import append_history, current_rows
from store.panels import price_panel, sentiment_composites

RECORD = "validation"  # model_metrics.model_id and model_runs.kind of the validation record
DEFAULT_DAYS = 250
DEFAULT_MIN_TRAIN_DAYS = 120


@dataclass(frozen=True)
class ValidationRecord:
    first: date | None
    last: date | None
    predictions: int
    models: int
    inserted: dict[str, int]
    metrics: dict[str, Any]
    seconds: float
    reason: str | None = None


def first_live_day(conn: Connection) -> date | None:
    return conn.execute(select(func.min(tables.predictions.c.trading_date))).scalar()


def record_end(conn: Connection) -> date | None:
    """The last day the validation record may cover: the day before the first live
    prediction (the live record starts there), else the latest priced day."""
    p = tables.eod_prices.c
    live = first_live_day(conn)
    query = select(func.max(p.trading_date))
    if live is not None:
        query = query.where(p.trading_date < live)
    return conn.execute(query).scalar()


def history_panel(conn: Connection, end: date, horizon: int) -> pd.DataFrame:
    """The modelling panel of every stored day up to `end`, layer 1 = the empirical fallback."""
    prices = price_panel(conn, end)
    sentiment, market = sentiment_inputs(sentiment_composites(conn, end, METHOD))
    return build_panel(prices, horizon, sentiment, market, layer1=None)


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


def build_validation_record(
    conn: Connection,
    end: date | None = None,
    horizon: int = HORIZON,
    days: int = DEFAULT_DAYS,
    min_train_days: int = DEFAULT_MIN_TRAIN_DAYS,
    fee_rate: float = DEFAULT_FEE_RATE,
) -> ValidationRecord:
    """Run the walk-forward over the stored history up to `end` (default `record_end`)
    and append the record (predictions, models, metrics). Idempotent."""
    import time

    started = time.perf_counter()
    limit = record_end(conn)
    end = min(end, limit) if end is not None and limit is not None else limit  # never into the live record
    if end is None:
        return ValidationRecord(None, None, 0, 0, {}, {}, 0.0, "no prices in the store")
    panel = history_panel(conn, end, horizon)
    ran = run_walk_forward(panel, end, horizon, days, min_train_days, fee_rate)
    if ran is None:
        return ValidationRecord(
            None,
            end,
            0,
            0,
            {},
            {},
            time.perf_counter() - started,
            f"fewer than {min_train_days} trading days of history with enough labelled rows",
        )
    result, decided = ran
    ids = model_ids(result, horizon)
    backend = EmpiricalFallback.model_id
    decided["model_id"] = decided["model_index"].map(dict(enumerate(ids)))
    first, last = decided["date"].min(), decided["date"].max()
    inserted = {
        "validation_predictions": _store_predictions(conn, decided, horizon, backend, first, last),
        "model_runs": _store_models(conn, result, ids, panel["date"].min(), horizon, backend),
    }
    metrics = evaluate(decided)
    inserted["model_metrics"] = _store_metrics(conn, metrics, first, last, len(ids), backend, horizon)
    return ValidationRecord(first, last, len(decided), len(ids), inserted, metrics, time.perf_counter() - started)


def _whole(value: object) -> int | None:
    """A class label or None: a walk-forward too short to calibrate has no `predicted_class`
    column at all (`marketintel demo --days 135` stopped on it)."""
    return None if value is None or pd.isna(value) else int(value)  # type: ignore[arg-type]


def _store_predictions(
    conn: Connection, decided: pd.DataFrame, horizon: int, backend: str, first: date, last: date
) -> int:
    c = tables.validation_predictions.c
    rows = [
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
    return append_history(
        conn, tables.validation_predictions, rows, scope=[c.trading_date >= first, c.trading_date <= last]
    ).inserted


def _store_models(
    conn: Connection, result: WalkForwardResult, ids: list[str], history_start: date, horizon: int, backend: str
) -> int:
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
    return append_history(conn, tables.model_runs, rows).inserted


def _store_metrics(
    conn: Connection, metrics: dict[str, Any], first: date, last: date, models: int, backend: str, horizon: int
) -> int:
    scope = f"{RECORD}:{first.isoformat()}:{last.isoformat()}"
    context = {
        "period_start": first.isoformat(),
        "period_end": last.isoformat(),
        "models": models,
        "layer1_backend": backend,
        "horizon_days": horizon,
    }
    return append_history(
        conn,
        tables.model_metrics,
        [
            {
                "model_id": RECORD,
                "scope": scope,
                "metric": name,
                "value": m["value"],
                "base_rate": m["base_rate"],
                "sample_size": m["sample_size"],
                "detail": {"baselines": m["baselines"], **context},
            }
            for name, m in metrics.items()
        ],
    ).inserted


def stored_record(conn: Connection) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The latest stored validation record: its scope and metric rows by name."""
    rows = current_rows(conn, tables.model_metrics, where=[tables.model_metrics.c.model_id == RECORD])
    if not rows:
        return None, {}
    latest = max(rows, key=lambda r: (r["recorded_at"], r["id"]))["scope"]
    return latest, {r["metric"]: r for r in rows if r["scope"] == latest}


def record_days(conn: Connection, first: date, last: date) -> list[date]:
    """The trading days from `first` to `last` that the validation record has predictions
    for, oldest first."""
    c = tables.validation_predictions.c
    query = select(c.trading_date).where(c.trading_date >= first, c.trading_date <= last).distinct()
    return [d for (d,) in conn.execute(query.order_by(c.trading_date))]
