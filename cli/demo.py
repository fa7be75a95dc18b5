"""`make demo`: one simulated trading day on the embedded default, end to end.

Upgrades the store, backfills simulated history (through the T0 code path, in-process),
starts the simulated exchange on a free loopback port, then runs the day's stage
notebooks exactly as Airflow would: T0 scrapes the latest closed trading day over real
HTTP, T1's pre-flight checks the delivery, T1 ingests the day's news and disclosures,
builds the sentiment composite, computes the features and scores the day (training the
first model), writes the day's analysis and notifications, the AI portfolio trades under
the liquidity rails, and the health stage counts the store; T3 then reads the three macro
sources and computes the week's macro parameters; both PDF reports are written to
`reports_dir`. Then the API serves the result on loopback (`demo_api`) with the demo
client's key, until Ctrl-C: one key, kept in `secrets_dir/demo-client-key` and reused by
the next run (`demo_client_key`), so re-running the demo never leaves the demo client a
second active key.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path

from desk import HORIZON, Account, Desk, counted, statistic_pct, week_start
from ingest.markets import market_for
from ingest.simulator.macro import macro_span_reason, simulated_macro_covers
from ingest.simulator.site import SimulatorSite
from market.clock import TradingCalendar, exchange_now, latest_closed_trading_day
from market.settings import Settings, get_settings
from pipeline.backfill import backfill
from pipeline.bootstrap import Bootstrap, BootstrapTerms, bootstrap
from pipeline.notebooks import one_kernel, run_stage_notebook
from pipeline.serving import serve_in_thread
from pipeline.stage_lists import T0_STAGES, T1_STAGES
from store.engine import migration_engine, service_engine
from store.migrations import upgrade

DAY_STAGES = [*T0_STAGES, *T1_STAGES, "health"]


SIMULATED_DAYS = 260  # a year of simulated history: the record's walk-forward trains on 120 days, predicts 140
REPLAY_DAYS = 1000  # about four years of real history: 750 days of training before a 250-day record


def run_demo(settings: Settings, history_days: int | None = None, market_path: str | None = None) -> Iterator[str]:
    """The demo on the simulator, or with `market_path` on that real history (replayed
    through the same exchange website; the demo day is the files' last day)."""
    if market_path is not None:
        # Every stage kernel, the API and the reports must see the replay's calendar.
        os.environ["MARKETINTEL_REPLAY_PATH"] = str(market_path)
        get_settings.cache_clear()
        settings = settings.model_copy(update={"replay_path": get_settings().replay_path})
    upgrade(migration_engine(settings))
    market = market_for(settings)
    replay = settings.replay_path is not None
    day = market.days[-1] if replay else latest_closed_trading_day(exchange_now(), market.calendar)
    previous = market.calendar.previous_trading_day(day)
    days = history_days or (REPLAY_DAYS if replay else SIMULATED_DAYS)
    reports = backfill(service_engine(settings), settings, days, previous, market)
    source = f"real trading days from {settings.replay_path}" if replay else "simulated trading days"
    yield f"backfilled {len(reports)} {source} up to {previous}"
    yield from market.source.lines() if replay else []
    yield _demo_client(settings)
    built = bootstrap(service_engine(settings), settings, market.calendar, BootstrapTerms(end=previous))
    yield from bootstrap_lines(settings, built)
    site = SimulatorSite(market, published_through=day)
    with one_kernel():  # the stages share one kernel (pipeline/notebooks.py)
        with serve_in_thread(site.asgi_app()) as base_url:
            # The stage notebooks run in kernels that read settings from the environment.
            os.environ["MARKETINTEL_EXCHANGE_BASE_URL"] = base_url
            # ... whose disclosure PDFs the demo's own simulator serves from 127.0.0.1
            os.environ["MARKETINTEL_ALLOW_PRIVATE_ENCLOSURES"] = "true"
            get_settings.cache_clear()
            yield f"{'replayed' if replay else 'simulated'} exchange serving on {base_url}"
            for stage in DAY_STAGES:
                output = run_stage_notebook(stage, day, settings=get_settings(), trigger="demo")
                yield f"{stage:<14} {day}  ->  {output}"
            monday = week_start(day)  # T3 runs on Mondays: the week's macro parameters
            if simulated_macro_covers(monday):
                output = run_stage_notebook("t3_macro", monday, settings=get_settings(), trigger="demo")
                yield f"{'t3_macro':<14} {monday}  ->  {output}"
            else:  # a replay of older files: the simulated macro sources publish no figures for that week
                yield f"{'t3_macro':<14} {monday}  ->  skipped: {macro_span_reason(monday)}"
        yield from _house_portfolio_and_suggestions(get_settings(), day, market.calendar.next_trading_day(day))
    yield _track_record_line(get_settings())
    yield from _reports(get_settings(), market.calendar)
    yield f"index of every executed notebook: {get_settings().runs_dir / 'index.md'}"


def bootstrap_lines(settings: Settings, result: Bootstrap) -> list[str]:
    """Bootstrap's lines, the validation record's counted as GET /api/ai/performance, GraphQL
    `modelPerformance` and both PDF reports count it: from `views.performance` itself.

    The walk-forward stores a prediction for every day of the record, its last day
    included, but that day's outcome (the next session's close) is not in the history the
    record was built from, so its predictions are not scored: the API's `predictions` (the
    metrics' sample size) is the stored count less that day's. Printing the stored count
    (`ValidationRecord.predictions`) made the demo say 8,260 where the API and the reports
    say 8,201; the line now prints the API's figure and names the difference."""
    lines = result.lines()
    record = result.record
    if record.first is None:
        return lines
    desk = Desk.from_settings(settings)
    with desk.engine.connect() as conn:
        shown = desk.validation_record(conn)
    if shown["reason"]:  # no stored metrics: bootstrap's own line says why
        return lines
    binary = shown["metrics"].get("binary_accuracy") or {}
    accuracy = "n/a" if binary.get("value") is None else f"{binary['value']:.1%}"
    base = "n/a" if binary.get("base_rate") is None else f"{binary['base_rate']:.1%}"
    unscored = record.predictions - shown["predictions"]
    note = (
        f"; {unscored:,} more are stored without an outcome (the record's last {HORIZON + 1} days: the close "
        f"{HORIZON + 1} sessions later, where their label ends, came after the record)"
        if unscored > 0
        else ""
    )
    line = (
        f"validation record {shown['period_start']} to {shown['period_end']}: {shown['predictions']:,} out-of-sample "
        f"predictions with outcomes by {shown['models']} walk-forward models, binary accuracy {accuracy} (base rate "
        f"{base}, n={binary.get('sample_size', 0)}), as GET /api/ai/performance counts them{note}; rows inserted "
        f"{record.inserted}; {record.seconds:.1f}s"
    )
    return [line, *lines[1:]]


def _track_record_line(settings: Settings) -> str:
    """The AI portfolio's record in one line, as GET /api/ai-portfolio/track-record serves it:
    fills and average exposure first, then each benchmark; a book that held cash
    (`mostly_cash`) gets the record's note in place of information ratios and betas, which
    would describe holding cash, not skill."""
    desk = Desk.from_settings(settings)
    with desk.engine.connect() as conn:
        record = desk.ai_track_record(conn).value().as_dict()
    if record.get("days", 0) < 2:
        return f"AI portfolio track record: {record.get('reason') or 'fewer than two executed days'}"
    bench = record["benchmarks"].get("equal_weight_liquid", {})
    cash = bool(record.get("mostly_cash"))

    def pct(value: float | None, name: str = "total_return") -> str:
        """A return (signed), or the statistic `name` as the reports show it (reports/format.py)."""
        return "n/a" if value is None else statistic_pct(name, value)

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    costs = record.get("costs") or {}
    fills = record.get("fill_count", record.get("trades", 0))
    why = (
        "" if fills else " (no order filled: each day's plan and what it skipped are in GET /api/ai-portfolio/history)"
    )
    exposure = record.get("average_exposure")
    held = "n/a" if exposure is None else f"{exposure:.1%}"
    line = (
        f"AI portfolio track record over {record['days']} days: {counted(fills, 'fill')}{why}, average exposure "
        f"{held} of equity, return {pct(record['total_return'])}, Sharpe {num(record['sharpe'])}, max drawdown "
        f"{pct(record['max_drawdown'], 'max_drawdown')}, turnover {_turnover(record.get('annual_turnover'))}, costs "
        f"{costs.get('total', 0):,.2f}; equal-weighted liquid universe {pct(bench.get('total_return'))}"
        f"{_ratios(bench, num, cash)}{_index_part(record, pct, num, cash)} (GET /api/ai-portfolio/track-record)"
    )
    return f"{line}. {record['note']}" if cash and record.get("note") else line


def _turnover(value: float | None) -> str:
    """Turnover a year, or why there is none (under a year of returns: not annualised)."""
    return "a year n/a (under a year of returns)" if value is None else f"{value:.2f}x a year"


def _ratios(figures: dict, num, cash: bool) -> str:  # noqa: ANN001 - the formatter above
    """A benchmark's information ratio and beta, left out where the book held cash."""
    if cash:
        return ""
    return f", information ratio {num(figures.get('information_ratio'))}, beta {num(figures.get('beta'))}"


def _index_part(record: dict, pct, num, cash: bool = False) -> str:  # noqa: ANN001 - the two formatters above
    """The market index benchmark's part of the demo's track-record line, where there is one."""
    index = record["benchmarks"].get("index")
    if not index:
        return ""
    source = record.get("index_source")
    name = "the service's cap-weighted index" if source == "cap_weighted" else f"the index {source}"
    return f"; {name} {pct(index.get('total_return'))}{_ratios(index, num, cash)}"


def _reports(settings: Settings, calendar: TradingCalendar) -> Iterator[str]:
    """Both PDF reports of the day, under fixed names so the README's page images can be
    remade from any demo run (`make report-images`)."""
    desk = Desk(service_engine(settings), settings, calendar).on_market_clock()
    for kind, name in (("quant-briefing", "quant-briefing.pdf"), ("compliance", "compliance-report.pdf")):
        made = desk.report(kind)
        yield f"{kind:<14} report  ->  {desk.save_report(made, settings.reports_dir / name)} ({made.pages} pages)"


def demo_admin_key(settings: Settings) -> tuple[Settings, str]:
    """The configured admin key (MARKETINTEL_ADMIN_KEY, else the one kept in
    secrets_dir/admin-key: market/settings.py), or one generated once into that file (0600);
    returns the settings carrying it and where it came from."""
    import secrets as random

    from pydantic import SecretStr

    if settings.admin_key is None or not settings.admin_key.get_secret_value():
        path = settings.admin_key_file
        if not path.exists():
            _write_secret(path, f"svc-admin-{random.token_hex(16)}", keep_existing=True)
        settings = settings.model_copy(update={"admin_key": SecretStr(path.read_text().strip())})
    settings.checked_admin_key()
    return settings, settings.admin_key_origin()


@contextmanager
def demo_api(settings: Settings, port: int) -> Iterator[list[str]]:
    """Serve the API on loopback with the demo client's key (`demo_client_key`); yields the lines to print."""
    from api.app import create_app

    settings, admin_from = demo_admin_key(settings)
    key, how, kept = demo_client_key(settings)
    with serve_in_thread(
        create_app(settings),
        port=port,
        trusted_proxies=settings.trusted_proxies,
        grace_seconds=settings.shutdown_grace_seconds,
    ) as base:
        yield [
            f"API serving on {base}  (Ctrl-C stops it)",
            f"docs: {base}/docs   (OpenAPI: {base}/openapi.json)",
            f"GraphQL: {base}/graphql   (GraphiQL in a browser; put the key in its Headers pane as X-API-Key)",
            f"admin key: {admin_from}",
            f"client key for 'Demo Client' ({DEMO_TIER}, {how}): {key}",
            kept,
            "try:",
            f"  curl -s -H 'X-API-Key: {key}' {base}/api/market/latest",
            f"  curl -s -H 'X-API-Key: {key}' {base}/api/ai-portfolio/summary",
            f"  curl -s -H 'X-API-Key: {key}' '{base}/api/market/history/{_first_symbol(settings)}?limit=5'",
        ]


DEMO_CLIENT, DEMO_TIER = "Demo Client", "PRO"
DEMO_CLIENT_CASH = Decimal("5000000")
DEMO_DEPOSIT = "DEMO:opening-cash"
DEMO_KEY_FILE = "demo-client-key"  # in secrets_dir, mode 0600, beside the generated admin key


def demo_client_key(settings: Settings) -> tuple[str, str, str]:
    """The demo client's one active key: the key kept in secrets_dir/demo-client-key when
    it is still usable on this store (the same client's, active, no rotation or revocation
    scheduled), else a new one, written there (0600) for the next run. Every other active
    key of the demo client is then revoked, so however often the demo runs (and whatever
    earlier runs minted) the demo client has exactly one active key, and the curl lines a
    user pasted from the last run keep working. Returns the key, how it was come by (for
    the printed line) and a line saying where it is kept and what was revoked."""
    desk = Desk.from_settings(settings)
    client_id = desk.client(DEMO_CLIENT, DEMO_TIER)
    path = settings.secrets_dir / DEMO_KEY_FILE
    kept = path.read_text().strip() if path.is_file() else ""
    record = None
    if kept:
        with desk.engine.connect() as conn:
            record = desk.key_record(conn, kept)
    if record is not None and record.client_id == client_id and record.expires_at is None:
        key, key_id, how = kept, record.key_id, f"reused from {path}"
    else:
        issued = desk.issue_key(DEMO_CLIENT, DEMO_TIER)
        key, key_id, how = issued["api_key"], issued["key_id"], "shown once"
        _write_secret(path, key)
    stale = [
        k["key_id"]
        for k in desk.list_keys()
        if k["client_id"] == client_id and k["key_id"] != key_id and k["status"] in ("ACTIVE", "EXPIRING")
    ]
    for key_id_ in stale:
        desk.revoke_key(key_id_)
    revoked = f"; revoked the demo client's {len(stale)} other active key(s)" if stale else ""
    return key, how, f"demo client key kept in {path} (mode 0600): the next demo reuses it{revoked}"


def _write_secret(path: Path, secret: str, *, keep_existing: bool = False) -> None:
    """`secret` into `path`, mode 0600 from the start: written whole to a private file that
    takes the name only once complete, so a stop leaves no partial secret and nobody else
    can read it at any moment. It replaces `path`; with `keep_existing` it takes the name
    only where no other writer did first (`os.link` refuses an existing name: two demos
    started at once keep one admin key, the first one's)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.unlink(missing_ok=True)
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(f"{secret}\n")
        if not keep_existing:
            os.replace(partial, path)
        else:
            with suppress(FileExistsError):
                os.link(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _demo_client(settings: Settings) -> str:
    """The demo client (the one `demo_api` prints a key for) with a portfolio and its
    opening cash, before T2 runs, so its suggestions are waiting when the API starts."""
    desk = Desk.from_settings(settings)
    portfolio_id = Account.of_client(desk.client(DEMO_CLIENT, DEMO_TIER)).portfolio_id
    cash = desk.deposit_once(portfolio_id, DEMO_DEPOSIT, DEMO_CLIENT_CASH, "demo client's opening cash")
    return f"demo client '{DEMO_CLIENT}' ({DEMO_TIER}): portfolio {portfolio_id}, cash {cash:,.2f}"


def _first_symbol(settings: Settings) -> str:
    desk = Desk.from_settings(settings)
    with desk.engine.connect() as conn:
        return min((i["symbol"] for i in desk.instruments(conn)), default="NCBFG")


def _house_portfolio_and_suggestions(settings: Settings, day, morning) -> Iterator[str]:  # noqa: ANN001
    """The house portfolio synchronised from a generated broker statement, then the next
    morning's T2 suggestions for it."""
    desk = Desk.from_settings(settings)
    house = desk.open_portfolio(Account.house())
    pdf = desk.sample_statement(day)
    path = settings.data_dir / "sample-statement.pdf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf)
    result = desk.import_statement(house, pdf, path.name)
    yield f"house portfolio synchronised from {path}: {result['status']}, {len(result['changes'])} changes"
    output = run_stage_notebook("t2_suggestions", morning, settings=settings, trigger="demo")
    yield f"{'t2_suggestions':<14} {morning}  ->  {output}"
