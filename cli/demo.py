"""`make demo`: one simulated trading day on the embedded default, end to end.

Upgrades the store, backfills simulated history (through the T0 code path, in-process),
starts the simulated exchange on a free loopback port, then runs the day's stage
notebooks exactly as Airflow would: T0 scrapes the latest closed trading day over real
HTTP, T1's pre-flight checks the delivery, T1 ingests the day's news and disclosures,
builds the sentiment composite, computes the features and scores the day (training the
first model), writes the day's analysis and notifications, the AI portfolio trades under
the liquidity rails, and the health stage
counts the store; T3 then reads the three macro sources and computes the week's macro
parameters; both PDF reports are written to `reports_dir`. Then the API serves the result on loopback (`demo_api`) with a fresh
client key, until Ctrl-C.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from decimal import Decimal
from typing import Iterator

from market.clock import TradingCalendar, exchange_now, latest_closed_trading_day
from market.settings import Settings, get_settings
from models.macro_model import week_start
from pipeline.backfill import backfill
from ingest.markets import market_for
from ingest.simulator.site import SimulatorSite
from pipeline.bootstrap import bootstrap
from pipeline.stage_lists import T0_STAGES, T1_STAGES
from pipeline.notebooks import run_stage_notebook
from pipeline.serving import serve_in_thread
from store import tables
from store.engine import migration_engine, service_engine
from store.history import current_rows
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
    yield _demo_client(settings)
    yield from bootstrap(service_engine(settings), settings, market.calendar, end=previous).lines()
    site = SimulatorSite(market, published_through=day)
    with serve_in_thread(site.asgi_app()) as base_url:
        # The stage notebooks run in kernels that read settings from the environment.
        os.environ["MARKETINTEL_EXCHANGE_BASE_URL"] = base_url
        get_settings.cache_clear()
        yield f"{'replayed' if replay else 'simulated'} exchange serving on {base_url}"
        for stage in DAY_STAGES:
            output = run_stage_notebook(stage, day, settings=get_settings(), trigger="demo")
            yield f"{stage:<14} {day}  ->  {output}"
        monday = week_start(day)  # T3 runs on Mondays: the week's macro parameters
        output = run_stage_notebook("t3_macro", monday, settings=get_settings(), trigger="demo")
        yield f"{'t3_macro':<14} {monday}  ->  {output}"
    yield from _house_portfolio_and_suggestions(get_settings(), day, market.calendar.next_trading_day(day))
    yield _track_record_line(get_settings())
    yield from _reports(get_settings(), market.calendar)
    yield f"index of every executed notebook: {get_settings().runs_dir / 'index.md'}"


def _track_record_line(settings: Settings) -> str:
    """The AI portfolio's record in one line, as GET /api/ai-portfolio/track-record serves it."""
    from views.track_record import ai_track_record

    with service_engine(settings).connect() as conn:
        record = ai_track_record(conn, settings.ai_starting_cash)
    if record.get("days", 0) < 2:
        return "AI portfolio track record: fewer than two executed days"
    bench = record["benchmarks"].get("equal_weight_liquid", {})

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:+.2%}"

    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    costs = record.get("costs") or {}
    why = "" if record.get("trades") else " (no name's held edge cleared its round-trip cost: every Score above the LONG line says why)"
    return (f"AI portfolio track record over {record['days']} days: {record.get('trades', 0)} fills{why}, return "
            f"{pct(record['total_return'])}, Sharpe {num(record['sharpe'])}, max drawdown {pct(record['max_drawdown'])}, "
            f"turnover {num(record.get('annual_turnover'))}x a year, costs {costs.get('total', 0):,.2f}; equal-weighted "
            f"liquid universe {pct(bench.get('total_return'))}, information ratio {num(bench.get('information_ratio'))}, "
            f"beta {num(bench.get('beta'))} (GET /api/ai-portfolio/track-record)")


def _reports(settings: Settings, calendar: TradingCalendar) -> Iterator[str]:
    """Both PDF reports of the day, under fixed names so the README's page images can be
    remade from any demo run (`make report-images`)."""
    from market.clock import utc_now
    from reports import generate, save

    for kind, name in (("quant-briefing", "quant-briefing.pdf"), ("compliance", "compliance-report.pdf")):
        made = generate(kind, service_engine(settings), settings, calendar, utc_now())
        yield f"{kind:<14} report  ->  {save(made, settings.reports_dir / name)} ({made.pages} pages)"


