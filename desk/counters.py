"""The rate-limit counts that several API workers share through the database
(`rate_limit_counters`): api/ratelimit.py's `DatabaseStore`, one of its three stores with
one behaviour (the sliding-window rule and the memory and Redis stores are there). It
lives with the desk because it writes the store, which the API reaches only through the
desk; it counts requests for the API and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text

from store.transactions import transactional


@contextmanager
def _unflushed(conn: Connection) -> Iterator[None]:
    """A counter's commit does not wait for the disk: Postgres `SET LOCAL synchronous_commit
    = off` (this transaction only), SQLite `synchronous = NORMAL` on the connection until the
    transaction has committed, then back to its setting. A crash of the machine can lose
    the last counts of the current minute, never corrupt anything. Each request waited for
    an fsync before, which serialised several workers on the disk: `serve --workers 2` did
    x0.99 of one worker on SQLite (figures after the change: docs/performance.md)."""
    if conn.dialect.name == "sqlite":
        driver = conn.connection.driver_connection
        before = driver.execute("PRAGMA synchronous").fetchone()[0]
        driver.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        finally:
            driver.execute(f"PRAGMA synchronous = {int(before)}")
        return
    yield


class DatabaseStore:
    _UPSERT = text(
        "INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, :n) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + :n RETURNING hits"
    )
    _PREVIOUS = text("SELECT hits FROM rate_limit_counters WHERE key_id = :k AND window_start = :w")
    _BOTH = text(  # Postgres: the upsert in a CTE beside the previous window's read (SQLite has no DML in a CTE)
        "WITH counted AS (INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, :n) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + :n RETURNING hits) "
        "SELECT (SELECT hits FROM counted), "
        "(SELECT hits FROM rate_limit_counters WHERE key_id = :k AND window_start = :p)"
    )

    _ALONE = text(  # Postgres, on a request's connection in autocommit: the whole count in one statement
        "WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true) AS setting), "
        "counted AS (INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, :n) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + :n RETURNING hits) "
        "SELECT (SELECT hits FROM counted), "
        "(SELECT hits FROM rate_limit_counters WHERE key_id = :k AND window_start = :p), "
        "(SELECT setting FROM unflushed)"
    )

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._pruned = 0

    @staticmethod
    def _alone(conn: Connection | None) -> bool:
        """A Postgres request connection in autocommit (api/services.py): a statement there
        is its own transaction, so one statement counts (upsert, the previous window, and
        `synchronous_commit` off for that statement's commit through set_config's local
        form) with no BEGIN, SET, COMMIT round trips and no switch of isolation level, and
        the counter's row is locked for one statement, not a transaction's round trips (two
        workers counting one key queue on that row).

        A key check riding on the connection (store.history.Rider) is not read first here,
        unlike before a write of data (store.transactions.transactional): the counter
        counts the request itself, which did arrive with that key, and is operational state
        that means nothing after two minutes. It still rides on the handler's version read;
        a request that starts over keeps or moves this count (api/security.py `_count`), and
        a key revoked meanwhile is refused with 401, its one count left in the old minute.
        Measured, that statement's round trip less lifted `serve --workers 2` on Postgres."""
        return (
            conn is not None
            and conn.dialect.name == "postgresql"
            and conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
        )

    @contextmanager
    def _transaction(self, conn: Connection | None) -> Iterator[Connection]:
        """A short write transaction: on the request's connection when given (its read
        transaction, if one is open, ends first), else on one of the engine's."""
        if conn is None:
            with self.engine.connect() as own, _unflushed(own), own.begin():
                yield own
            return
        reading = conn.get_execution_options().get("isolation_level")
        with _unflushed(transactional(conn)), conn.begin():
            yield conn
        if reading == "AUTOCOMMIT":  # the request's reads go on without BEGIN/ROLLBACK (api/services.py)
            conn.execution_options(isolation_level="AUTOCOMMIT")

    def hit(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> tuple[int, int]:
        if self._alone(conn):
            counted = {"k": key_id, "w": window, "p": window - 1, "n": amount}
            current, previous, _ = conn.execute(self._ALONE, counted).one()
            if self._pruned != window:
                conn.execute(text("DELETE FROM rate_limit_counters WHERE window_start < :w"), {"w": window - 1})
                self._pruned = window
            return int(current), int(previous or 0)
        with self._transaction(conn) as conn:
            if conn.dialect.name == "postgresql":  # one round trip for both counts
                conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
                counted = {"k": key_id, "w": window, "p": window - 1, "n": amount}
                current, previous = conn.execute(self._BOTH, counted).one()
            else:
                current = conn.execute(self._UPSERT, {"k": key_id, "w": window, "n": amount}).scalar_one()
                previous = conn.execute(self._PREVIOUS, {"k": key_id, "w": window - 1}).scalar()
            if self._pruned != window:
                conn.execute(text("DELETE FROM rate_limit_counters WHERE window_start < :w"), {"w": window - 1})
                self._pruned = window
        return int(current), int(previous or 0)

    _UNDO = text(
        "UPDATE rate_limit_counters SET hits = CASE WHEN hits > :n THEN hits - :n ELSE 0 END "
        "WHERE key_id = :k AND window_start = :w AND hits > 0"
    )

    def undo(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> None:
        if self._alone(conn):  # one statement: its own transaction
            conn.execute(self._UNDO, {"k": key_id, "w": window, "n": amount})  # type: ignore[union-attr]
            return
        with self._transaction(conn) as conn:
            conn.execute(self._UNDO, {"k": key_id, "w": window, "n": amount})
