"""The validation record's shell around models/validation.py: it reads the stored history
up to the record's end (store/panels.py), runs the walk-forward there and appends the
record's predictions, models and metrics (bootstrap's step a, docs/model.md).

`build_validation_record` is idempotent: the record is deterministic and `append_history`
inserts only what differs, so a re-run inserts nothing.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date

import pandas as pd
from sqlalchemy import Connection

from models.dataset import build_panel
from models.decisions import DEFAULT_FEE_RATE, HORIZON
from models.layer1 import EmpiricalFallback
from models.metrics import evaluate
from models.scoring import sentiment_inputs
from models.sentiment.composite import METHOD
from models.validation import (
    DEFAULT_DAYS,
    DEFAULT_MIN_TRAIN_DAYS,
    ValidationRecord,
    metric_rows,
    model_ids,
    model_rows,
    prediction_rows,
    run_walk_forward,
)
from store import tables
from store.history import append_history
from store.panels import price_panel, record_end, sentiment_composites


def history_panel(conn: Connection, end: date, horizon: int) -> pd.DataFrame:
    """The modelling panel of every stored day up to `end`, layer 1 = the empirical fallback."""
    prices = price_panel(conn, end)
    sentiment, market = sentiment_inputs(sentiment_composites(conn, end, METHOD))
    return build_panel(prices, horizon, sentiment, market, layer1=None)


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
    c = tables.validation_predictions.c
    predictions = prediction_rows(decided, horizon, backend)
    inserted = {
        "validation_predictions": append_history(
            conn, tables.validation_predictions, predictions, scope=[c.trading_date >= first, c.trading_date <= last]
        ).inserted,
        "model_runs": append_history(
            conn, tables.model_runs, model_rows(result, ids, panel["date"].min(), horizon, backend)
        ).inserted,
    }
    record = ValidationRecord(first, last, len(decided), len(ids), inserted, evaluate(decided), 0.0)
    metrics = metric_rows(record, backend, horizon)
    inserted["model_metrics"] = append_history(conn, tables.model_metrics, metrics).inserted
    return replace(record, seconds=time.perf_counter() - started)