def demo_admin_key(settings: Settings) -> tuple[Settings, str]:
    """The configured admin key, or one generated once into secrets_dir/admin-key (0600);
    returns the settings carrying it and where it came from."""
    import secrets as random

    from pydantic import SecretStr

    if settings.admin_key is not None and settings.admin_key.get_secret_value():
        settings.checked_admin_key()
        return settings, "MARKETINTEL_ADMIN_KEY (environment or .env)"
    path = settings.secrets_dir / "admin-key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(f"svc-admin-{random.token_hex(16)}\n")
    key = path.read_text().strip()
    return settings.model_copy(update={"admin_key": SecretStr(key)}), str(path)


@contextmanager
def demo_api(settings: Settings, port: int) -> Iterator[list[str]]:
    """Serve the API on loopback with a fresh demo client key; yields the lines to print."""
    from api import keystore
    from api.app import create_app

    settings, admin_from = demo_admin_key(settings)
    client = keystore.generate(service_engine(settings), settings, DEMO_CLIENT, DEMO_TIER)
    with serve_in_thread(create_app(settings), port=port, trusted_proxies=settings.trusted_proxies) as base:
        key = client["api_key"]
        yield [
            f"API serving on {base}  (Ctrl-C stops it)",
            f"docs: {base}/docs   (OpenAPI: {base}/openapi.json)",
            f"GraphQL: {base}/graphql   (GraphiQL in a browser; put the key in its Headers pane as X-API-Key)",
            f"admin key: {admin_from}",
            f"client key for 'Demo Client' (PRO, shown once): {key}",
            "try:",
            f"  curl -s -H 'X-API-Key: {key}' {base}/api/market/latest",
            f"  curl -s -H 'X-API-Key: {key}' {base}/api/ai-portfolio/summary",
            f"  curl -s -H 'X-API-Key: {key}' '{base}/api/market/history/{_first_symbol(settings)}?limit=5'",
        ]


DEMO_CLIENT, DEMO_TIER = "Demo Client", "PRO"
DEMO_CLIENT_CASH = Decimal("5000000")
DEMO_DEPOSIT = "DEMO:opening-cash"


def _demo_client(settings: Settings) -> str:
    """The demo client (the one `demo_api` prints a key for) with a portfolio and its
    opening cash, before T2 runs, so its suggestions are waiting when the API starts."""
    from api import keystore
    from market.clock import utc_now
    from portfolio import ledger
    from portfolio.ledger import client_portfolio_id

    engine = service_engine(settings)
    portfolio_id = client_portfolio_id(keystore.ensure_client(engine, DEMO_CLIENT, DEMO_TIER))
    with ledger.portfolio_transaction(engine, portfolio_id) as conn:
        c = tables.cash_entries.c
        if not current_rows(conn, tables.cash_entries, where=[c.portfolio_id == portfolio_id, c.entry_id == DEMO_DEPOSIT]):
            ledger.record_cash(conn, portfolio_id, DEMO_DEPOSIT, DEMO_CLIENT_CASH, "DEPOSIT", utc_now(),
                               "demo client's opening cash")
        cash = ledger.cash_balance(conn, portfolio_id)
    return f"demo client '{DEMO_CLIENT}' ({DEMO_TIER}): portfolio {portfolio_id}, cash {cash:,.2f}"


def _first_symbol(settings: Settings) -> str:
    from portfolio.market import known_symbols

    with service_engine(settings).connect() as conn:
        return min(known_symbols(conn), default="NCBFG")


def _house_portfolio_and_suggestions(settings: Settings, day, morning) -> Iterator[str]:  # noqa: ANN001
    """The house portfolio synchronised from a generated broker statement, then the next
    morning's T2 suggestions for it."""
    from portfolio.market import market_days
    from portfolio.statement_pdfs import sample_holdings_statement
    from portfolio.statements import import_statement
    from portfolio.trading import open_client_portfolio

    engine = service_engine(settings)
    house = open_client_portfolio(engine, "admin", kind="HOUSE")
    with engine.connect() as conn:
        pdf = sample_holdings_statement(market_days(conn, day), day)
    path = settings.data_dir / "sample-statement.pdf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf)
    result = import_statement(engine, settings, house, pdf, path.name)
    yield f"house portfolio synchronised from {path}: {result['status']}, {len(result['changes'])} changes"
    output = run_stage_notebook("t2_suggestions", morning, settings=settings, trigger="demo")
    yield f"{'t2_suggestions':<14} {morning}  ->  {output}"
