"""A report certifies one state of the store: read while T1 commits its day, every figure
is of the state before the commit (or after it), never half of each, on SQLite and Postgres."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from market.clock import default_calendar
from market.settings import Settings
from portfolio import ai
from reports import generate
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.api.world import HISTORY_DAYS, MONDAY, price_rows, seed_prices
from tests.portfolio.seed import DAY, days_up_to, seed_predictions
from tests.reports.pdf import read
from views import portfolio as portfolio_views

EVENING = datetime(2026, 11, 23, 23, 0, tzinfo=UTC)  # Monday, after T0 delivered its closes
SIGNALS = {
    "LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP", "weight": 0.2},
    "MID": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.2},
}


def test_a_report_read_while_t1_commits_is_of_one_state(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The AI book executed to Friday; Monday's closes and Scores are stored. T1 commits
    Monday's day right after the report has valued the book: on Postgres (READ COMMITTED)
    the track record and equity curve then ran to Monday beside a summary of Friday's book,
    and the certified digest was of a state the store was never in."""
    engine = service_engine(settings)
    seed_prices(engine)
    for day in days_up_to(DAY, 3):
        seed_predictions(engine, day, SIGNALS)
        ai.execute_day(engine, settings, day)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, price_rows([MONDAY], HISTORY_DAYS))
    seed_predictions(engine, MONDAY, SIGNALS)
    before = generate("quant-briefing", engine, settings, default_calendar(), EVENING)
    summary = portfolio_views.ai_summary

    def valued_then_t1_commits(*args, **kwargs):
        read = summary(*args, **kwargs)
        ai.execute_day(engine, settings, MONDAY)
        return read

    monkeypatch.setattr(portfolio_views, "ai_summary", valued_then_t1_commits)
    during = generate("quant-briefing", engine, settings, default_calendar(), EVENING)
    assert during.sha256 == before.sha256, "the digest certifies the state before the commit"
    said = " ".join(read(during.pdf).text.split())
    assert f"Last executed day {DAY.isoformat()}" in said and f"Total return to {DAY.isoformat()}" in said
