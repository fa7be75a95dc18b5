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


def test_t2_waits_for_the_previous_session_in_a_store_whose_ai_book_never_executed(settings: Settings) -> None:
    """A fresh store (signals of Friday, the AI book never executed) with Monday's close
    stored and T1 for Monday not run: T2 for Tuesday planned the client's morning from
    Friday's signals, where a store whose book had executed a day refused it. The wait is
    for the previous session's signals, whatever the book's history: refused, nothing
    written; once T1 has scored Monday, T2 plans from Monday."""
    from portfolio.trading import move_cash, open_client_portfolio
    from store.engine import service_engine
    from tests.portfolio.seed import DAY, price_row, seed_long_and_avoid, seed_predictions

    engine = service_engine(settings)
    seed_long_and_avoid(engine)
    monday = world.CALENDAR.next_trading_day(DAY)
    tuesday = world.CALENDAR.next_trading_day(monday)
    acme = open_client_portfolio(engine, "acme")
    move_cash(engine, acme, "100000", now=world.MORNING)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.eod_prices,
            [price_row("LIQ", monday, 50.0, 40_000, 49.9, 50.1)] + [price_row("OUT", monday, 20.0, 40_000, 19.9, 20.1)],
        )
    with pytest.raises(StageFailedError, match="T2 for 2026-11-24 waits for T1 of 2026-11-23"):
        run_stage("t2_suggestions", tuesday, settings=settings)
    with engine.connect() as conn:
        assert suggestions.suggestion_states(conn, acme) == []
    seed_predictions(engine, monday, {"LIQ": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1}})
    result = run_stage("t2_suggestions", tuesday, settings=settings)
    assert result.summary["signals_from"] == monday.isoformat() and result.summary["suggestions"] == 1
