"""The T0 commands as a user runs them: serve the simulator, scrape it over HTTP,
backfill, import, run the day (the demo: test_demo.py)."""

import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from market.settings import Settings
from tests.conftest import ON_SQLITE_ONLY
from tests.pipeline.test_cli import MARKETINTEL, cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def simulator_process(settings: Settings):
    port = _free_port()
    process = subprocess.Popen(
        [MARKETINTEL, "exchange", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/market/securities", params={"date": "2026-11-20"}, timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail(f"simulator did not start: {process.stderr.read()}")
            time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=10)


def test_scrape_the_served_simulator_then_preflight(simulator_process: str, monkeypatch: pytest.MonkeyPatch) -> None:
    quotes = httpx.get(f"{simulator_process}/market/trade-quotes", params={"date": "2026-11-20"})
    assert quotes.status_code == 200 and 'data-board="JUNIOR"' in quotes.text
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", simulator_process)
    scraped = cli("scrape", "--date", "2026-11-20")
    assert scraped.returncode == 0, scraped.stderr
    assert scraped.stdout.startswith("t0_scrape for 2026-11-20: SUCCEEDED")
    assert '"status": "COMPLETE"' in scraped.stdout
    preflight = cli("stage", "run", "t1_preflight", "--date", "2026-11-20")
    assert preflight.returncode == 0, preflight.stderr
    assert '"active_instruments": 59' in preflight.stdout


def test_the_same_day_from_the_backfill_and_the_scraper_is_stored_once(
    simulator_process: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review's run: the day a backfill delivered, scraped again from the exchange's site
    (the same values), stored a second copy of every price, instrument and fundamentals
    row, and each later backfill or scrape another, the source alternating: a row's
    source is where it came from, not what it says. The values stored once, the first
    source kept."""
    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    def counts() -> dict[str, int]:
        with service_engine(settings).connect() as conn:
            return {
                t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                for t in (tables.eod_prices, tables.instruments, tables.fundamentals, tables.index_levels)
            }

    assert cli("backfill", "--days", "1", "--end", "2026-11-20").returncode == 0
    delivered = counts()
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", simulator_process)
    scraped = cli("scrape", "--date", "2026-11-20")
    assert scraped.returncode == 0, scraped.stderr
    assert counts() == delivered
    assert cli("backfill", "--days", "1", "--end", "2026-11-20").returncode == 0
    assert counts() == delivered
    with service_engine(settings).connect() as conn:
        assert {r["source"] for r in conn.execute(select(tables.eod_prices.c.source)).mappings()} == {"simulated"}


@ON_SQLITE_ONLY
def test_scrape_with_no_exchange_is_one_line(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_RETRIES", "1")
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BACKOFF_SECONDS", "0.01")
    result = cli("scrape", "--date", "2026-11-20")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: stage 't0_scrape' for 2026-11-20 failed:") and "connection failed" in lines[-1]
    assert "Traceback" not in result.stderr
    refused = cli("stage", "run", "t1_preflight", "--date", "2026-11-20")
    assert refused.returncode == 1 and "is FAILED" in refused.stderr and "connection failed" in refused.stderr


@ON_SQLITE_ONLY
def test_scrape_on_a_holiday_is_skipped_with_the_reason(settings: Settings) -> None:
    result = cli("scrape", "--date", "2025-12-25")  # one gone: a holiday ahead is refused
    assert result.returncode == 0
    assert "SKIPPED" in result.stdout and "Christmas Day" in result.stdout


def test_backfill_delivers_simulated_days(settings: Settings) -> None:
    result = cli("backfill", "--days", "3", "--end", "2026-11-20")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("delivered 3 simulated days (2026-11-18 to 2026-11-20)")
    again = cli("backfill", "--days", "3", "--end", "2026-11-20")
    assert "; 0 price rows inserted" in again.stdout


@ON_SQLITE_ONLY
def test_a_backfill_ending_before_the_market_opened_is_one_line(settings: Settings) -> None:
    """The simulated market opens on 2024-01-02: `--end 2020-01-03` has no day to deliver.
    Before the fix the command ended in a traceback (IndexError on the empty report list)."""
    result = cli("backfill", "--days", "5", "--end", "2020-01-03")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip() == (
        "error: the simulated market has no trading day on or before 2020-01-03 (its first is 2024-01-02); "
        "nothing was delivered"
    )


@ON_SQLITE_ONLY
def test_a_day_that_has_not_closed_is_neither_backfilled_nor_run(settings: Settings) -> None:
    """An adversarial run: `backfill --end` a week ahead stored simulated days as history,
    the AI book executed the last of them, and every real session before it was then
    refused for good. A day after the latest closed one is refused, and nothing stored."""
    from datetime import timedelta

    from market.clock import default_calendar, exchange_now, latest_closed_trading_day

    calendar = default_calendar()
    latest = latest_closed_trading_day(exchange_now())
    ahead = calendar.next_trading_day(calendar.next_trading_day(latest + timedelta(days=1)))
    backfilled = cli("backfill", "--days", "3", "--end", ahead.isoformat())
    assert backfilled.returncode == 1 and backfilled.stdout == ""
    assert backfilled.stderr.startswith(f"error: --end {ahead.isoformat()} has not closed yet; the latest closed")
    for stage in ("t0_scrape", "t1_trade"):
        ran = cli("stage", "run", stage, "--date", ahead.isoformat())
        assert ran.returncode == 1, ran.stdout
        said = f"error: {ahead.isoformat()} has not closed yet; the latest closed trading day is {latest.isoformat()}"
        assert ran.stderr.strip() == said
    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    with service_engine(settings).connect() as conn:
        for table in (tables.eod_prices, tables.deliveries, tables.stage_runs, tables.portfolio_days):
            assert conn.execute(select(func.count()).select_from(table)).scalar_one() == 0


@ON_SQLITE_ONLY
def test_no_stage_runs_for_a_day_the_exchange_has_not_reached(settings: Settings) -> None:
    """The stages that run on any calendar day (health, the weekly macro) or before a close
    (T2's morning) were bounded by nothing: `stage run health --date` a month ahead wrote
    that month's health checks. A date after the exchange's today (for T2, past the next
    session) is one line, nothing stored."""
    from datetime import timedelta

    from sqlalchemy import func, select

    from market.clock import default_calendar, exchange_date, utc_now
    from store import tables
    from store.engine import service_engine

    today = exchange_date(utc_now())
    tomorrow = today + timedelta(days=1)
    for stage in ("health", "t3_macro"):
        ran = cli("stage", "run", stage, "--date", tomorrow.isoformat())
        assert ran.returncode == 1, ran.stdout
        assert ran.stderr.strip().startswith(f"error: {tomorrow.isoformat()} is after today ("), ran.stderr
    calendar = default_calendar()
    ahead = calendar.next_trading_day(calendar.closed_day_at(utc_now()))  # T1's close starts T2 for it
    beyond = calendar.next_trading_day(ahead)
    ran = cli("stage", "run", "t2_suggestions", "--date", beyond.isoformat())
    assert ran.returncode == 1, ran.stdout
    assert ran.stderr.strip() == f"error: {beyond.isoformat()} is past the next session ({ahead.isoformat()})"
    with service_engine(settings).connect() as conn:
        for table in (tables.health_checks, tables.stage_runs, tables.macro_observations, tables.suggestions):
            assert conn.execute(select(func.count()).select_from(table)).scalar_one() == 0


@ON_SQLITE_ONLY
def test_a_day_not_reached_is_refused_before_a_notebook_runs(settings: Settings) -> None:
    """An adversarial run: `run-day` for a day whose close had not come ran T0's notebook,
    printed a table with `t0_scrape FAILED ... has not closed yet`, and left a FAILED
    notebook listed in runs/index.md; `stage run health --notebook` for a future day the
    same. Every path refuses it as `scrape` does: one line, no notebook, nothing recorded."""
    from datetime import timedelta

    from sqlalchemy import func, select

    from market.clock import default_calendar, exchange_date, utc_now
    from store import tables
    from store.engine import service_engine

    calendar = default_calendar()
    latest = calendar.closed_day_at(utc_now())
    unclosed = calendar.next_trading_day(latest)  # today before its close, or the next session
    today = exchange_date(utc_now())
    tomorrow = today + timedelta(days=1)
    not_closed = (
        f"error: {unclosed.isoformat()} has not closed yet; the latest closed trading day is {latest.isoformat()}"
    )
    for args, said in [
        (["run-day", "--date", unclosed.isoformat()], not_closed),
        (["stage", "run", "t0_scrape", "--notebook", "--date", unclosed.isoformat()], not_closed),
        (["stage", "run", "t1_trade", "--notebook", "--date", unclosed.isoformat()], not_closed),
        (
            ["stage", "run", "health", "--notebook", "--date", tomorrow.isoformat()],
            f"error: {tomorrow.isoformat()} is after today ({today.isoformat()} on the exchange's clock)",
        ),
    ]:
        ran = cli(*args)
        assert (ran.returncode, ran.stdout) == (1, ""), (args, ran.stdout)
        assert ran.stderr.strip() == said, args
    assert not settings.runs_dir.exists() or list(settings.runs_dir.iterdir()) == []
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.stage_runs)).scalar_one() == 0


@ON_SQLITE_ONLY
def test_a_future_holiday_or_weekend_is_refused_not_skipped(settings: Settings) -> None:
    """A reviewer's run: `scrape --date 2099-01-01` (New Year's Day), `stage run t1_features`
    the same and `stage run health --notebook --date 2099-01-03` (a Sunday) were SKIPPED,
    exit status 0, with stage_runs rows and a notebook written for 2099: the future check
    was left out for any day the exchange is closed. A closed day ahead is refused as an
    open one is, in the same words; only a past weekend or holiday skips."""
    from datetime import timedelta

    from sqlalchemy import func, select

    from market.clock import default_calendar, utc_now
    from store import tables
    from store.engine import service_engine

    latest = default_calendar().closed_day_at(utc_now())
    not_closed = f"has not closed yet; the latest closed trading day is {latest.isoformat()}"
    for args, said in [
        (["scrape", "--date", "2099-01-01"], f"error: 2099-01-01 {not_closed}"),
        (["stage", "run", "t1_features", "--date", "2099-01-01"], f"error: 2099-01-01 {not_closed}"),
        (["stage", "run", "t1_features", "--notebook", "--date", "2099-01-03"], f"error: 2099-01-03 {not_closed}"),
        (["stage", "run", "t2_suggestions", "--date", "2099-01-03"], "error: 2099-01-03 is past the next session ("),
    ]:
        ran = cli(*args)
        assert (ran.returncode, ran.stdout) == (1, ""), (args, ran.stdout)
        assert ran.stderr.strip().startswith(said), (args, ran.stderr)
    assert not settings.runs_dir.exists() or list(settings.runs_dir.iterdir()) == []
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.stage_runs)).scalar_one() == 0
    gone = next(day for day in (latest - timedelta(days=n) for n in range(1, 8)) if day.weekday() == 6)
    past = cli("stage", "run", "t1_features", "--date", gone.isoformat())  # a Sunday gone: skipped
    assert past.returncode == 0 and "SKIPPED" in past.stdout, past.stdout + past.stderr


def test_every_stage_refuses_days_by_the_rule_the_registry_names_without_its_code() -> None:
    """The notebook paths refuse an unreached day by the registry's rule (the stage's code
    is not loaded there): it is each stage's own pair of flags."""
    from pipeline import registry

    for name in registry.STAGES:
        stage = registry.STAGES[name]
        assert registry.day_rule(name) == (stage.trading_days_only, stage.after_close), name


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_long_backfill_prints_a_few_lines_not_one_per_request(settings: Settings) -> None:
    """Not a terminal (a pipe): no progress bar and no library INFO lines, only the result.
    The defect this guards printed one httpx line per request, about five a day (1,291 for
    260 days): 30 days would print some 150. What is printed does not depend on the
    database: SQLite only (backfill on Postgres: test_backfill_delivers_simulated_days, run-day)."""
    result = cli("backfill", "--days", "30", "--end", "2026-11-20")
    assert result.returncode == 0, result.stderr
    output = (result.stdout + result.stderr).splitlines()
    assert len(output) < 20, output[:30]
    assert output[-1].startswith("delivered 30 simulated days")


@ON_SQLITE_ONLY
def test_verbose_shows_the_libraries_logs(settings: Settings) -> None:
    quiet = cli("backfill", "--days", "1", "--end", "2026-11-20")
    verbose = cli("--verbose", "backfill", "--days", "1", "--end", "2026-11-19")
    assert "httpx" not in quiet.stderr
    assert "INFO httpx: HTTP Request: GET http://simulator.local/" in verbose.stderr


def test_run_day_shows_the_failed_stage_in_its_table_then_the_error(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_RETRIES", "1")
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BACKOFF_SECONDS", "0.01")
    result = cli("run-day", "--date", "2026-11-20")
    assert result.returncode == 1
    assert result.stdout.splitlines()[1].split()[:2] == ["t0_scrape", "FAILED"]
    assert result.stderr.strip().splitlines()[-1].startswith("error: stage notebook 't0_scrape' for 2026-11-20 failed")


@ON_SQLITE_ONLY
def test_a_stage_past_its_time_limit_is_failed_in_the_table_the_index_and_one_line(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exchange that takes the connection and never answers holds t0_scrape past
    MARKETINTEL_STAGE_TIMEOUT_SECONDS. Before the fix the run index listed the notebook as
    SUCCEEDED, run-day's table left the stage out and the error was the cell's many lines."""
    with socket.socket() as silent:  # listens, never accepts: a request connects and waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_TIMEOUT_SECONDS", "120")
        monkeypatch.setenv("MARKETINTEL_STAGE_TIMEOUT_SECONDS", "5")
        result = cli("run-day", "--date", "2026-11-20")
    assert result.returncode == 1
    assert result.stdout.splitlines()[1].split()[:2] == ["t0_scrape", "FAILED"]
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("error: stage notebook 't0_scrape' for 2026-11-20 failed (timed out after 5 s")
    assert "Traceback" not in result.stderr and "Here is a preview" not in result.stderr
    index = (settings.runs_dir / "index.md").read_text()
    assert "| 2026-11-20 | t0_scrape | FAILED |" in index


@ON_SQLITE_ONLY
def test_run_day_stopped_by_sigterm_names_the_stage_everywhere(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service manager stops `run-day` (SIGTERM) while t0_scrape waits on the exchange.
    Python's default ended the process at once: no table, no error, the stage's STARTED
    without an end, and runs/index.md as the last write left it. Now it ends as a failure
    does, naming the stage."""
    import signal

    with socket.socket() as silent:  # listens, never accepts: t0_scrape waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_TIMEOUT_SECONDS", "120")
        process = subprocess.Popen(
            [MARKETINTEL, "run-day", "--date", "2026-11-20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 120
        while not _events(settings) and time.monotonic() < deadline:  # the kernel's stage recorded its start
            time.sleep(0.2)
        time.sleep(1)  # the stage's cell waits on the exchange
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert stdout.splitlines()[1].split()[:2] == ["t0_scrape", "FAILED"]
    assert stderr.strip().splitlines()[-1] == (
        "error: stage 't0_scrape' for 2026-11-20 interrupted by SIGTERM; run the day again to finish it "
        "(each stage is a transaction)"
    )
    assert "Traceback" not in stderr and "never retrieved" not in stderr
    assert "| 2026-11-20 | t0_scrape | FAILED |" in (settings.runs_dir / "index.md").read_text()
    assert _events(settings) == [
        ("t0_scrape", "STARTED", None),
        ("t0_scrape", "FAILED", "interrupted by SIGTERM before it recorded an end"),
    ]


@ON_SQLITE_ONLY
@pytest.mark.parametrize("command", [["scrape"], ["stage", "run", "t0_scrape"]])
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_stage_run_in_process_stopped_records_its_end_and_says_so(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, command: list[str], signal_name: str
) -> None:
    """`scrape` and `stage run` (no --notebook) stopped while the stage waits on the
    exchange: Ctrl-C exited 130 and SIGTERM at once, without a word, and the stage's STARTED
    stayed without an end in `stage_runs`. Now they end as run-day's interrupted stage does."""
    import signal

    with socket.socket() as silent:  # listens, never accepts: t0_scrape waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("MARKETINTEL_EXCHANGE_TIMEOUT_SECONDS", "120")
        process = subprocess.Popen(
            [MARKETINTEL, *command, "--date", "2026-11-20"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal starts it
        )
        deadline = time.monotonic() + 120
        while not _events(settings) and time.monotonic() < deadline:  # the stage recorded its start
            time.sleep(0.2)
        time.sleep(1)  # the stage waits on the exchange
        process.send_signal(getattr(signal, signal_name))
        stdout, stderr = process.communicate(timeout=120)
    why = "SIGTERM" if signal_name == "SIGTERM" else "Ctrl-C"
    assert process.returncode == 1, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"error: stage 't0_scrape' for 2026-11-20 interrupted by {why}; run it again to finish it "
        "(each stage is a transaction)"
    )
    assert "Traceback" not in stderr
    assert _events(settings) == [
        ("t0_scrape", "STARTED", None),
        ("t0_scrape", "FAILED", f"interrupted by {why} before it recorded an end"),
    ]


@ON_SQLITE_ONLY
@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_a_backfill_stopped_says_what_stands_and_how_to_finish(settings: Settings, signal_name: str) -> None:
    """A long backfill stopped (Ctrl-C, a service manager's SIGTERM) ended without a word
    (exit 130, or killed), its days so far stored but the API's daily bars not rebuilt
    (the backfill's last step). It says so in one line, and a second run finishes it."""
    import signal

    from sqlalchemy import func, select

    from store import tables
    from store.engine import service_engine

    def days_stored() -> int:
        with service_engine(settings).connect() as conn:
            return conn.execute(select(func.count(tables.eod_prices.c.trading_date.distinct()))).scalar()

    process = subprocess.Popen(
        [MARKETINTEL, "backfill", "--days", "40", "--end", "2026-11-20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal starts it
    )
    deadline = time.monotonic() + 120
    while days_stored() < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(getattr(signal, signal_name))
    stdout, stderr = process.communicate(timeout=120)
    why = "SIGTERM" if signal_name == "SIGTERM" else "Ctrl-C"
    assert (process.returncode, stdout) == (1, ""), stderr
    assert stderr.strip().splitlines()[-1] == (
        f"error: backfill interrupted by {why}: the days delivered before it stay stored (each day is one "
        "transaction); run it again to deliver the rest and rebuild the API's daily bars"
    )
    assert 2 <= days_stored() < 40
    again = cli("backfill", "--days", "40", "--end", "2026-11-20")
    assert again.returncode == 0, again.stderr
    assert days_stored() == 40


def _events(settings: Settings) -> list[tuple[str, str, str | None]]:
    """The stages' recorded events, oldest first: (stage, event, error)."""
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    with service_engine(settings).connect() as conn:
        rows = sorted(current_rows(conn, tables.stage_runs), key=lambda r: r["id"])
    return [(r["stage"], r["event"], r["detail"].get("error")) for r in rows]


@ON_SQLITE_ONLY
def test_import_reports_bad_rows_with_file_and_line(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("symbol,date,close,volume\nKCB,2026-11-20,26.17,100\nKCB,2026-11-21,-5,100\n")
    result = cli("import", str(path))
    assert result.returncode == 0, result.stderr
    # the generic CSV does not say its currency: the one stored is named, and that it was assumed
    assert (
        "ohlcv: 1 files, 1 rows read, 1 inserted, 0 changed, 1 instruments in JMD, assumed: the files do not say"
        in (result.stdout)
    )
    assert f"bad row: {path}:3: close '-5' is not a price" in result.stdout
    assert "the source lacks: open, high, low, prev_close, bid, ask, trades, value_traded" in result.stdout


@ON_SQLITE_ONLY
def test_a_backfill_ending_on_a_weekend_after_the_last_close_runs_to_that_close(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`backfill --end` is "up to and including": on Monday morning, `--end` the Saturday
    before ends at Friday, which has closed. It was refused "--end 2026-11-28 has not closed
    yet" (the Saturday itself compared with Friday); before Friday's close it still is."""
    from datetime import datetime

    from typer.testing import CliRunner

    from cli.main import app
    from market import clock

    def at(moment: datetime) -> None:
        monkeypatch.setattr(clock, "exchange_now", lambda: moment.replace(tzinfo=clock.EXCHANGE_TZ))

    at(datetime(2026, 11, 27, 10, 0))  # Friday, before its close
    refused = CliRunner().invoke(app, ["backfill", "--days", "3", "--end", "2026-11-28"])
    assert refused.exit_code == 1
    assert refused.stderr.startswith(
        "error: --end 2026-11-28 has not closed yet; the latest closed trading day is 2026-11-26"
    )
    at(datetime(2026, 11, 30, 10, 0))  # Monday morning: Friday has closed
    done = CliRunner().invoke(app, ["backfill", "--days", "3", "--end", "2026-11-28"])
    assert done.exit_code == 0, done.output
    assert "delivered 3 simulated days (2026-11-25 to 2026-11-27)" in done.stdout


def _stored_text(settings: Settings) -> str:
    """Every stage run's, ingest failure's and delivery's row, as text."""
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    with service_engine(settings).connect() as conn:
        return repr([current_rows(conn, t) for t in (tables.stage_runs, tables.ingest_failures, tables.deliveries)])


@ON_SQLITE_ONLY
def test_configured_addresses_holding_credentials_are_never_shown(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feed and the exchange at addresses holding a password or an API key, refused: the
    CLI's lines, the log, the stage's summary and the failure rows name them masked."""
    port = _free_port()
    feeds = f'["http://desk:feed-pw-1@127.0.0.1:{port}/rss", "http://127.0.0.1:{port}/rss?apikey=feed-key-2"]'
    monkeypatch.setenv("MARKETINTEL_NEWS_FEEDS", feeds)
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_RETRIES", "0")
    text = cli("stage", "run", "t1_ingest_text", "--date", "2026-11-20")
    assert text.returncode == 0, text.stderr
    assert f"feed http://***@127.0.0.1:{port}/rss failed" in text.stderr
    assert f"feed http://127.0.0.1:{port}/rss?apikey=*** failed" in text.stderr
    monkeypatch.setenv("MARKETINTEL_EXCHANGE_BASE_URL", f"http://desk:site-pw-3@127.0.0.1:{port}")
    scrape = cli("scrape", "--date", "2026-11-20")
    assert scrape.returncode == 1
    assert f"failed: http://***@127.0.0.1:{port}/market/" in scrape.stderr.strip().splitlines()[-1]
    shown = text.stdout + text.stderr + scrape.stdout + scrape.stderr + _stored_text(settings)
    assert not [s for s in ("feed-pw-1", "feed-key-2", "site-pw-3") if s in shown], shown
