"""T0 against the simulator over real HTTP: every injected fault is retried when it is
transient, fails clearly when it is not, never leaves a partial day, and pre-flight then
refuses the day with the reason."""

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path
from threading import Event

import pytest
from sqlalchemy import func, select

from desk.desk import Desk
from ingest import books
from ingest.exchange import delivery
from ingest.exchange.delivery import client_for, deliver_day
from ingest.importers.files import import_path
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite
from market.clock import default_calendar
from market.errors import (
    DeliveryRejectedError,
    IncompletePageError,
    InvalidInputError,
    NotPublishedError,
    NotReadyError,
    SourceUnavailableError,
)
from market.settings import Settings
from pipeline.preflight import check_delivery
from pipeline.serving import serve_in_thread
from portfolio.trading import ManualTrade, move_cash, open_client_portfolio, place_manual_trade
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from tests.portfolio.seed import CALENDAR
from tests.portfolio.test_concurrency import _until_waiting_or_done

DAY = date(2026, 11, 20)
MARKET = SimulatedMarket(seed=7, size=60)


@pytest.fixture
def site() -> SimulatorSite:
    MARKET.day(DAY)  # simulated here (over a second on a loaded machine), not inside a request with a 0.5 s timeout
    return SimulatorSite(MARKET, published_through=DAY)


@pytest.fixture
def exchange(site: SimulatorSite, settings: Settings) -> Iterator[Settings]:
    with serve_in_thread(site.asgi_app()) as url:
        yield settings.model_copy(
            update={
                "exchange_base_url": url,
                "exchange_timeout_seconds": 0.5,
                "exchange_retries": 2,
                "exchange_backoff_seconds": 0.01,
            }
        )


def deliver(settings: Settings, day: date = DAY):
    with client_for(settings) as client:
        return deliver_day(service_engine(settings), settings, day, client)


def count(settings: Settings, table, day: date = DAY) -> int:
    with service_engine(settings).connect() as conn:
        query = select(func.count()).select_from(table)
        if "trading_date" in table.c:
            query = query.where(table.c.trading_date == day)
        return conn.execute(query).scalar_one()


def assert_nothing_stored_and_preflight_refuses(settings: Settings, reason: str) -> None:
    assert count(settings, tables.eod_prices) == 0
    assert count(settings, tables.instruments) == 0
    with pytest.raises(NotReadyError, match=reason):
        check_delivery(service_engine(settings), DAY, default_calendar())


def test_a_clean_day_is_delivered_whole_with_snapshot_and_manifest(exchange: Settings) -> None:
    report = deliver(exchange)
    assert report.status == "COMPLETE"
    assert report.row_counts["MAIN"] + report.row_counts["JUNIOR"] == count(exchange, tables.eod_prices) == 59
    snapshot = Path(report.snapshot_path)
    assert {p.name for p in snapshot.iterdir()} == {
        "trade-quotes.html",
        "fundamentals.html",
        "securities.html",
        "manifest.json",
    }
    with service_engine(exchange).connect() as conn:
        (delivery,) = current_rows(conn, tables.deliveries)
    assert delivery["manifest"]["checksum"] == report.checksum
    assert [s["name"] for s in delivery["manifest"]["sources"]] == ["fundamentals", "securities", "trade_quotes"]
    summary = check_delivery(service_engine(exchange), DAY, default_calendar())
    assert summary["active_instruments"] == 59 and summary["traded"] + summary["no_trade"] == 59


