"""Engines for the two supported databases.

SQLite (the embedded default) gets foreign keys, WAL and a busy timeout, and explicit
BEGIN statements so a stage can take the write lock up front (`BEGIN IMMEDIATE`) instead
of failing half-way when another writer holds it. Postgres uses psycopg 3; service
connections `SET ROLE` to the append-only service role (see sql/postgres/0003).
"""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from market.settings import Settings


def normalise_url(url: str) -> str:
    """Pick the psycopg 3 driver for plain postgresql:// URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def build_engine(url: str, *, service_role: str | None = None) -> Engine:
    url = normalise_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    engine = create_engine(url, pool_pre_ping=True)
    if service_role:
        _set_role_on_connect(engine, service_role)
    return engine


def _sqlite_engine(url: str) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # noqa: ANN001
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA busy_timeout = 30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):  # noqa: ANN001
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def _set_role_on_connect(engine: Engine, role: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # noqa: ANN001
        with dbapi_connection.cursor() as cursor:
            cursor.execute(f'SET ROLE "{role}"')
        dbapi_connection.commit()


_ENGINES: dict[tuple[str, str | None], Engine] = {}


def service_engine(settings: Settings) -> Engine:
    """The engine every stage, notebook and API request uses (one pool per process)."""
    return _cached_engine(settings.database_url, settings.postgres_service_role or None)


def migration_engine(settings: Settings) -> Engine:
    """The owner connection, for `marketintel db upgrade` only."""
    return _cached_engine(settings.migration_database_url or settings.database_url, None)


def _cached_engine(url: str, service_role: str | None) -> Engine:
    key = (url, service_role)
    if key not in _ENGINES:
        _ENGINES[key] = build_engine(url, service_role=service_role)
    return _ENGINES[key]


def dispose_engines() -> None:
    """Close every pooled connection (tests, and forked workers before first use)."""
    while _ENGINES:
        _ENGINES.popitem()[1].dispose()


def dialect_of(engine: Engine) -> str:
    """'sqlite' or 'postgresql': the folder name under sql/."""
    return engine.dialect.name
