"""A prediction stored under an earlier feature set (core14-v3: close_location and
spread_pct, retired by core14-v4) keeps its reasons, and the client reads each input by
its label, as the current inputs are read (models/features.py `feature_label`), through
the views the API serves: never a bare registry name such as `close_location`."""

from __future__ import annotations

from datetime import UTC, date, datetime

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from views.instrument import latest_predictions, predictions_between

DAY = date(2026, 11, 20)
V3_REASONS = {
    "base_value": 0.01,
    "top": [
        {"feature": "close_location", "contribution": 0.03},
        {"feature": "rsi_14", "contribution": -0.02},
        {"feature": "spread_pct", "contribution": 0.01},
    ],
    "missing": ["spread_pct", "momentum_20"],
}
SERVED_INPUTS = [
    {"input": "Close in the day's range", "contribution": 0.03},
    {"input": "RSI (14 days)", "contribution": -0.02},
    {"input": "Closing spread", "contribution": 0.01},
]


def test_a_prediction_stored_under_an_earlier_input_set_names_its_inputs_by_their_labels(settings: Settings) -> None:
    engine = service_engine(settings)
    row = {"symbol": "OLD", "trading_date": DAY, "model_id": "m-v3", "horizon_days": 5, "score": 55.0}
    with engine.begin() as conn:
        append_history(
            conn, tables.predictions, [row | {"raw_score": 0.05, "reasons": V3_REASONS}], recorded_at=datetime.now(UTC)
        )
    with engine.connect() as conn:
        latest = latest_predictions(conn, ["OLD"])["OLD"]
        (between,) = predictions_between(conn, ["OLD"], DAY, DAY)["OLD"]
    for served in (latest.reasons, between.reasons):
        assert served is not None
        assert served["inputs"] == SERVED_INPUTS
        assert served["missing_inputs"] == ["Closing spread", "Momentum, 20 days"]
        assert served["other_inputs"] == 0.02  # 0.05 - (0.01 + 0.03 - 0.02 + 0.01): still adds up
