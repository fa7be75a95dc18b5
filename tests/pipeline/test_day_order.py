"""T1 runs the delivered days in date order: the AI book executes its days in order, so a
later day traded first left the earlier one refused at t1_trade for good. The pre-flight
refuses a later day while an earlier delivered one is owed, and a T1 run started by T0's
deliveries takes the earliest owed day."""

from datetime import UTC, date, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest

from market.clock import default_calendar
from market.errors import NotReadyError
from market.settings import Settings
from pipeline.preflight import check_delivery
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.pipeline.test_runner import _ran

FRIDAY, MONDAY = date(2026, 11, 20), date(2026, 11, 23)


def _delivered(settings: Settings, day: date, status: str = "COMPLETE", source: str = "exchange") -> None:
    """A `deliveries` row for `day`, as T0's scrape or `marketintel backfill` stores it."""
    row = {"trading_date": day, "status": status, "source": source, "checksum": f"{day}:{status}", "row_count": 0}
    with service_engine(settings).begin() as conn:
        append_history(conn, tables.deliveries, [{**row, "manifest": {}}])


def _scraped(settings: Settings, day: date) -> None:
    """T0's scrape of `day`: its COMPLETE delivery and its succeeded stage run."""
    _delivered(settings, day)
    _ran(settings, day, {"t0_scrape": "SUCCEEDED"})


def test_preflight_refuses_a_later_day_while_an_earlier_delivered_day_is_untraded(settings: Settings) -> None:
    """`scrape --date 2026-11-20; run-day --date 2026-11-23` traded Monday, then Friday's
    run-day failed at t1_trade for good. Monday's pre-flight now names Friday, and lets
    Monday through once Friday traded."""
    engine = service_engine(settings)
    _scraped(settings, FRIDAY)
    _scraped(settings, MONDAY)
    with pytest.raises(NotReadyError, match="T1 for 2026-11-23 waits for 2026-11-20: T0 delivered it") as refused:
        check_delivery(engine, MONDAY, default_calendar())
    assert "marketintel run-day --date 2026-11-20" in refused.value.detail
    _ran(settings, FRIDAY, {"t1_trade": "FAILED"})  # a failed trade is still owed
    with pytest.raises(NotReadyError, match="waits for 2026-11-20"):
        check_delivery(engine, MONDAY, default_calendar())
    _ran(settings, FRIDAY, {"t1_trade": "SUCCEEDED"})
    assert (
        check_delivery(engine, MONDAY, default_calendar())["active_instruments"] == 0
    )  # on to the day's own checks: it passes


def test_a_day_the_ai_book_can_no_longer_trade_does_not_hold_later_days(settings: Settings) -> None:
    """A delivered day at or before the book's latest executed day (the bootstrap's replay,
    or a day traded before this rule) can never be traded: it owes nothing."""
    from portfolio.ledger import AI_PORTFOLIO, ensure_portfolio

    _scraped(settings, FRIDAY)
    with service_engine(settings).begin() as conn:
        ensure_portfolio(conn, AI_PORTFOLIO, "AI")
        money = {"cash": Decimal("1000000"), "market_value": Decimal("0"), "liquid_equity": Decimal("1000000")}
        row = {"portfolio_id": AI_PORTFOLIO, "trading_date": FRIDAY, "summary": {}, **money}
        append_history(conn, tables.portfolio_days, [row])
    with pytest.raises(NotReadyError, match="no T0 delivery for 2026-11-23"):
        check_delivery(service_engine(settings), MONDAY, default_calendar())


def test_a_day_delivered_by_backfill_is_owed_like_a_scraped_one(settings: Settings) -> None:
    """`marketintel backfill` delivers days without a t0_scrape stage run: T1 for a later day
    traded past them, and orders decided on an earlier day filled at a later session. The
    delivered days now come from `deliveries` (the latest COMPLETE) for every path."""
    from market.errors import StageFailedError
    from pipeline.runner import run_stage

    _executed(settings, date(2026, 11, 18))
    _delivered(settings, date(2026, 11, 19), status="FAILED")  # not delivered whole: not owed
    _delivered(settings, FRIDAY, source="simulated")  # a backfilled day
    _scraped(settings, MONDAY)
    with pytest.raises(StageFailedError, match="T1 for 2026-11-23 waits for 2026-11-20: T0 delivered it"):
        run_stage("t1_preflight", MONDAY, settings=settings)
    _delivered(settings, FRIDAY, status="FAILED")  # its latest delivery failed: no longer owed, not delivered either
    with pytest.raises(StageFailedError, match=r"waits for 2026-11-19 \(and 1 later trading day before it\)"):
        run_stage("t1_preflight", MONDAY, settings=settings)
    _executed(settings, FRIDAY)  # both settled (traded once delivered): on to Monday's own checks
    assert run_stage("t1_preflight", MONDAY, settings=settings).status == "SUCCEEDED"


