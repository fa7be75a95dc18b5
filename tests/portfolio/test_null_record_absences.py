"""The null record's replay reads each executed day's market as the live book does
(`market_days_over`), which gives a name without a row its last session's day for 60
calendar days. The replay took that day for a row, so a held name whose rows ended counted
no gap until it left those 60 days, and the null books delisted it about 40 sessions after
the live book, or never in a shorter record (docs/portfolio.md, "A name that stops": one
rule, delisted on the same session). The gap counts from the name's last row, as
`stored_absences` counts it for the live book and the positions."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from market.fees import FeeSchedule
from market.settings import Settings
from portfolio.backtest import BacktestResult, PreparedDay, _Replay, carried_forward
from portfolio.book import Mandate
from portfolio.delisting import DelistingRule, stored_absences
from portfolio.market import market_days_over
from portfolio.rails import TRAPPED, exit_state
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import CALENDAR, price_row

RULE = DelistingRule(after_sessions=5)
STOPS_AFTER = 10  # STP has rows on the first 10 sessions only


def _stored(settings: Settings) -> list[date]:
    days = [CALENDAR.add_trading_days(date(2026, 9, 1), i) for i in range(30)]
    rows = [price_row("RUN", d, 20.0, 50_000, 19.9, 20.1) for d in days]
    rows += [price_row("STP", d, 10.0, 50_000, 9.95, 10.05) for d in days[:STOPS_AFTER]]
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.eod_prices, rows)
    return days


def test_the_null_records_replay_delists_a_stopped_name_on_the_live_books_session(settings: Settings) -> None:
    days = _stored(settings)
    with service_engine(settings).connect() as conn:
        markets = market_days_over(conn, days)
        live = {d: stored_absences(conn, d, ["STP"], RULE).get("STP") for d in days}
    prepared = [
        PreparedDay(d, market, {}, None, last_rows)
        for d, (market, last_rows) in zip(days, carried_forward((d, markets[d]) for d in days), strict=True)
    ]
    result = BacktestResult(fills="costed", curve=None, delisting=RULE, starting_cash=0.0)
    replay = _Replay(prepared, FeeSchedule(), Mandate(), "costed", result, Decimal(0), [d.day for d in prepared])
    replay.held = {"STP": 100}
    for number, day in enumerate(days):
        replayed, stored = replay._absences(number).get("STP"), live[day]
        assert (replayed and (replayed.last_row, replayed.sessions, replayed.delisted_on)) == (
            stored and (stored.last_row, stored.sessions, stored.delisted_on)
        ), day
        if number >= STOPS_AFTER:  # a day without a row: TRAPPED alone, not slow by the rows before it
            assert exit_state(prepared[number].market["STP"], 100).flags == (TRAPPED,)
    assert live[days[-1]].delisted_on == days[STOPS_AFTER - 1 + RULE.after_sessions]
