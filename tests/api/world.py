"""A small, hand-set market for the API tests, written through the real services: prices
with movement (so indicators are not trivial), predictions, two executed AI days (a decision and its fill), client
keys and a pending suggestion."""

from __future__ import annotations

import atexit
import math
import shutil
import sqlite3
import tempfile
import uuid
from contextlib import closing
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

import psycopg
from pydantic import SecretStr
from sqlalchemy import Engine, select

from desk import keys as keystore
from desk.keys import PEPPER_FILE
from market.settings import Settings
from models.sentiment.composite import METHOD as SENTIMENT_METHOD
from models.sentiment.scorer import SCORER_ID
from portfolio import ai, suggestions
from portfolio.trading import move_cash
from store import tables
from store.engine import build_engine, dispose_engines, service_engine
from store.history import append_history
from store.migrations import upgrade
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, price_row, seed_predictions
from views.bars import refresh_bars

MONDAY = CALENDAR.next_trading_day(DAY)
MORNING = datetime(2026, 11, 23, 12, 30, tzinfo=UTC)  # 07:30 exchange time, Monday
SYMBOLS = {  # symbol: (base close, daily volume, half-spread)
    "LIQ": (50.0, 40_000, 0.05),
    "MID": (20.0, 30_000, 0.04),
    "SLOW": (8.0, 3_000, 0.30),
    "DRY": (12.0, 0, 0.5),
}
HISTORY_DAYS = 60
HOLD_REASON = "edge +0.20% over 1 sessions below round-trip cost 1.40% (spread 0.40%, fees 1.00%)"
# LIQ's prediction as the live stage stores its reasons (models/reasons.py); MID's has none (before 0015)
LIQ_REASONS = {
    "base_value": 0.012345,
    "top": [
        {"feature": "return_1d", "contribution": -0.21},
        {"feature": "momentum_5", "contribution": 0.15},
        {"feature": "market_breadth", "contribution": 0.04},
    ],
    "missing": ["volatility_60"],
}
LIQ_RAW_SCORE = -0.02  # the raw score its reasons add up to, with the other 11 inputs' -0.012345
MACRO_MONDAY = date(2026, 11, 16)


def close_of(symbol: str, i: int) -> float:
    base = SYMBOLS[symbol][0]
    return round(base * (1 + 0.03 * math.sin(i / 3 + len(symbol)) + 0.001 * i), 2)


def price_rows(days: list[date], first: int) -> list[dict]:
    """Every symbol's bar on each of `days`, the first being the history's day `first`
    (`close_of`'s index: 0 is the world's first day, a negative one before it)."""
    rows = []
    for symbol, (_, volume, half) in SYMBOLS.items():
        for i, d in enumerate(days, start=first):
            close = close_of(symbol, i)
            traded = volume + 100 * (i % 7) if volume else 0
            rows.append(price_row(symbol, d, close, traded, round(close - half, 2), round(close + half, 2)))
    return rows


def seed_prices(engine: Engine) -> None:
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": s, "name": f"{s} Holdings Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
                for s in SYMBOLS
            ],
        )
        rows = price_rows(days_up_to(DAY, HISTORY_DAYS), 0)
        append_history(conn, tables.eod_prices, rows)
        refresh_bars(conn)  # as the stage runner does after T0 appends prices


def seed_documents(engine: Engine) -> None:
    """Fundamentals, one news item naming LIQ with its sentiment score, and LIQ's daily
    sentiment composite: what an instrument's GraphQL fields read beside prices."""
    with engine.begin() as conn:
        append_history(
            conn,
            tables.fundamentals,
            [
                {
                    "symbol": "LIQ",
                    "report_date": date(2026, 9, 30),
                    "period_end": date(2026, 9, 30),
                    "eps": 4.2,
                    "book_value_per_share": 31.5,
                    "dividend_yield": 3.1,  # percent, as the exchange's "Dividend Yield %" column
                    "shares_outstanding": 2_000_000,
                    "market_cap": 100_000_000.0,
                    "source": "test",
                },
                {
                    "symbol": "LIQ",
                    "report_date": date(2026, 6, 30),
                    "period_end": date(2026, 6, 30),
                    "eps": 3.9,
                    "source": "test",
                },
            ],
        )
        append_history(
            conn,
            tables.news_items,
            [
                {
                    "content_hash": "n1",
                    "link": "https://news.example/liq-profit",
                    "title": "LIQ Holdings profit up 12%",
                    "summary": "Record quarter.",
                    "feed_url": "https://news.example/rss",
                    "published_at": datetime(2026, 11, 19, 14, 0, tzinfo=UTC),
                }
            ],
        )
        news_id = conn.execute(select(tables.news_items.c.id)).scalar_one()
        append_history(
            conn,
            tables.document_mentions,
            [{"doc_kind": "NEWS", "doc_id": news_id, "symbol": "LIQ", "matched_by": "symbol"}],
        )
        append_history(
            conn, tables.sentiment_scores, [{"doc_kind": "NEWS", "doc_id": news_id, "scorer": SCORER_ID, "score": 0.6}]
        )
        append_history(
            conn,
            tables.sentiment_composites,
            [
                {"symbol": "LIQ", "trading_date": d, "method": SENTIMENT_METHOD, "score": 0.3, "item_count": 1}
                for d in days_up_to(DAY, 2)
            ],
        )


@dataclass
class World:
    settings: Settings
    engine: Engine
    acme_key: str
    acme_key_id: str
    beta_key: str
    beta_key_id: str
    pending_suggestion: str


# Settings that say where things are, not what the world holds: a seeded world is reused
# across stores that differ only in these.
_PLACES = {"database_url", "data_dir", "models_dir", "runs_dir", "secrets_dir", "reports_dir"}
_SEEDED: dict[str, tuple[Path, World]] = {}  # this process's seeded worlds, by database server and settings


