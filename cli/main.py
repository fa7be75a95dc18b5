"""The `marketintel` command line. Every command is a thin adapter over a service
function; a domain error is printed as one line (`error: ...`) with exit status 1.

The root and the operator's commands: the database's migrations, the stages, backfill,
import, bootstrap, run-day, the exchange simulator, the demo, notifications, the model
monitor and `serve`, which may call pipeline/, store/ and ingest/ besides the desk. A
client's commands (cli/portfolio.py, cli/keys.py, cli/report.py) call the desk alone
(pyproject.toml's import contracts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from cli.app import command_group
from cli.errors import one_line_errors, say_error
from cli.keys import keys_app
from cli.output import echo_json, shown
from cli.portfolio import portfolio_app
from cli.report import report
from market.logging import configure_logging
from market.settings import Settings, get_settings

if TYPE_CHECKING:
    from datetime import date

    from desk import Desk
    from ingest.exchange.delivery import DeliveryReport
    from ingest.importers.files import CapitalOptions, ImportReport
    from ingest.replay import ReplayMarket
    from ingest.simulator.market import SimulatedMarket
    from ingest.simulator.site import SimulatorSite

app = command_group("Market intelligence service for a small stock exchange.")
db_app = command_group("The database: apply migrations, show their state, rebuild the stored daily bars.")
stage_app = command_group("Run the stages of the trading day.")
exchange_app = command_group("The built-in exchange website: the simulator, or a replay of real files.")
app.add_typer(db_app, name="db")
app.add_typer(exchange_app, name="exchange")
app.add_typer(stage_app, name="stage")
app.add_typer(keys_app, name="keys")
app.add_typer(portfolio_app, name="portfolio")
notify_app = command_group("Notifications: the analysis and alerts sent to the webhook.")
app.add_typer(notify_app, name="notify")

# Where a server listens: the API (`serve`) and the exchange website (`exchange serve`)
# take the same two options; each command gives its own default, and checks the pair with
# `listen_address` before it starts.
Host = Annotated[str, typer.Option(help="Interface to listen on.")]
Port = Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")]


def listen_address(host: str, port: int) -> None:
    """Refuse, in one line, a --host and --port a server cannot listen on: a name that does
    not resolve, an address not on this machine, a port in use. uvicorn found out only
    once started: it logged the failure among its startup lines and exited 3, a name like
    `a..b` ended in a traceback, and a port over 65535 was taken (as the port modulo 65536)."""
    import socket

    from market.errors import InvalidInputError

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InvalidInputError(f"--host {host!r} is not an address to listen on ({reason})") from None
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind(address)
        except OSError as exc:
            raise InvalidInputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


@app.callback()
@one_line_errors
def _setup(
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="Also show the libraries' logs (HTTP requests, "
        "papermill, the kernels) at MARKETINTEL_LOG_LEVEL; without it they show warnings only.",
    ),
) -> None:
    configure_logging(get_settings().log_level, verbose=verbose)


@db_app.command("upgrade")
@one_line_errors
def db_upgrade() -> None:
    """Apply every pending migration in sql/ (safe to repeat)."""
    from store.engine import migration_engine
    from store.migrations import upgrade

    applied = upgrade(migration_engine(get_settings()))
    if applied:
        for migration in applied:
            typer.echo(f"applied {migration.version:04d}_{migration.name}")
    else:
        typer.echo("schema is up to date; nothing to apply")


@db_app.command("status")
@one_line_errors
def db_status() -> None:
    """List migrations with their state: applied, pending or modified."""
    from store.engine import migration_engine
    from store.migrations import status

    settings = get_settings()
    typer.echo(f"database: {_redacted(settings.database_url)}")
    for state in status(migration_engine(settings)):
        typer.echo(f"{state.version:04d}  {state.name:<24} {state.state:<9} {shown(state.applied_at)}")


@db_app.command("rebuild-bars")
@one_line_errors
def db_rebuild_bars() -> None:
    """Compare every stored daily bar with its indicators computed anew and store the ones
    that moved (after an upgrade that changed an indicator's definition; safe to repeat)."""
    from desk import Desk

    typer.echo(f"{Desk.from_settings(get_settings()).refresh_bars(every=True)} daily bars rebuilt")


@stage_app.command("list")
def stage_list() -> None:
    """Show the stages the runner knows."""
    from pipeline.registry import STAGES

    for stage in STAGES.values():
        typer.echo(f"{stage.name:<16} {stage.description}")


@stage_app.command("run")
@one_line_errors
def stage_run(
    name: str = typer.Argument(..., help="Stage name (see `marketintel stage list`)."),
    date: str | None = typer.Option(
        None,
        "--date",
        help="Trading date, YYYY-MM-DD (exchange time); default: the stage's own day, the latest closed "
        "trading day (t2_suggestions: the next session; t3_macro and health: today).",
    ),
    notebook: bool = typer.Option(False, "--notebook", help="Run through the stage's papermill notebook."),
) -> None:
    """Run one stage for one trading date."""
    if date is None:
        from market.clock import default_calendar
        from pipeline.registry import day_rule
        from pipeline.runner import default_day

        date = default_day(day_rule(name), default_calendar()).isoformat()
    if notebook:
        from market.clock import parse_trading_date
        from pipeline.day import notebook_stage, terminate_as_interrupt
        from pipeline.notebooks import one_kernel

        with terminate_as_interrupt(), one_kernel():  # run-day's kernel handling: an interrupt is shut down alike
            ran = notebook_stage(name, parse_trading_date(date), get_settings(), trigger="cli")
        if ran.error is not None:
            raise ran.error
        typer.echo(f"stage {name} for {date}: {ran.outcome()}")
        _alarmed(ran.alarm)
        return
    from market.clock import parse_trading_date
    from pipeline.day import stage_in_process

    result = stage_in_process(name, parse_trading_date(date), get_settings())
    typer.echo(f"stage {name} for {date}: {result.status}")
    echo_json(result.summary)
    _alarmed(result.alarm)


def _alarmed(alarm: str | None) -> None:
    """A stage that ran and found something wrong (health's failed checks: StageOutcome.alarm)
    says so in one line on stderr and exits 2, as `monitor --check` does: its summary is
    printed and recorded, and a cron job or a shell sees the problem in the exit status
    (1 stays a stage that could not run)."""
    if alarm:
        say_error(alarm)
        raise typer.Exit(2)


def _default_date(date: str | None) -> str:
    """The date option as given, else the latest closed trading day. Only an option not
    given is the default, here and in every date option: an empty one (`--date "$DAY"`
    with DAY unset) is a date the date rule refuses (scrape, run-day and backfill --end
    took it as the latest closed day, bootstrap --end as its default, and
    `notify deliver --date ''` sent every day's notifications)."""
    from market.clock import exchange_now, latest_closed_trading_day

    return date if date is not None else latest_closed_trading_day(exchange_now()).isoformat()


@app.command("scrape")
@one_line_errors
def scrape(
    date: str | None = typer.Option(None, "--date", help="Trading date; default: the latest closed trading day."),
) -> None:
    """T0: fetch, validate and store one day from the exchange (MARKETINTEL_EXCHANGE_BASE_URL)."""
    from market.clock import parse_trading_date
    from pipeline.day import stage_in_process

    day = _default_date(date)
    result = stage_in_process("t0_scrape", parse_trading_date(day), get_settings())
    typer.echo(f"t0_scrape for {day}: {result.status}")
    echo_json(result.summary)


@app.command("backfill")
@one_line_errors
def backfill(
    days: int = typer.Option(
        ...,
        "--days",
        min=1,
        help="How many trading days to deliver (simulated, or replayed under MARKETINTEL_REPLAY_PATH).",
    ),
    end: str | None = typer.Option(
        None, "--end", help="Last day (YYYY-MM-DD); default: the latest closed trading day."
    ),
) -> None:
    """Deliver simulated (or replayed) history through the T0 code path (no server needed)."""
    from ingest.markets import market_for
    from market.clock import default_calendar, exchange_now, latest_closed_trading_day, parse_trading_date
    from market.errors import InvalidInputError

    settings = get_settings()
    # A replay is built first: building it records its calendar (the files' dates, which the
    # default --end reads), and a fresh data folder has none yet.
    market = market_for(settings) if settings.replay_path else None
    last = parse_trading_date(_default_date(end))
    latest = latest_closed_trading_day(exchange_now()) if market is None else last  # a replay's files: the record
    # --end is "up to and including": a weekend or holiday --end ends at the trading day before it
    if market is None and default_calendar().latest_trading_day(last) > latest:
        raise InvalidInputError(
            f"--end {last.isoformat()} has not closed yet; the latest closed trading day is {latest.isoformat()} "
            "(a simulated future would be stored as history, and the real sessions before it refused)"
        )
    reports = _backfilled(settings, days, last, market)
    inserted = sum(r.inserted.get("eod_prices", 0) for r in reports)
    kind = "replayed" if settings.replay_path else "simulated"
    typer.echo(
        f"delivered {len(reports)} {kind} days ({reports[0].trading_date} to {reports[-1].trading_date}); "
        f"{inserted} price rows inserted"
    )
    for line in market.source.lines() if market is not None else []:
        typer.echo(line)


def _backfilled(
    settings: Settings, days: int, last: date, market: SimulatedMarket | ReplayMarket | None
) -> list[DeliveryReport]:
    """The backfill's days, or, stopped by Ctrl-C or SIGTERM, one line that says what stands
    and how to finish: it ended without a word (exit 130, or killed at once), the days so
    far stored and the API's daily bars, its last step, not rebuilt; a second run does both."""
    from market.errors import StageFailedError
    from pipeline.backfill import backfill as run_backfill
    from pipeline.day import Terminated, terminate_as_interrupt
    from store.migrations import current_store

    try:
        with terminate_as_interrupt():
            return run_backfill(current_store(settings), settings, days, last, market)
    except KeyboardInterrupt as exc:
        why = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        raise StageFailedError(
            f"backfill interrupted by {why}: the days delivered before it stay stored (each day is one transaction); "
            "run it again to deliver the rest and rebuild the API's daily bars"
        ) from None


@app.command("import")
@one_line_errors
def import_files(
    path: str = typer.Argument(..., help="A CSV file or a folder of them."),
    file_format: str = typer.Option("auto", "--format", help="auto, nse-daily, nse-company or ohlcv."),
    currency: str | None = typer.Option(None, help="Currency of the prices; default KES for NSE files, else JMD."),
    actions: str | None = typer.Option(
        None, help="A corporate-actions file; default: corporate_actions.csv beside the prices, if any."
    ),
    adjust_implied: bool = typer.Option(
        False, help="Store each move beyond MARKETINTEL_DAILY_PRICE_LIMIT no action explains as a split."
    ),
    accept_action: list[str] = typer.Option(
        [],
        help="SYMBOL:EX_DATE of a split, bonus, rights issue or consolidation to apply as stated though the closes "
        "do not show its ratio (refused otherwise: the prices look already adjusted); repeatable.",
    ),
    weekdays: str = typer.Option(
        "Mon-Fri",
        help="The days of the week the files' market trades, a range (Sun-Thu) or a list (Mon,Tue,Wed,Thu,Fri,Sat): "
        "a row dated on another day refuses the import (a vendor's dates shifted by a day).",
    ),
) -> None:
    """Import historical end-of-day files; bad rows are listed with file and line."""
    from pathlib import Path

    from desk import Desk
    from ingest.importers.files import detect_format, source_currency
    from market.errors import InvalidInputError

    fmt = detect_format(Path(path)) if file_format == "auto" else file_format
    source_currency(fmt, currency)  # a --currency that is not three capitals is refused before anything is read
    settings = get_settings()
    capital = _capital_options(settings, actions, adjust_implied, accept_action, weekdays)
    desk = Desk.from_settings(settings)
    report = desk.import_files(Path(path), fmt, currency=currency, capital=capital)
    refresh_failed = _refresh_after_import(desk, report)
    _echo_import(report, fmt, currency)
    if refresh_failed:
        typer.echo(f"warning: {refresh_failed}")
    if report.bad_rows and not report.rows_read and not report.index_levels_inserted:
        raise InvalidInputError(f"no row of {path} could be read: nothing was imported (the bad rows are above)")
    _unread_files(report.unread_files)


def _refresh_after_import(desk: Desk, report: ImportReport) -> str | None:
    """The API's stored bars and indicators brought up to the imported prices and splits;
    None, or the warning to print when the store failed the refresh (a locked SQLite file).
    The import is committed by then, so the command reports what it stored and exits 0 with
    the warning and its fix (`marketintel db rebuild-bars`): what was written is never
    answered as an error, and a second import, which stores nothing, would not rebuild
    them (reads compute stale bars in memory until a rebuild or the next write)."""
    from sqlalchemy.exc import DatabaseError

    from cli.errors import environment_error, stands_on_database

    if not (report.rows_inserted or report.rows_changed or report.corporate_actions_inserted):
        return None
    try:
        desk.refresh_bars()
    except DatabaseError as exc:
        if not stands_on_database(exc):
            raise
        return (
            f"the import is stored, but the API's daily bars were not rebuilt ({environment_error(exc)}): "
            "run `marketintel db rebuild-bars`"
        )
    return None


def _capital_options(
    settings: Settings, actions: str | None, adjust_implied: bool, accept_action: list[str], weekdays: str
) -> CapitalOptions:
    """The import's options from its flags and the settings (the market's daily price
    limit, the delisting rule's sessions); InvalidInputError for an --accept-action that is
    not SYMBOL:EX_DATE or --weekdays that are not days of the week, before anything is read."""
    from pathlib import Path

    from ingest.importers.actions import accepted_actions
    from ingest.importers.files import CapitalOptions
    from market.clock import session_weekdays

    return CapitalOptions(
        Path(actions) if actions else None,
        settings.daily_price_limit,
        adjust_implied,
        settings.delist_after_sessions,
        accepted_actions(accept_action),
        session_weekdays(weekdays),
    )


def _echo_import(report: ImportReport, fmt: str, currency: str | None) -> None:
    """The import's report, one line each: what it read and stored (in which currency, and
    whether that was assumed), its bad and second rows, the rows it changed, the capital
    changes and the store's actions it does not have."""
    from ingest.importers.files import FORMAT_CURRENCY

    # a currency neither given nor the format's own is assumed, and said so: another market's
    # files in the generic format would otherwise be stored in the home currency unseen
    assumed = (
        ""
        if currency or report.currency_stated or fmt in FORMAT_CURRENCY
        else ", assumed: the files do not say (--currency)"
    )
    _echo_read(report, f"{report.currency}{', as the files state' if report.currency_stated else ''}{assumed}")
    for bad in report.bad_rows[:20]:
        typer.echo(f"bad row: {bad}")
    if len(report.bad_rows) > 20:
        typer.echo(f"... and {len(report.bad_rows) - 20} more bad rows")
    for line in report.second_rows:
        typer.echo(line)
    _echo_changed(report)
    for line in report.capital_changes:
        typer.echo(line)
    if report.corporate_actions_inserted:
        typer.echo(f"{report.corporate_actions_inserted} corporate actions stored (SPLIT, DELISTING)")
    if report.unmatched_actions:
        typer.echo(
            "warning: the store holds corporate actions of these files' names, within their dates, that this "
            f"import does not have, and they still apply: {'; '.join(report.unmatched_actions)}. The store keeps "
            "every row it was given and no command withdraws one: if the file was corrected, import into a fresh "
            "store (MARKETINTEL_DATABASE_URL)"
        )


def _unread_files(unread: list[str]) -> None:
    """Files of which not a row could be read (a header the format does not read, a
    required column blank on every row, an empty file) beside files that were imported:
    one line on stderr and exit 2, as `_alarmed` says a problem found after something was
    written, so an operator's script does not take a folder imported without a file for
    one imported whole (1 stays an import that stored nothing)."""
    if unread:
        shown = ", ".join(unread[:3]) + (f" and {len(unread) - 3} more" if len(unread) > 3 else "")
        say_error(
            f"{len(unread)} file{'s' if len(unread) > 1 else ''} of which no row could be read ({shown}; the bad "
            "rows are above): the other files were imported"
        )
        raise typer.Exit(2)


def _echo_changed(report: ImportReport) -> None:
    """The stored price rows the import changed (`ingest.importers.files.Written`), as the
    second rows of its own files are listed: a count, then the first few."""
    if not report.rows_changed:
        return
    typer.echo(
        f"stored rows this import changed: {report.rows_changed} (a later import's row of a name and day is a "
        "correction: the current version, the stored one kept as an earlier version)"
    )
    for line in report.changed:
        typer.echo(f"  {line}")
    if report.rows_changed > len(report.changed):
        typer.echo(f"  ... and {report.rows_changed - len(report.changed):,} more changed")


def _echo_read(report: ImportReport, currency: str) -> None:
    """What an import read and stored, and what it left out before the bad rows; the
    currency only where an instrument was read (nothing is stored in an assumed one)."""
    typer.echo(
        f"{report.format}: {report.files} files, {report.rows_read} rows read, {report.rows_inserted} inserted, "
        f"{report.rows_changed} changed, "
        f"{report.instruments} instruments{f' in {currency}' if report.instruments else ''} "
        f"({report.instruments_inserted} new or changed)"
    )
    if report.lacks:
        typer.echo(f"the source lacks: {', '.join(report.lacks)} (stored as missing, never invented)")
    if report.untraded_inserted:
        typer.echo(
            f"{report.untraded_inserted} no-trade rows stored for listed names a day's file left out (volume 0 at "
            "the last close, as the exchange lists an untraded name; a gap the delisting rule's sessions long stays "
            "a gap)"
        )
    if report.untraded_changed:
        typer.echo(
            f"{report.untraded_changed} no-trade rows an earlier import stored put again at the last close on the "
            "current count (a split stored since, or the last close corrected; the earlier version is kept)"
        )
    for thin in report.thin_days:
        typer.echo(f"thin day {thin}")
    _echo_types(report.types, report.not_ordinary)
    for copy in report.repeated_days:
        typer.echo(f"left out: {copy}")
    if report.indices:
        typer.echo(
            f"left out: market indices {', '.join(report.indices)} (index levels, not securities); "
            f"{report.index_levels_inserted} levels stored as the market's benchmark (index_levels)"
        )
    for move in report.index_moves:
        typer.echo(f"warning: index level {move}")
    if report.untraded_moves:
        typer.echo(f"warning: {report.untraded_moves}")


def _echo_types(source: str, not_ordinary: dict[str, str]) -> None:
    """Where the instruments' types came from and which are not ordinary shares: those are
    kept out of the AI book, the suggestions and the equal-weighted benchmark, so a type cell
    the importer could not read (UNKNOWN) is named here rather than found missing later."""
    if source:
        typer.echo(f"instrument types: {source}")
    if not_ordinary:
        named = [f"{symbol} {kind}" for symbol, kind in not_ordinary.items()]
        more = f", ... and {len(named) - 20} more" if len(named) > 20 else ""
        listed = ", ".join(named[:20])
        typer.echo(f"not ordinary shares (outside the AI book and the equal-weighted benchmark): {listed}{more}")


@exchange_app.command("serve")
@one_line_errors
def exchange_serve(
    host: Host = "127.0.0.1",
    port: Port = 8765,
    news_signal: float = typer.Option(1.0, help="How strongly news tone moves the next day's return (0: not at all)."),
    replay: str | None = typer.Option(
        None,
        "--replay",
        help="Serve real end-of-day files (a folder or a file the importer reads) instead of the "
        "simulator; default: MARKETINTEL_REPLAY_PATH when set.",
    ),
    through: str | None = typer.Option(
        None, "--through", help="With a replay: published through this day (YYYY-MM-DD); default: the files' last day."
    ),
) -> None:
    """Serve the exchange website: the simulator (seed and size from settings) or a replay of real files."""
    import uvicorn

    from ingest.markets import simulator_for
    from ingest.simulator.site import SimulatorSite
    from market.errors import InvalidInputError

    settings = get_settings()
    listen_address(host, port)
    base_url = f"http://{host}:{port}"
    if replay or settings.replay_path:
        site = _replayed_site(settings, replay, through, base_url)
    else:
        if through:
            raise InvalidInputError("--through applies to a replay; give --replay PATH")
        site = SimulatorSite(simulator_for(settings, news_signal=news_signal), base_url=base_url)
        typer.echo(f"simulated exchange on {base_url} (trade quotes: /market/trade-quotes?date=YYYY-MM-DD)")
    from pipeline.serving import uvicorn_log_options, uvicorn_stop_options

    uvicorn.run(
        site.asgi_app(),
        host=host,
        port=port,
        log_level="warning",
        **uvicorn_log_options(),
        **uvicorn_stop_options(settings.shutdown_grace_seconds),
    )


def _replayed_site(settings: Settings, replay: str | None, through: str | None, base_url: str) -> SimulatorSite:
    """The exchange site over real files, published through `through` (default: their
    last day), with what the replay read and left out printed, one line each."""
    from ingest.replay import replay_for
    from ingest.simulator.site import SimulatorSite
    from market.clock import parse_trading_date
    from market.errors import InvalidInputError

    market = replay_for(settings, replay)
    last = market.days[-1]
    day = parse_trading_date(through) if through else last
    if not market.days[0] <= day <= last:
        raise InvalidInputError(f"--through {day} is outside the replayed files ({market.days[0]} to {last})")
    source = market.source
    typer.echo(
        f"replayed exchange on {base_url}: {len(market.days)} days of {source.path} ({source.format}, "
        f"{len(market.symbols)} instruments, {market.currency}), published through {day}; "
        f"served as missing: {', '.join(source.lacks + ['fundamentals', 'news'])}; macro simulated"
        + (f"; {len(source.bad_rows)} unreadable rows skipped" if source.bad_rows else "")
        + (f"; {len(source.repeated_days)} days left out as copies of the day before" if source.repeated_days else "")
    )
    for line in source.lines():
        typer.echo(line)
    return SimulatorSite(market, base_url=base_url, published_through=day)


@app.command("demo")
@one_line_errors
def demo(
    days: int | None = typer.Option(
        None, "--days", min=1, help="History to backfill first; default 260 simulated or 1,000 replayed days."
    ),
    market: str | None = typer.Option(
        None,
        "--market",
        help="Real end-of-day files (NSE daily or per-company, or "
        "the generic OHLCV CSV) to replay instead of the simulator.",
    ),
    serve: bool = typer.Option(True, "--serve/--no-serve", help="End by serving the API until Ctrl-C."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="API port (0: any free port)."),
) -> None:
    """The whole day on the embedded store: backfill history, bootstrap the track record,
    then T0 over real HTTP from the simulated (or replayed) exchange, T1's stages and T2
    through their notebooks, then the API.

    With --no-serve the demo still keeps the admin key it would serve with (generated once
    into secrets_dir/admin-key unless MARKETINTEL_ADMIN_KEY is set: `demo_admin_key`) and
    says where: a newcomer's next step is `marketintel serve`, whose refusal named
    `marketintel demo` as what writes that file, and `demo --no-serve` had not. A --port
    it cannot listen on (one in use) is refused in one line before anything runs."""
    import faulthandler
    import signal
    import time

    from cli.demo import demo_admin_key, demo_api, run_demo

    # `kill -USR1 <pid>` prints every thread's stack to stderr: how an operator (and the
    # demo test) sees where a demo that does not stop is waiting.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if serve and port:  # refused before the demo's minutes of work, as `serve` refuses it (it was a traceback after)
        listen_address("127.0.0.1", port)
    for line in run_demo(get_settings(), days, market):
        typer.echo(line)
    if not serve:
        typer.echo(f"admin key for `marketintel serve`: {demo_admin_key(get_settings())[1]}")
        return
    with demo_api(get_settings(), port) as lines:
        for line in lines:
            typer.echo(line)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            typer.echo("API stopped")


@app.command("bootstrap")
@one_line_errors
def bootstrap_record(
    days: int = typer.Option(250, "--days", min=1, help="Trading days the validation record covers (the latest ones)."),
    min_train_days: int = typer.Option(
        120, "--min-train-days", min=20, help="Trading days of history before the record's first day."
    ),
    replay_days: int = typer.Option(60, "--replay-days", min=0, help="Last record days the AI executor replays."),
    end: str | None = typer.Option(
        None,
        "--end",
        help="The record's last day (YYYY-MM-DD); default and latest "
        "allowed: the day before the first live prediction, else the latest priced day (a later one is refused).",
    ),
) -> None:
    """A track record before the first live day: the walk-forward validation record over
    the stored history, the AI executor replayed over its last days, then T2. Re-running
    writes nothing new."""
    from market.clock import default_calendar, parse_trading_date
    from pipeline.bootstrap import BootstrapTerms, bootstrap, refuse_late_end
    from store.migrations import current_store

    settings = get_settings()
    terms = BootstrapTerms(parse_trading_date(end) if end is not None else None, days, min_train_days, replay_days)
    engine, calendar = current_store(settings), default_calendar()
    if terms.end is not None:  # refused, not moved back to the latest allowed day without a word
        with engine.connect() as conn:
            refuse_late_end(conn, calendar, terms.end)
    result = bootstrap(engine, settings, calendar, terms)
    for line in result.lines():
        typer.echo(line)


@app.command("run-day")
@one_line_errors
def run_day(
    date: str | None = typer.Option(None, "--date", help="Trading date; default: the latest closed trading day."),
) -> None:
    """T0 and T1 for one trading day without Airflow, through the stage notebooks; ends
    with a table of the stages: status, duration and rows written (also when one fails)."""
    from tqdm import tqdm

    from market.clock import parse_trading_date
    from pipeline.day import DayStage, stage_table, terminate_as_interrupt
    from pipeline.day import run_day as run
    from pipeline.stage_lists import T0_STAGES, T1_STAGES
    from store.migrations import current_store

    settings = get_settings()
    day = parse_trading_date(_default_date(date))
    current_store(settings)  # before a kernel starts: one line, not a failed notebook
    done: list[DayStage] = []
    try:
        with (
            terminate_as_interrupt(),
            tqdm(total=len(T0_STAGES + T1_STAGES), desc=f"run-day {day}", unit="stage", disable=None) as bar,
        ):
            for stage in run(day, settings):
                done.append(stage)
                bar.update()
    finally:  # the stages that ran, also when one failed (nothing when the day was refused)
        for line in stage_table(done) if done else []:
            typer.echo(line)
    typer.echo(f"executed notebooks: {settings.runs_dir / day.isoformat()}  (index: {settings.runs_dir / 'index.md'})")


@notify_app.command("deliver")
@one_line_errors
def notify_deliver(
    date: str | None = typer.Option(None, "--date", help="Only this trading date's notifications; default: all."),
) -> None:
    """Send every stored notification not yet delivered to MARKETINTEL_WEBHOOK_URL; prints
    what was delivered, failed and still waits, and exits 2 when any still waits (a webhook
    that failed them, or none configured), so cron and alerting see it."""
    from desk import Desk
    from market.clock import parse_trading_date

    delivery = Desk.from_settings(get_settings()).deliver_notifications(
        parse_trading_date(date) if date is not None else None
    )
    echo_json(delivery)
    if delivery["waiting"]:
        why = (
            "no webhook is configured (MARKETINTEL_WEBHOOK_URL)"
            if delivery["webhook"] == "not configured"
            else "the webhook did not accept them; the next pass retries them"
        )
        say_error(f"{delivery['waiting']} notification(s) not delivered: {why}")
        raise typer.Exit(2)


@app.command("monitor")
@one_line_errors
def monitor(
    check: bool = typer.Option(
        False,
        "--check",
        help="Exit 2 when the state is ALERT, when predicted days were not monitored, or when the monitor "
        "never ran (for cron and alerting); 0 otherwise.",
    ),
) -> None:
    """The model monitor's latest day: the overall state (and how many predicted days since
    it were not monitored), then each check on one line (state, check, figure against its
    WATCH / ALERT thresholds, since, note)."""
    from desk import Desk

    desk = Desk.from_settings(get_settings())  # on a current schema (store/migrations.py current_store)
    with desk.engine.connect() as conn:
        state = desk.monitor_state(conn)
    for line in monitor_lines(state):
        typer.echo(line)
    if check and (state["state"] in (None, "ALERT") or state["unmonitored_days"]):
        raise typer.Exit(2)


def monitor_lines(state: dict) -> list[str]:
    from desk.domain import said_apart

    behind = state["unmonitored_days"]
    since = (
        f"; {behind} predicted day{'s' if behind != 1 else ''} not monitored, the latest "
        f"{state['latest_predicted'].isoformat()}"
        if behind
        else ""
    )
    if state["state"] is None:
        return [f"monitor: no state yet ({state['reason']}){since}"]
    lines = [f"monitor {state['trading_date'].isoformat()}: {state['state']}{since}"]
    for c in state["checks"]:
        figure = f"{c['measure'].split(':')[0]} " + ("-" if c["figure"] is None else f"{c['figure']:.4f}")
        bounds = (
            ""
            if c["worse_when"] is None
            # the lines to the figure's 4 decimals: rounding can make a figure level with its line, never swap them
            else f" (worse {c['worse_when']}: watch {c['watch_threshold']:.4f}, alert {c['alert_threshold']:.4f})"
        )
        since = f" since {c['since'].isoformat()}" if c["since"] else ""
        # why the figure is missing, or, for a check in breach, what its figure does not say (a stuck, missing
        # or frozen feed; the day's value, the window and the mean that moved); never the reading in words again
        shown = c["figure"] is None or c["state"] != "OK"
        note = f"  {apart}" if shown and (apart := said_apart(c)) else ""
        lines.append(f"{c['state']:<5}  {c['check']:<28} {figure}{bounds}{since}{note}")
    return lines


app.command("report")(report)  # a client's command (cli/report.py), in its place in the list


@app.command("serve")
@one_line_errors
def serve(
    host: Host = "127.0.0.1",
    port: Port = 8000,
    workers: int = typer.Option(
        1,
        min=1,
        help="Worker processes (more than 1 shares rate limits through the database, "
        "or through Redis when MARKETINTEL_REDIS_URL is set).",
    ),
) -> None:
    """Start the HTTP API (uvicorn). Refuses to start without a valid admin key
    (MARKETINTEL_ADMIN_KEY, else the one `marketintel demo` kept in var/secrets/admin-key)."""
    import os

    import uvicorn

    settings = get_settings()
    settings.checked_admin_key()
    listen_address(host, port)
    from desk import Desk

    Desk.serving(settings)  # its pepper checks, in one line here: raised in uvicorn's app factory, a traceback
    if settings.redis_url:
        typer.echo("per-key rate limits are counted in Redis (MARKETINTEL_REDIS_URL)")
    elif workers > 1 and settings.rate_limit_store == "memory":
        # per-process counters would let each worker grant the whole limit
        os.environ["MARKETINTEL_RATE_LIMIT_STORE"] = "database"
        typer.echo("several workers: per-key rate limits are counted in the database")
    from pipeline.serving import uvicorn_log_options, uvicorn_proxy_options, uvicorn_stop_options

    uvicorn.run(
        "api.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        **uvicorn_log_options(),
        **uvicorn_proxy_options(settings.trusted_proxies),
        **uvicorn_stop_options(settings.shutdown_grace_seconds),
    )


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def main(argv: list[str] | None = None) -> None:
    """The `marketintel` entry point; its standard output outlives its reader (`UnreadOutput`)."""
    import sys

    from cli.output import UnreadOutput

    sys.stdout = UnreadOutput(sys.stdout)
    app(args=argv)
