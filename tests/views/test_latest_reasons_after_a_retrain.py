"""GET /api/market/symbol's `prediction_date` and `reasons` (views/market.py
`latest_reasons`) are of the symbol's latest *served* live prediction. A retrain that
re-scored the symbol's latest day without it (models/scoring.py `served_model`: the model
recorded last serves the day, for every symbol) leaves the symbol an earlier served
prediction, which is the one shown, not nulls as if it had never been scored."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from views.market import day_scores, latest_reasons

DAYS = [date(2026, 11, 19), date(2026, 11, 20)]
AT = datetime(2026, 11, 20, 22, tzinfo=UTC)


def _row(symbol: str, day: date, model: str, contribution: float) -> dict:
    reasons = {"base_value": 0.1, "top": [{"feature": "rsi_14", "contribution": contribution}]}
    return {"symbol": symbol, "trading_date": day, "model_id": model, "horizon_days": 5, "score": 50.0} | {
        "raw_score": 0.1 + contribution,
        "reasons": reasons,
    }


def test_a_symbol_a_retrain_did_not_rescore_shows_its_latest_served_prediction(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        first = [_row(s, d, "m1", 0.01) for d in DAYS for s in ("AAA", "BBB")]
        append_history(conn, tables.predictions, first, recorded_at=AT)
        # m2 re-scored the second day, BBB only: m2 serves that day, AAA has no prediction on it
        append_history(
            conn, tables.predictions, [_row("BBB", DAYS[1], "m2", 0.02)], recorded_at=AT + timedelta(hours=1)
        )
    with engine.connect() as conn:
        aaa, bbb = latest_reasons(conn, "AAA"), latest_reasons(conn, "BBB")
    assert aaa["prediction_date"] == DAYS[0]
    assert aaa["reasons"] is not None and aaa["reasons"]["inputs"] == [{"input": "RSI (14 days)", "contribution": 0.01}]
    assert bbb["prediction_date"] == DAYS[1]
    assert bbb["reasons"] is not None and bbb["reasons"]["inputs"] == [{"input": "RSI (14 days)", "contribution": 0.02}]


def test_a_quote_a_retrain_did_not_rescore_says_so_not_too_little_history(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        first = [_row(s, d, "m1", 0.01) for d in DAYS for s in ("AAA", "BBB")]
        append_history(conn, tables.predictions, first, recorded_at=AT)
        rescored = [_row("BBB", DAYS[1], "m2", 0.02)]
        append_history(conn, tables.predictions, rescored, recorded_at=AT + timedelta(hours=1))
    with engine.connect() as conn:
        scores = day_scores(conn, DAYS[1])
    assert scores.model_id == "m2" and set(scores.predictions) == {"BBB"}
    said = scores.reason("AAA", DAYS[1])
    assert said is not None and "too little history" not in said
    assert "m2" in said and "m1" in said  # which model serves the day, which one scored AAA
    assert "too little history" in str(scores.reason("CCC", DAYS[1]))  # never scored that day: as before
