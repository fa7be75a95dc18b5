"""The live record's `evaluated_through` (GET /api/ai/performance, GraphQL, the Briefing's
"Evaluated through") is the last predicted day whose outcome was known when its metrics
were computed, not the day they were computed on: a prediction of day t is labelled by the
close `horizon_days` sessions after t's next session."""

from __future__ import annotations

import pytest

from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import DAY, days_up_to, price_row, seed_predictions
from views.performance import live_record

HORIZON = 5


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_the_live_record_is_evaluated_through_its_last_labelled_day(settings: Settings) -> None:
    engine = service_engine(settings)
    sessions = days_up_to(DAY, 12)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [price_row("AAA", d, 10.0, 100, None, None) for d in sessions])
    for day in sessions[:-1]:
        seed_predictions(engine, day, {"AAA": {"score": 55.0, "action": "HOLD", "tercile": "TOP"}})
    with engine.begin() as conn:
        metric = {"value": 0.6, "base_rate": 0.5, "sample_size": 4, "detail": {"baselines": {}}}
        append_history(
            conn,
            tables.model_metrics,
            [{"model_id": "live", "scope": f"live:{DAY.isoformat()}", "metric": "binary_accuracy", **metric}],
        )
        record = live_record(conn, {"horizon_days": HORIZON, "layer1_backend": "x"})  # type: ignore[arg-type]
    # DAY's close labels the predictions of the day HORIZON + 1 sessions before it, and no later one
    assert record["period_end"] == DAY.isoformat()
    assert record["evaluated_through"] == sessions[-(HORIZON + 2)].isoformat()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_before_its_first_outcome_the_live_record_says_when_that_is_known(settings: Settings) -> None:
    from market.clock import default_calendar

    engine = service_engine(settings)
    seed_predictions(engine, DAY, {"AAA": {"score": 55.0, "action": "HOLD", "tercile": "TOP"}})
    with engine.connect() as conn:
        record = live_record(conn, {"horizon_days": HORIZON, "layer1_backend": "x"})  # type: ignore[arg-type]
    known = default_calendar().add_trading_days(DAY, HORIZON + 1)  # Friday 20 Nov: known Monday 30 Nov
    assert known.isoformat() == "2026-11-30"
    assert record["reason"] == (
        f"no prediction has a realised outcome yet: the first, of {DAY.isoformat()}, is known at the close of "
        f"2026-11-30 ({HORIZON} + 1 sessions later)"
    )
