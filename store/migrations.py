"""Applies the numbered DDL files in `sql/<dialect>/` and records what was applied.

A file is `NNNN_name.sql`; versions apply in order, each in its own transaction together
with its row in `schema_migrations` (version, name, sha256 of the file). Re-running
applies nothing new. An applied file whose text later changed is an error, not a silent
re-apply: write a new numbered file instead.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, text

from market.clock import utc_now
from market.errors import MigrationError, SchemaNotReadyError
from market.settings import Settings
from store.engine import dialect_of, service_engine, sqlite_file
from store.types import as_utc

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"
_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_BOOKKEEPING_DDL = {
    "sqlite": """CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,
        recorded_at TEXT NOT NULL)""",
    "postgresql": """CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL)""",
}


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class MigrationState:
    version: int
    name: str
    applied_at: datetime | None
    state: str  # "applied", "pending" or "modified"


_DDL_FOLDERS = {"sqlite": "sqlite", "postgresql": "postgres"}


def available_migrations(dialect: str, sql_dir: Path = SQL_DIR) -> list[Migration]:
    """The DDL files for a SQLAlchemy dialect name ('sqlite' or 'postgresql'), in order."""
    folder = sql_dir / _DDL_FOLDERS.get(dialect, dialect)
    if not folder.is_dir():
        raise MigrationError(f"no DDL folder for dialect '{dialect}' at {folder}")
    found = []
    for path in sorted(folder.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path} is not named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two DDL files share a version number in {folder}")
    return found


def status(engine: Engine, sql_dir: Path = SQL_DIR) -> list[MigrationState]:
    """Each migration's state; a SQLite store whose file is not there is refused
    (`require_store`), not listed as a store with every migration pending."""
    require_store(engine)
    applied = _applied(engine)
    states = []
    for migration in available_migrations(dialect_of(engine), sql_dir):
        row = applied.get(migration.version)
        if row is None:
            states.append(MigrationState(migration.version, migration.name, None, "pending"))
        else:
            state = "applied" if row["checksum"] == migration.checksum else "modified"
            states.append(MigrationState(migration.version, migration.name, row["recorded_at"], state))
    return states


def upgrade(engine: Engine, sql_dir: Path = SQL_DIR) -> list[Migration]:
    """Apply every pending migration; return those applied now (empty when up to date)."""
    dialect = dialect_of(engine)
    migrations = available_migrations(dialect, sql_dir)
    if (path := sqlite_file(engine)) is not None:
        path.parent.mkdir(parents=True, exist_ok=True)  # the one place a SQLite store is made
    _ensure_bookkeeping(engine)
    applied_now = []
    for migration in migrations:
        if _apply_one(engine, migration):
            applied_now.append(migration)
    modified = [s for s in status(engine, sql_dir) if s.state == "modified"]
    if modified:
        names = ", ".join(f"{s.version:04d}_{s.name}" for s in modified)
        raise MigrationError(
            f"applied migration files were edited afterwards: {names}; add a new numbered file instead"
        )
    return applied_now


def require_store(engine: Engine) -> None:
    """Raise SchemaNotReadyError naming the fix when a SQLite store's file is not there:
    opening it would make an empty file (and a mistyped path a real, empty store). Only
    `upgrade` makes one (`marketintel db upgrade`, the demo, the tests' fixtures)."""
    path = sqlite_file(engine)
    if path is not None and not path.exists():
        raise SchemaNotReadyError(f"no database at {path}; `marketintel db upgrade` creates it")


def require_current_schema(engine: Engine) -> None:
    """Raise SchemaNotReadyError naming the fix when the store is missing (`require_store`)
    or migrations are pending or edited."""
    states = status(engine)
    behind = [s for s in states if s.state != "applied"]
    if behind:
        listed = ", ".join(f"{s.version:04d}_{s.name} ({s.state})" for s in behind)
        raise SchemaNotReadyError(f"database schema is not current: {listed}; run `marketintel db upgrade`")


def current_store(settings: Settings) -> Engine:
    """The service engine of the store in `settings`, once its schema is found current
    (`require_current_schema`): how a process that has only its settings opens the store to
    read or write it, so that every command on a store never upgraded, or one behind,
    says the same one line naming the fix before its first read. `Desk.from_settings` (the
    client's commands, import, notify, monitor), the runner (stages, scrape) and the
    operator's commands that open the engine themselves (backfill, bootstrap, run-day) all
    open it here; `report` and `bootstrap`, which opened it without the check, said `no
    such table: portfolio_days` / `predictions`. The API checks at its start and in
    /readyz (`Desk.schema_current`), not per request."""
    engine = service_engine(settings)
    require_current_schema(engine)
    return engine


def _ensure_bookkeeping(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(_BOOKKEEPING_DDL[dialect_of(engine)])


def _applied(engine: Engine) -> dict[int, dict]:
    with engine.connect() as conn:
        if not engine.dialect.has_table(conn, "schema_migrations"):
            return {}
        rows = conn.execute(text("SELECT version, checksum, recorded_at FROM schema_migrations"))
        return {r.version: {"checksum": r.checksum, "recorded_at": as_utc(r.recorded_at)} for r in rows}


def _apply_one(engine: Engine, migration: Migration) -> bool:
    """Apply one file atomically; False when another process applied it first."""
    if dialect_of(engine) == "sqlite":
        return _apply_sqlite(engine, migration)
    return _apply_postgres(engine, migration)


def _apply_postgres(engine: Engine, migration: Migration) -> bool:
    with engine.begin() as conn:
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(hashtext('marketintel schema migrations'))")
        done = conn.execute(text("SELECT 1 FROM schema_migrations WHERE version = :v"), {"v": migration.version})
        if done.first():
            return False
        try:
            # The DBAPI cursor without parameters: psycopg then leaves '%' in the DDL alone.
            with conn.connection.dbapi_connection.cursor() as cursor:
                cursor.execute(migration.path.read_text())
        except Exception as exc:
            raise MigrationError(f"{migration.path.name} failed: {_first_line(exc)}") from exc
        _record(conn, migration)
    return True


def _apply_sqlite(engine: Engine, migration: Migration) -> bool:
    # executescript runs many statements (and trigger bodies) but commits what is pending
    # first, so the transaction is opened inside the script itself.
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        done = cursor.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,))
        if done.fetchone():
            cursor.execute("ROLLBACK")
            return False
        cursor.execute("ROLLBACK")
        script = migration.path.read_text()
        record = (
            "INSERT INTO schema_migrations (version, name, checksum, recorded_at) VALUES "
            f"({migration.version}, '{migration.name}', '{migration.checksum}', "
            f"'{utc_now().strftime('%Y-%m-%d %H:%M:%S.%f')}');"
        )
        try:
            cursor.executescript(f"BEGIN IMMEDIATE;\n{script}\n{record}\nCOMMIT;")
        except Exception as exc:
            if raw.driver_connection.in_transaction:
                cursor.execute("ROLLBACK")
            if cursor.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)).fetchone():
                return False  # another process applied it between our check and our script
            raise MigrationError(f"{migration.path.name} failed: {_first_line(exc)}") from exc
        return True
    finally:
        raw.close()


def _record(conn, migration: Migration) -> None:  # noqa: ANN001
    conn.execute(
        text("INSERT INTO schema_migrations (version, name, checksum, recorded_at) VALUES (:v, :n, :c, :t)"),
        {"v": migration.version, "n": migration.name, "c": migration.checksum, "t": utc_now()},
    )


def _first_line(exc: Exception) -> str:
    return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
