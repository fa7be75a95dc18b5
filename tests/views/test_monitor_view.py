"""The model monitor as GET /api/ai/performance, GraphQL, the CLI and the reports show it:
each check says what its figure is, which way its thresholds run and, in words, how it
reads; a check without a figure says why."""

from __future__ import annotations

from datetime import date

import pytest

from api.schemas.portfolio import Performance
from cli.main import monitor_lines
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from views.performance import monitor_state, performance

DAY = date(2026, 11, 20)
ROWS = [
    # a drift figure, worse when higher: ALERT beyond 0.35
    ("input:rsi_14", "input_drift", "WATCH", "WATCH", 0.21, 0.2, 0.35, DAY, {"window_days": 20}),
    # a market-wide input's tail share, worse when lower
    ("input:market_breadth", "input_drift", "OK", "OK", 0.4, 0.05, 0.01, None, {"reference_days": 250}),
    # live accuracy, worse when lower; no figure yet
    ("live_accuracy", "live_accuracy", "OK", "OK", None, None, None, None, {"note": "not enough live outcomes"}),
]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_each_check_says_what_it_measures_and_which_way_is_worse(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.monitor_checks,
            [
                {
                    "trading_date": DAY,
                    "check_name": name,
                    "kind": kind,
                    "level": level,
                    "state": state,
                    "figure": figure,
                    "watch_threshold": watch,
                    "alert_threshold": alert,
                    "since": since,
                    "figures": figures,
                }
                for name, kind, level, state, figure, watch, alert, since, figures in ROWS
            ],
        )
    with engine.connect() as conn:
        state = monitor_state(conn)
        Performance.model_validate(performance(conn))  # the served schema takes it
    checks = {c["check"]: c for c in state["checks"]}
    drift, tail, live = checks["input:rsi_14"], checks["input:market_breadth"], checks["live_accuracy"]
    assert drift["measure"].startswith("psi_excess:") and "last 20 days" in drift["measure"]
    assert tail["measure"].startswith("tail_share:")
    assert live["measure"].startswith("accuracy: the binary accuracy")
    assert (drift["worse_when"], tail["worse_when"], live["worse_when"]) == ("above", "below", None)
    assert drift["note"] == "0.21: WATCH above 0.2, ALERT above 0.35; level WATCH, state WATCH"
    assert live["note"] == "not enough live outcomes"
    assert all(c["note"] for c in state["checks"]), "no check answers a null note"
    lines = monitor_lines(state)
    assert any(
        "input:market_breadth" in line and "tail_share 0.4000 (worse below: watch 0.05" in line for line in lines
    )
    assert any("live_accuracy" in line and line.endswith("accuracy -  not enough live outcomes") for line in lines)
