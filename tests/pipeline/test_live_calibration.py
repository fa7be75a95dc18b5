"""The live stage scores with the model the benchmark measures: its P(up), 3-class
prediction and predicted return come from the rolling calibration on stored out-of-sample
raw scores (models/scoring.py), first the validation record's, then its own; a day
without enough of them is scored uncalibrated and says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from market.clock import default_calendar
from market.settings import Settings
from models import calibration
from models.decisions import HORIZON
from models.layer1 import EmpiricalFallback
from pipeline.scoring import feature_rows, live_calibration, score_day
from pipeline.validation import build_validation_record
from store import tables
from store.history import append_history, current_rows
from tests.pipeline.test_bootstrap import INSTRUMENTS, _prices, _store


def _predictions(conn, day) -> pd.DataFrame:
    rows = current_rows(conn, tables.predictions, where=[tables.predictions.c.trading_date == day])
    return pd.DataFrame(rows).sort_values("symbol").reset_index(drop=True)


def test_the_first_live_day_is_calibrated_on_the_validation_record_with_labels_known_before_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    live = days[-1]
    with engine.begin() as conn:
        record = build_validation_record(conn, end=days[-2], days=80, min_train_days=100)
    assert record.first == days[-81] and record.last == days[-2]

    fitted = []
    original = calibration.Calibration.fit.__func__

    def recording(cls, raw, frame, forward_return):
        fitted.append((len(raw), max(frame["label_end"]), min(frame["date"])))
        return original(cls, raw, frame, forward_return)

    monkeypatch.setattr(calibration.Calibration, "fit", classmethod(recording))
    with engine.begin() as conn:
        result = score_day(conn, settings, live, default_calendar(), EmpiricalFallback(), HORIZON)
        stored = _predictions(conn, live)

    # The window: the record's days whose label (the close HORIZON + 1 sessions later) was
    # known before the live day, less the one-day embargo: the record's first day to the
    # day whose label ends on the live day's third trading day back.
    window_days = days[-81 : -3 - HORIZON]
    assert fitted == [(len(window_days) * INSTRUMENTS, days[-3], days[-81])]
    assert result.calibration_rows == len(window_days) * INSTRUMENTS
    assert len(stored) == INSTRUMENTS and (stored["calibration_rows"] == len(window_days) * INSTRUMENTS).all()
    assert stored["predicted_class"].isin([-1, 0, 1]).all() and stored["raw_score"].notna().all()
    # Calibrated: P(up) is a rising function of the raw score, and not the booster's own.
    ordered = stored.sort_values("raw_score")
    assert ordered["p_up"].is_monotonic_increasing
    assert not np.allclose(stored["p_up"], 1 / (1 + np.exp(-stored["raw_score"])))


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_without_out_of_sample_scores_the_day_is_scored_uncalibrated_and_says_so(settings: Settings) -> None:
    prices = _prices()
    engine = _store(settings, prices)
    live = sorted(prices["date"].unique())[-1]
    with engine.begin() as conn:
        result = score_day(conn, settings, live, default_calendar(), EmpiricalFallback(), 1)
        stored = _predictions(conn, live)
    assert result.calibration_rows == 0 and (stored["calibration_rows"] == 0).all()
    assert stored["predicted_class"].isna().all() and (stored["predicted_return"] == 0).all()
    assert np.allclose(stored["p_up"], 1 / (1 + np.exp(-stored["raw_score"])))  # the booster's own probability
    assert set(stored["action"]) <= {"HOLD", "AVOID"}  # no LONG without a predicted gain


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_served_scores_calibrate_the_live_record_s_before_the_validation_record_s(settings: Settings) -> None:
    """Per day, the served prediction's raw score (models/scoring.served_predictions: the
    model recorded last): the live record's days, the validation record's for the rest."""
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    live = days[-1]
    window = days[-81 : -3 - HORIZON]
    rng = np.random.default_rng(1)
    symbols = sorted(prices["symbol"].unique())

    def rows(model_id: str, centre: float) -> list[dict]:
        return [
            {
                "symbol": s,
                "trading_date": d,
                "model_id": model_id,
                "horizon_days": HORIZON,
                "p_up": 0.5,
                "score": 50.0,
                "raw_score": float(centre + rng.normal()),
            }
            for d in window
            for s in symbols
        ]

    validation, own, rescored = rows("wf-x", -3.0), rows("risk-x", 2.0), rows("risk-y", 7.0)
    half = len(window) // 2 * len(symbols)  # the live record covers whole days
    first_day = [r for r in rescored if r["trading_date"] == window[0]]  # the first day re-scored by a later model
    with engine.begin() as conn:
        append_history(conn, tables.validation_predictions, validation)
        append_history(conn, tables.predictions, own[:half])  # live for the window's first days only
        append_history(conn, tables.predictions, first_day)
        panel = feature_rows(conn, live, EmpiricalFallback(), HORIZON)
        fitted = live_calibration(conn, panel, live, HORIZON)
    own = first_day + own[len(first_day) :]
    used = np.array([r["raw_score"] for r in own[:half]] + [r["raw_score"] for r in validation[half:]])
    assert fitted.rows == len(window) * len(symbols)
    assert fitted.scale == pytest.approx((used.mean(), used.std()))
