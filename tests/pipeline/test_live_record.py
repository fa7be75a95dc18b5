"""The live record counts what was served: a day re-scored by a later model
(models/scoring.py `served_predictions`, the model recorded last) enters the record's
metrics and its model count once, with the later model's rows, as the API serves it."""

from __future__ import annotations

import pytest

from market.settings import Settings
from models.decisions import HORIZON
from models.layer1 import EmpiricalFallback
from models.scoring import metric_rows
from pipeline.scoring import feature_rows, track_record
from store import tables
from store.history import append_history
from tests.pipeline.test_bootstrap import INSTRUMENTS, _prices, _store
from views.performance import live_record


def _rows(days, symbols, model_id: str) -> list[dict]:
    return [
        {
            "symbol": s,
            "trading_date": d,
            "model_id": model_id,
            "horizon_days": HORIZON,
            "p_up": 0.6,
            "score": 60.0,
            "predicted_return": 0.01,
            "predicted_class": 1,
        }
        for d in days
        for s in symbols
    ]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_rescored_day_counts_once_in_the_live_record_under_the_served_model(settings: Settings) -> None:
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    live, scored = days[-1], days[-12 : -3 - HORIZON]  # labelled by the live day
    symbols = sorted(prices["symbol"].unique())
    with engine.begin() as conn:
        append_history(conn, tables.predictions, _rows(scored, symbols, "risk-a"))
        append_history(conn, tables.predictions, _rows(scored[:1], symbols, "risk-b"))  # a retrain re-scored day one
        append_history(conn, tables.predictions, _rows(days[-2:-1], symbols, "risk-c"))  # not evaluated yet
        record = track_record(conn, live, HORIZON, feature_rows(conn, live, EmpiricalFallback(), HORIZON))
        assert record["metrics"]["three_class_accuracy"]["sample_size"] == len(scored) * INSTRUMENTS
        assert sum(b["predictions"] for b in record["calibration"]) <= len(scored) * INSTRUMENTS
        append_history(conn, tables.model_metrics, metric_rows(record, live))
        shown = live_record(conn, None)
    assert shown["predictions"] == len(scored) * INSTRUMENTS
    # the models that made the record's predictions: risk-a the later days, risk-b the re-scored one
    # (not risk-c, whose day is not evaluated yet)
    assert shown["models"] == 2 and shown["evaluated_through"] == str(scored[-1])


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_model_whose_every_row_was_replaced_is_not_counted(settings: Settings) -> None:
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    symbols = sorted(prices["symbol"].unique())
    with engine.begin() as conn:
        append_history(conn, tables.predictions, _rows(days[-3:-1], symbols, "risk-a"))
        append_history(conn, tables.predictions, _rows(days[-3:-1], symbols, "risk-b"))  # both days re-scored
        shown = live_record(conn, None)
    assert shown["models"] == 1