def test_t1_waits_for_a_trading_day_t0_never_delivered(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """T0 delivered nothing from Wednesday to Friday (each of its tries failed), then scraped
    Monday: T1 traded Monday as if the book's last day, Tuesday, were the session before, and
    the three days could never be traded once they came. The pre-flight names the first
    missing day and both fixes, and passes once each day is delivered and traded or declared
    an unscheduled closure (MARKETINTEL_EXCHANGE_CLOSURES, which the calendar then skips)."""
    from market.settings import get_settings

    engine = service_engine(settings)
    _executed(settings, date(2026, 11, 17))
    _scraped(settings, MONDAY)
    with pytest.raises(NotReadyError) as refused:
        check_delivery(engine, MONDAY, default_calendar())
    said = refused.value.detail
    assert "T1 for 2026-11-23 waits for 2026-11-18 (and 2 later trading days before it)" in said
    assert "`marketintel scrape --date 2026-11-18`" in said and "MARKETINTEL_EXCHANGE_CLOSURES" in said
    _delivered(settings, date(2026, 11, 18))
    _executed(settings, date(2026, 11, 18))
    with pytest.raises(NotReadyError, match="waits for 2026-11-19 \\(and 1 later"):
        check_delivery(engine, MONDAY, default_calendar())
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_CLOSURES", '["2026-11-19", "2026-11-20"]')
    get_settings.cache_clear()
    calendar = default_calendar()
    assert calendar.closed_reason(FRIDAY) == "2026-11-20 is an exchange closure (MARKETINTEL_EXCHANGE_CLOSURES)"
    assert calendar.previous_trading_day(MONDAY) == date(2026, 11, 18)
    assert check_delivery(engine, MONDAY, calendar)["active_instruments"] == 0  # Monday's own checks: it passes


def _executed(settings: Settings, day: date) -> None:
    """A portfolio_days row of the AI book for `day`: the book executed it."""
    from portfolio.ledger import AI_PORTFOLIO, ensure_portfolio

    with service_engine(settings).begin() as conn:
        ensure_portfolio(conn, AI_PORTFOLIO, "AI")
        money = {"cash": Decimal("1000000"), "market_value": Decimal("0"), "liquid_equity": Decimal("1000000")}
        row = {"portfolio_id": AI_PORTFOLIO, "trading_date": day, "summary": {}, **money}
        append_history(conn, tables.portfolio_days, [row])


def test_t1_refuses_a_day_before_the_books_latest_executed_day_before_it_writes(settings: Settings) -> None:
    """T1 for a day the AI book never executed, before its latest executed day, scored,
    analysed and notified it, then failed at t1_trade. The pre-flight now refuses it, names
    the book's latest day and says it can only be re-scored; an executed day may run again."""
    from market.errors import StageFailedError
    from pipeline.runner import run_stage
    from store.history import current_rows

    _executed(settings, MONDAY)
    with pytest.raises(StageFailedError) as refused:
        run_stage("t1_preflight", FRIDAY, settings=settings)
    assert "T1 for 2026-11-20 cannot trade it: the AI book has executed 2026-11-23" in refused.value.detail
    assert "can only be re-scored (`marketintel stage run t1_predict --date 2026-11-20`)" in refused.value.detail
    with pytest.raises(StageFailedError, match="no T0 delivery for 2026-11-23"):  # the executed day: its own checks
        run_stage("t1_preflight", MONDAY, settings=settings)
    with service_engine(settings).connect() as conn:
        assert not current_rows(conn, tables.predictions) and not current_rows(conn, tables.analyses)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_t1_started_by_several_deliveries_runs_the_earliest_owed_day(
    settings: Settings, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture
) -> None:
    """T0 delivered Friday and Monday before T1 ran: the asset run took Monday and logged
    "re-run the others", which then failed at t1_trade. It takes Friday now; once Friday
    traded, the next run started by a delivery takes Monday."""
    from pipeline.airflow_plugin import T0_DELIVERY
    from pipeline.airflow_tasks import trading_date_from_context

    def event(day: date, hour: int) -> SimpleNamespace:
        at = datetime(2026, 11, 23, hour, tzinfo=UTC)
        return SimpleNamespace(timestamp=at, extra={"trading_date": day.isoformat(), "status": "SUCCEEDED"})

    both = {"params": {}, "triggering_asset_events": {T0_DELIVERY: [event(FRIDAY, 14), event(MONDAY, 21)]}}
    monday_only = {"params": {}, "triggering_asset_events": {T0_DELIVERY: [event(MONDAY, 21)]}}
    _scraped(settings, FRIDAY)
    _scraped(settings, MONDAY)
    with caplog.at_level("WARNING", logger="pipeline.airflow_tasks"):
        assert trading_date_from_context(both) == FRIDAY
    logged = caplog.text + capsys.readouterr().out  # structlog's console, once logging is configured
    assert "running 2026-11-20; the next run started by a delivery takes the next of 2026-11-23" in logged
    assert trading_date_from_context(monday_only) == FRIDAY  # Friday's event was consumed; it is still owed
    _ran(settings, FRIDAY, {"t1_trade": "SUCCEEDED"})
    assert trading_date_from_context(monday_only) == MONDAY
    _ran(settings, MONDAY, {"t1_trade": "SUCCEEDED"})
    assert trading_date_from_context(both) == MONDAY  # nothing owed: a correction runs the latest delivered day