def build(settings: Settings) -> World:
    """Seed everything; returns the settings with the admin key set.

    The world is seeded once per test process for each set of settings, then copied into
    the test's own store: on SQLite with sqlite3's backup API, on Postgres as a database
    created from the seeded one as its template; with the key pepper from secrets_dir, which
    the stored key hashes need. The same rows and keys, in a fraction of the time."""
    # The authorisation matrices send a few hundred keyless requests from one address within
    # seconds; the per-address limit on them is tested on its own (tests/api/test_hardening.py).
    settings = settings.model_copy(
        update={"admin_key": SecretStr(ADMIN_KEY), "ai_starting_cash": 1_000_000, "rate_limit_unauthenticated": 100_000}
    )
    sqlite = settings.database_url.startswith("sqlite:///")
    server, _, name = settings.database_url.rpartition("/")
    held = sorted((k, _shown(v)) for k, v in settings.model_dump().items() if k not in _PLACES)
    what = repr((sqlite or server, held))
    if what not in _SEEDED:
        _SEEDED[what] = _seeded(settings, sqlite, server)
    folder, seeded = _SEEDED[what]
    if sqlite:
        with (
            closing(sqlite3.connect(seeded.settings.database_url.removeprefix("sqlite:///"))) as source,
            closing(sqlite3.connect(settings.database_url.removeprefix("sqlite:///"))) as target,
        ):
            source.backup(target)
    else:
        dispose_engines()  # no pooled connection to the test's database outlives its re-creation
        with psycopg.connect(_admin_url(server), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{seeded.settings.database_url.rpartition("/")[2]}"')
    settings.secrets_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy2(folder / "secrets" / PEPPER_FILE, settings.secrets_dir / PEPPER_FILE)
    return replace(seeded, settings=settings, engine=service_engine(settings))


def _shown(value: object) -> str:
    """A setting as the cache key sees it: a secret by its value (its repr is masked, and two
    peppers or webhook secrets must not share a seeded world)."""
    return repr(value.get_secret_value() if isinstance(value, SecretStr) else value)


def _seeded(settings: Settings, sqlite: bool, server: str) -> tuple[Path, World]:
    """A world seeded into a store of its own (dropped when the process ends), to copy from."""
    folder = Path(tempfile.mkdtemp(prefix="marketintel-world-"))
    atexit.register(shutil.rmtree, folder, True)
    if sqlite:
        url = f"sqlite:///{folder / 'store.db'}"
    else:
        name = f"marketintel_world_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(_admin_url(server), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        atexit.register(_drop, server, name)
        url = f"{server}/{name}"
    template = settings.model_copy(update={"database_url": url, "secrets_dir": folder / "secrets"})
    owner = build_engine(url)  # migrations run as the owner, as tests/conftest.py's `settings` runs them
    upgrade(owner)
    owner.dispose()
    seeded = _seed(template)
    dispose_engines()  # a template database must have no connection when it is copied
    return folder, seeded


def _admin_url(server: str) -> str:
    return server.replace("+psycopg", "") + "/postgres"


def _drop(server: str, name: str) -> None:
    with psycopg.connect(_admin_url(server), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _seed(settings: Settings) -> World:
    engine = service_engine(settings)
    seed_prices(engine)
    seed_documents(engine)
    signals = {
        "LIQ": {
            "score": 72.0,
            "action": "LONG",
            "tercile": "TOP",
            "weight": 0.2,
            "predicted_return": 0.012,
            "reasons": LIQ_REASONS,
            "raw_score": LIQ_RAW_SCORE,
        },
        "MID": {
            "score": 55.0,
            "action": "HOLD",
            "tercile": "MIDDLE",
            "predicted_return": 0.001,
            "held_edge": 0.002,
            "round_trip_cost": 0.014,
            "decision_reason": HOLD_REASON,
        },
        "SLOW": {"score": 30.0, "action": "AVOID", "tercile": "ILLIQUID", "predicted_return": -0.01},
    }
    # The AI portfolio decides after a close and fills in the next session: the day before
    # DAY decides the LIQ buy, DAY fills it.
    for day in (CALENDAR.previous_trading_day(DAY), DAY):
        seed_predictions(engine, day, signals)
        ai.execute_day(engine, settings, day)
    acme = keystore.generate(engine, settings, "Acme Capital", "STANDARD", now=MORNING)
    beta = keystore.generate(engine, settings, "Beta Fund", "PRO", now=MORNING)
    move_cash(engine, f"client:{acme['client_id']}", "200000", now=MORNING)
    suggestions.generate(engine, settings, MONDAY, now=MORNING)
    (pending,) = suggestions.list_pending(engine, f"client:{acme['client_id']}", now=MORNING)
    return World(
        settings, engine, acme["api_key"], acme["key_id"], beta["api_key"], beta["key_id"], pending.suggestion_id
    )


def run_t3(settings: Settings, week: date = MACRO_MONDAY) -> None:
    """T3 for `week` (MACRO_MONDAY: the week before the world's MONDAY) against the simulated
    institutions (published through DAY, that Friday) over HTTP, so the macro endpoints have
    indicators and parameters."""
    from ingest.simulator.market import SimulatedMarket
    from ingest.simulator.site import SimulatorSite
    from pipeline.runner import run_stage
    from pipeline.serving import serve_in_thread

    site = SimulatorSite(SimulatedMarket(), published_through=date(2026, 11, 20))
    with serve_in_thread(site.asgi_app()) as base:
        run_stage("t3_macro", week, settings=settings.model_copy(update={"macro_base_url": base}))
