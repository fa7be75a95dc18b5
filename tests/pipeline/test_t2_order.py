"""T2 plans from the previous session's signals, once T1 has closed it: refused while the AI
book has not executed that session, and a set planned from older signals is expired and
replaced when T2 runs again after T1 closed it."""

from __future__ import annotations

import pytest

from market.errors import StageFailedError
from market.settings import Settings
from pipeline.runner import run_stage
from portfolio import ai, suggestions
from store import tables
from store.history import append_history, current_rows
from tests.api import world

MONDAY = world.MONDAY
TUESDAY = world.CALENDAR.next_trading_day(MONDAY)


@pytest.fixture
def seeded(unmade_settings: Settings) -> world.World:
    return world.build(unmade_settings)


def _tuesday(w: world.World) -> dict[str, tuple[str, str | None]]:
    """Acme's suggestions for Tuesday by id: their signals day and state."""
    where = [tables.suggestions.c.suggestion_id == w.pending_suggestion]
    with w.engine.connect() as conn:
        (row,) = current_rows(conn, tables.suggestions, where=where)
        states = suggestions.suggestion_states(conn, row["portfolio_id"])
    return {s.suggestion_id: (s.reason["signals_from"], s.state) for s in states if s.trading_date == TUESDAY}


def test_t2_waits_for_the_previous_session_and_replaces_a_set_planned_from_older_signals(seeded: world.World) -> None:
    w = seeded
    with w.engine.begin() as conn:  # Monday's close is stored; T1 for Monday has not run
        append_history(conn, tables.eod_prices, world.price_rows([MONDAY], world.HISTORY_DAYS))
    with pytest.raises(StageFailedError, match="T2 for 2026-11-24 waits for T1 of 2026-11-23: the AI book has not"):
        run_stage("t2_suggestions", TUESDAY, settings=w.settings)
    assert _tuesday(w) == {}
    # a set planned from Friday's signals (as T2 did before it waited)
    suggestions.generate(w.engine, w.settings, TUESDAY)
    stale = _tuesday(w)
    assert stale and {f for f, _ in stale.values()} == {world.DAY.isoformat()}
    mid = {"score": 80.0, "action": "LONG", "tercile": "TOP", "weight": 0.2, "predicted_return": 0.03}
    world.seed_predictions(w.engine, MONDAY, {"MID": mid})
    ai.execute_day(w.engine, w.settings, MONDAY)  # T1 closes Monday
    result = run_stage("t2_suggestions", TUESDAY, settings=w.settings)
    assert result.summary["signals_from"] == MONDAY.isoformat() and result.summary["replaced"] == len(stale)
    after = _tuesday(w)
    assert {after[sid][1] for sid in stale} == {"EXPIRED"}
    assert {f for sid, (f, state) in after.items() if state == "PENDING"} <= {MONDAY.isoformat()}
    again = run_stage("t2_suggestions", TUESDAY, settings=w.settings)
    assert again.summary["replaced"] == 0 and again.summary["suggestions"] == 0