def test_a_snapshot_page_cut_short_by_a_stopped_run_is_written_again(exchange: Settings) -> None:
    """A page an earlier run left half-written (stopped mid-write) was trusted by every later
    run of the day: the delivery's snapshot kept the torn page for good."""
    snapshot = Path(deliver(exchange).snapshot_path)
    whole = (snapshot / "trade-quotes.html").read_bytes()
    (snapshot / "trade-quotes.html").write_bytes(whole[: len(whole) // 2])
    assert Path(deliver(exchange).snapshot_path) == snapshot
    assert (snapshot / "trade-quotes.html").read_bytes() == whole


def test_a_run_stopped_while_writing_its_snapshot_leaves_the_files_as_they_were(
    exchange: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is written again on every run: one stopped half-way left it torn."""
    import os

    snapshot = Path(deliver(exchange).snapshot_path)
    before = {p.name: p.read_bytes() for p in snapshot.iterdir()}

    def stopped(*args) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        deliver(exchange)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in snapshot.iterdir()} == before
    assert json.loads(before["manifest.json"])["status"] == "COMPLETE"


def test_the_same_day_again_adds_nothing(exchange: Settings) -> None:
    deliver(exchange)
    before = {
        t.name: count(exchange, t)
        for t in (tables.eod_prices, tables.deliveries, tables.instruments, tables.fundamentals)
    }
    again = deliver(exchange)
    assert sum(again.inserted.values()) == 0
    assert {
        t.name: count(exchange, t)
        for t in (tables.eod_prices, tables.deliveries, tables.instruments, tables.fundamentals)
    } == before


def test_the_same_day_from_another_address_adds_nothing(exchange: Settings, site: SimulatorSite) -> None:
    """An adversarial run: the same pages scraped from another address (the demo's
    simulator on another port; a mirror, https) stored a second delivery, and with its new
    id every price and bar of the day again. The same content is the same delivery."""
    deliver(exchange)
    tables_counted = (tables.eod_prices, tables.deliveries, tables.instruments, tables.daily_bars)
    before = {t.name: count(exchange, t) for t in tables_counted}
    with serve_in_thread(site.asgi_app()) as other:
        again = deliver(exchange.model_copy(update={"exchange_base_url": other}))
    assert sum(again.inserted.values()) == 0
    assert {t.name: count(exchange, t) for t in tables_counted} == before


def test_different_content_for_a_past_day_is_a_new_version(exchange: Settings, site: SimulatorSite) -> None:
    deliver(exchange)
    first_seen = datetime.now(UTC)
    revised_market = SimulatedMarket(seed=7, size=60, news_signal=0.3)  # same listings, revised prices
    # generated here (over a second on a slow machine), not inside a request with a 0.5 s timeout
    revised_market.day(DAY)
    site.market = revised_market
    revised = deliver(exchange)
    assert revised.inserted["deliveries"] == 1 and revised.inserted["eod_prices"] > 0
    assert count(exchange, tables.eod_prices) == 59 + revised.inserted["eod_prices"]
    with service_engine(exchange).connect() as conn:
        old = {r["symbol"]: r["close"] for r in current_rows(conn, tables.eod_prices, as_of=first_seen)}
        new = {r["symbol"]: r["close"] for r in current_rows(conn, tables.eod_prices)}
    assert old != new
    assert old == {b["symbol"]: b["close"] for b in MARKET.day(DAY).bars}


def test_transient_server_errors_are_retried(exchange: Settings, site: SimulatorSite) -> None:
    site.faults.server_errors = 2
    report = deliver(exchange)
    assert report.status == "COMPLETE" and report.attempts == 5  # 3 pages, one of them on the third try


@pytest.mark.parametrize(
    "fault, value, error, message, refusal",
    [
        pytest.param(
            "server_errors",
            1_000_000,
            SourceUnavailableError,
            "answered 503 on all 3 attempts",
            "is FAILED: .*answered 503",
            id="persistent-server-errors",
        ),
        pytest.param(
            "truncated",
            1_000_000,
            IncompletePageError,
            "truncated .* on all 3 attempts",
            "truncated",
            id="a-page-truncated-every-time",
        ),
        pytest.param(
            "missing_board",
            "JUNIOR",
            IncompletePageError,
            "no JUNIOR board table",
            "no JUNIOR board table",
            id="a-missing-board",
        ),
    ],
)
def test_a_lasting_fault_fails_clearly_and_stores_nothing(
    exchange: Settings,
    site: SimulatorSite,
    fault: str,
    value: object,
    error: type[Exception],
    message: str,
    refusal: str,
) -> None:
    setattr(site.faults, fault, value)
    with pytest.raises(error, match=message):
        deliver(exchange)
    assert_nothing_stored_and_preflight_refuses(exchange, refusal)


def test_a_slow_response_is_retried_and_a_dead_slow_site_fails(exchange: Settings, site: SimulatorSite) -> None:
    site.faults.slow_seconds, site.faults.slow_requests = 1.0, 1
    assert deliver(exchange).status == "COMPLETE"
    site.faults.slow_requests = 1_000_000
    with pytest.raises(SourceUnavailableError, match="timed out"):
        deliver(exchange, date(2026, 11, 19))


def test_a_truncated_page_is_fetched_again(exchange: Settings, site: SimulatorSite) -> None:
    site.faults.truncated = 1
    assert deliver(exchange).status == "COMPLETE"


def test_a_malformed_number_refuses_the_day_and_keeps_the_evidence(exchange: Settings, site: SimulatorSite) -> None:
    site.faults.malformed = {"symbol": "KCB", "column": "close"}
    close = next(b["close"] for b in MARKET.day(DAY).bars if b["symbol"] == "KCB")
    garbled = f"{close:,.2f}".replace(".", ",", 1) + "O"
    with pytest.raises(DeliveryRejectedError, match=rf"KCB\), column 'Close': '{garbled}' is not a number"):
        deliver(exchange)
    assert_nothing_stored_and_preflight_refuses(exchange, "column 'Close'")
    with service_engine(exchange).connect() as conn:
        (failed,) = current_rows(conn, tables.deliveries)
    assert failed["status"] == "FAILED"
    assert garbled in (Path(failed["snapshot_path"]) / "trade-quotes.html").read_text()


def test_the_previous_sessions_page_served_again_is_refused(exchange: Settings, site: SimulatorSite) -> None:
    """The exchange's site puts up the previous session's page again under the new date (the
    NSE crawler's files hold 55 such days): its date is right, every row is yesterday's."""
    before = date(2026, 11, 19)
    assert deliver(exchange, before).status == "COMPLETE"
    site.faults.stale = 1
    with pytest.raises(
        DeliveryRejectedError,
        match="every traded row repeats 2026-11-19's verbatim .*: the previous "
        "session's page served again, not 2026-11-20's",
    ):
        deliver(exchange)
    assert_nothing_stored_and_preflight_refuses_day(exchange, "page served again")
    assert deliver(exchange).status == "COMPLETE"  # the real page, once the site has it
    assert count(exchange, tables.eod_prices) == 59


def assert_nothing_stored_and_preflight_refuses_day(settings: Settings, reason: str) -> None:
    assert count(settings, tables.eod_prices) == 0
    with pytest.raises(NotReadyError, match=reason):
        check_delivery(service_engine(settings), DAY, default_calendar())


def test_a_late_day_is_not_published_yet(exchange: Settings, site: SimulatorSite) -> None:
    site.faults.late = 1
    with pytest.raises(NotPublishedError, match="not published yet"):
        deliver(exchange)
    assert_nothing_stored_and_preflight_refuses(exchange, "not published yet")
    assert deliver(exchange).status == "COMPLETE"  # published later: the next run delivers it
    assert check_delivery(service_engine(exchange), DAY, default_calendar())["active_instruments"] == 59


def test_a_future_day_is_not_published(exchange: Settings) -> None:
    with pytest.raises(NotPublishedError):
        deliver(exchange, date(2026, 11, 23))


def test_a_day_before_the_sites_history_says_why_and_stores_nothing(exchange: Settings, site: SimulatorSite) -> None:
    """A day the site will never publish is not "not published yet" (which tells the
    operator to wait): the site's reason is named, and nothing is stored."""
    before = site.market.calendar.previous_trading_day(site.market.days[0])
    with pytest.raises(
        SourceUnavailableError,
        match=f"has no trade quotes for {before}: Trade quotes start on {site.market.days[0]}",
    ):
        deliver(exchange, before)
    assert count(exchange, tables.eod_prices, before) == 0


def test_a_failed_rerun_does_not_demote_a_complete_day(exchange: Settings, site: SimulatorSite) -> None:
    deliver(exchange)
    site.faults.server_errors = 1_000_000
    with pytest.raises(SourceUnavailableError):
        deliver(exchange)
    assert check_delivery(service_engine(exchange), DAY, default_calendar())["active_instruments"] == 59


def test_preflight_without_any_delivery_names_the_command(settings: Settings) -> None:
    with pytest.raises(
        NotReadyError, match="no T0 delivery for 2026-11-20; run `marketintel scrape --date 2026-11-20`"
    ):
        check_delivery(service_engine(settings), DAY, default_calendar())


def test_preflight_lists_active_instruments_without_a_row(exchange: Settings) -> None:
    deliver(exchange)
    with service_engine(exchange).begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {
                    "symbol": "LATE",
                    "name": "Late Listing",
                    "board": "MAIN",
                    "listed_on": date(2026, 11, 2),
                    "source": "test",
                }
            ],
        )
    with pytest.raises(NotReadyError, match="lacks 1 active instruments: LATE"):
        check_delivery(service_engine(exchange), DAY, default_calendar())


def test_faults_can_be_injected_over_http(site: SimulatorSite) -> None:
    import httpx

    with serve_in_thread(site.asgi_app()) as url:
        plan = httpx.post(f"{url}/_sim/faults", json={"server_errors": 1, "missing_board": "MAIN"})
        assert plan.status_code == 200 and plan.json()["server_errors"] == 1
        assert httpx.get(f"{url}/market/trade-quotes", params={"date": "2026-11-20"}).status_code == 503
        page = httpx.get(f"{url}/market/trade-quotes", params={"date": "2026-11-20"})
        assert page.status_code == 200 and 'data-board="MAIN"' not in page.text and 'data-board="JUNIOR"' in page.text
        assert httpx.post(f"{url}/_sim/faults", json={"no_such_fault": 1}).status_code == 422
        assert httpx.post(f"{url}/_sim/faults", json={}).json()["missing_board"] is None
        assert httpx.get(f"{url}/disclosures/20261120-ISB-results.pdf").content.startswith(b"%PDF")


def test_a_notice_shown_again_on_the_next_page_is_stored_once(exchange: Settings, site: SimulatorSite) -> None:
    """A page that lists the recent notices, not only the day's, would store the same
    dividend under a second ex-date and pay every holder twice: T0 leaves the repeat out
    and says so."""
    ex_date, after = date(2026, 11, 10), date(2026, 11, 11)
    (dividend,) = [n for n in MARKET.day(ex_date).notices if n["kind"] == "DIVIDEND"]
    deliver(exchange, ex_date)
    site.faults.repeated_notices = 1
    report = deliver(exchange, after)
    assert report.status == "COMPLETE"
    assert (
        f"{dividend['symbol']}: DIVIDEND notice repeats the one stored for 2026-11-10 (same amount and detail): "
        "left out, not stored again" in report.warnings
    )
    with service_engine(exchange).connect() as conn:
        stored = current_rows(
            conn,
            tables.corporate_actions,
            where=[
                tables.corporate_actions.c.symbol == dividend["symbol"],
                tables.corporate_actions.c.kind == "DIVIDEND",
            ],
        )
    assert [(r["action_date"], r["amount"]) for r in stored] == [(ex_date, dividend["amount"])]


def _fundamentals_row(symbol: str = "KCB", report: str = "2026-11-02", shares: str = "1,000", cap: str = "5,000"):
    return [symbol, report, "2026-09-30", "1.000", "2.00", "3.00", shares, cap]


KCB_REPORT = next(f["report_date"] for f in MARKET.day(DAY).fundamentals if f["symbol"] == "KCB").isoformat()


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (
            _fundamentals_row(report="2062-11-20"),
            "fundamentals KCB reported 2062-11-20: report date is after the trading day 2026-11-20",
        ),
        (_fundamentals_row(report="-"), r"fundamentals KCB \(no report date\): the report date is required"),
        (_fundamentals_row(report="2026-13-01"), r"column 'Report Date': '2026-13-01' is not a date"),
        (
            _fundamentals_row("ZZZ"),
            "fundamentals ZZZ reported 2026-11-02: unknown symbol "
            r"\(not in the store and not on the securities list\)",
        ),
        (
            _fundamentals_row(shares="(1,000,000)"),
            "fundamentals KCB reported 2026-11-02: shares outstanding -1,000,000 is not a whole number from 0",
        ),
        (_fundamentals_row(cap="(5,000)"), "fundamentals KCB reported 2026-11-02: market cap -5,000 is negative"),
        (
            _fundamentals_row(report=KCB_REPORT),
            f"fundamentals KCB reported {KCB_REPORT}: twice on the page",
        ),
    ],
    ids=["future", "blank", "unreadable", "unknown", "negative-shares", "negative-cap", "twice"],
)
def test_a_bad_fundamentals_row_refuses_the_day(
    exchange: Settings, site: SimulatorSite, row: list[str], reason: str
) -> None:
    """A report dated after the day would be served as the latest fundamentals for years,
    hiding every real report; the other rows cannot be stored. Each refuses the day with the
    row named, stores nothing, records a FAILED delivery pre-flight then names."""
    site.faults.fundamentals_rows = [row]
    with pytest.raises(DeliveryRejectedError, match=f"refused, nothing stored: .*{reason}"):
        deliver(exchange)
    assert count(exchange, tables.fundamentals) == 0
    assert_nothing_stored_and_preflight_refuses(exchange, reason)
    site.faults.fundamentals_rows = None
    assert deliver(exchange).status == "COMPLETE"  # the corrected page
    assert count(exchange, tables.fundamentals) == 59


def test_a_failure_while_storing_is_a_failed_delivery_with_nothing_written(
    exchange: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row the store refuses (after the day's delivery, instruments and prices were
    written in the same transaction) leaves none of them, and the day is recorded FAILED
    with the store's reason, as a day that fails validation is."""

    def refuse_notices(conn, table, rows, **kwargs):
        if table is tables.corporate_actions:
            raise InvalidInputError("corporate_actions: two rows for the same key {...}")
        return append_history(conn, table, rows, **kwargs)

    monkeypatch.setattr(delivery, "append_history", refuse_notices)
    monkeypatch.setattr(books, "append_history", refuse_notices)  # the notices' (ingest/books.py append_actions)
    with pytest.raises(DeliveryRejectedError, match="refused, nothing stored: corporate_actions: two rows"):
        deliver(exchange)
    assert count(exchange, tables.fundamentals) == 0
    assert_nothing_stored_and_preflight_refuses(exchange, "corporate_actions: two rows for the same key")
    with service_engine(exchange).connect() as conn:
        (failed,) = current_rows(conn, tables.deliveries)
    assert failed["status"] == "FAILED"
    assert failed["manifest"]["errors"] == ["corporate_actions: two rows for the same key {...}"]
    manifest = (Path(failed["snapshot_path"]) / "manifest.json").read_text()
    assert '"status": "FAILED"' in manifest


def _import_a_close(settings: Settings, folder: Path) -> object:
    """`marketintel import` of one close of a name the exchange does not list."""
    path = folder / "prices.csv"
    path.write_text("symbol,date,open,high,low,close,volume\nKCB,2026-11-20,25.7,26.3,25.6,26.17,1000\n")
    return import_path(service_engine(settings), path)


@pytest.mark.parametrize("database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
@pytest.mark.parametrize("other", ["the next T0 day", "an import"])
def test_a_t0_day_and_another_market_write_at_once_leave_no_track_record_without_the_day(
    exchange: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, other: str
) -> None:
    """A T0 day and another writer of the closes at once (the next day under its own day's
    lock, or an import under its format's): the T0 day took the lower price ids and
    committed after the other's rows. A track record read in between was kept under the
    other's newest price id, and once the day committed that id did not move: the record
    lacked the day for good, while a fresh process showed it. Every writer of the closes
    holds the market files' lock from before its first append, so the other waits and the
    ids commit in order."""
    before, d1 = date(2026, 11, 18), date(2026, 11, 19)
    MARKET.day(before), MARKET.day(d1)  # simulated here, not inside a request with a 0.5 s timeout
    deliver(exchange, before)
    engine = service_engine(exchange)
    with engine.connect() as conn:
        quote = max(current_rows(conn, tables.eod_prices), key=lambda r: r["volume"] or 0)
    portfolio_id = open_client_portfolio(engine, "acme")
    move_cash(engine, portfolio_id, "1000000", now=datetime(2026, 11, 19, 14, 0, tzinfo=UTC))
    order = ManualTrade("buy", quote["symbol"], 10, str(quote["close"]))
    place_manual_trade(engine, exchange, CALENDAR, portfolio_id, order, now=datetime(2026, 11, 19, 15, 0, tzinfo=UTC))
    inside, go = Event(), Event()
    store_day = delivery._store_day

    def paused(conn, day, *rest):  # d1's rows appended, its transaction not yet committed
        inserted = store_day(conn, day, *rest)
        if day == d1:
            inside.set()
            go.wait(10)
        return inserted

    monkeypatch.setattr(delivery, "_store_day", paused)
    desk = Desk.serving(exchange, now=lambda: datetime(2026, 11, 20, 23, 0, tzinfo=UTC))

    def record(desk: Desk) -> object:
        with desk.engine.connect() as conn:
            return desk.track_record(conn, portfolio_id).value()

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(deliver, exchange, d1)
        assert inside.wait(30)
        if other == "an import":
            second = pool.submit(_import_a_close, exchange, tmp_path)
        else:
            second = pool.submit(deliver, exchange, DAY)
        _until_waiting_or_done(engine, second)
        old = record(desk)  # d1 not committed yet
        go.set()
        first.result(timeout=60)
        stored = second.result(timeout=60)
    assert stored.rows_inserted > 0 if other == "an import" else stored.status == "COMPLETE"
    new = record(Desk.serving(exchange, now=lambda: datetime(2026, 11, 20, 23, 0, tzinfo=UTC)))  # a fresh process
    assert old.days < new.days  # the read in between lacked d1's close
    assert record(desk) == new
