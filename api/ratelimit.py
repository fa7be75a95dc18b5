"""Per-key rate limits: a sliding-window counter over one-minute windows.

The estimate at a moment is `hits in this window + hits in the previous window x the
share of the previous window still inside the last 60 s`: smooth like a true sliding
window, two counters per key instead of a timestamp per request, and no burst of twice
the limit at a window boundary. A request over the limit is refused (429) and not
counted, so a client that backs off for `Retry-After` seconds gets through.

Three stores with one behaviour, chosen once by `counter_store`: `MemoryStore` for a
single API worker (the embedded default); `DatabaseStore` for several workers, which
share the counters through the `rate_limit_counters` table (an atomic upsert per request;
windows older than the previous one are deleted as the minute turns); `RedisStore` when
`MARKETINTEL_REDIS_URL` is set, for API processes on several machines, or to keep the
per-request writes off the store's database.

`RedisStore` talks to Redis through the `limits` library's storage (URL forms for TLS,
unix sockets, Sentinel and Cluster, an atomic INCRBY+EXPIRE script, a health check), but
not through its rate-limiter strategies: the sliding-window arithmetic above is the one
rule, so the three stores give the same answers, headers and Retry-After.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine, text

from market.errors import ConfigurationError, SourceUnavailableError
from market.settings import Settings
from store.transactions import transactional

WINDOW_SECONDS = 60
POLICY_NAME = "per-key"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    retry_after: int

    def headers(self) -> dict[str, str]:
        """IETF draft-ietf-httpapi-ratelimit-headers: the policy and the current state."""
        headers = {
            "RateLimit-Policy": f'"{POLICY_NAME}";q={self.limit};w={WINDOW_SECONDS}',
            "RateLimit": f'"{POLICY_NAME}";r={self.remaining};t={self.reset_seconds}',
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class CounterStore(Protocol):
    def hit(self, key_id: str, window: int, conn: Connection | None = None) -> tuple[int, int]:
        """Count one request in `window`; (hits in window, hits in the window before).
        `conn`: the request's connection, which a store in the database writes on rather
        than taking a second one from the pool."""

    def undo(self, key_id: str, window: int, conn: Connection | None = None) -> None:
        """Take back the request just counted (it was refused)."""


def decide(store: CounterStore, key_id: str, limit: int, now: float, conn: Connection | None = None) -> Decision:
    window = int(now // WINDOW_SECONDS)
    elapsed = now - window * WINDOW_SECONDS
    current, previous = store.hit(key_id, window, conn)
    carried = previous * (1 - elapsed / WINDOW_SECONDS)
    estimate = current + carried
    reset = max(1, math.ceil(WINDOW_SECONDS - elapsed))
    if estimate <= limit:
        return Decision(True, limit, max(0, math.floor(limit - estimate)), reset, 0)
    store.undo(key_id, window, conn)
    return Decision(False, limit, 0, reset, _retry_after(current - 1, previous, limit, elapsed))


def _retry_after(current: int, previous: int, limit: int, elapsed: float) -> int:
    """Seconds until one more request fits under the limit."""
    if current + 1 > limit:  # this window alone is full: wait for the next, where it carries over
        to_next = WINDOW_SECONDS - elapsed
        # in the next window the estimate is current x (1 - t/60); need it <= limit - 1
        share = 1 - (limit - 1) / current if current else 0.0
        return max(1, math.ceil(to_next + max(0.0, share) * WINDOW_SECONDS))
    # the previous window's carried share must fall to limit - 1 - current
    needed_share = (limit - 1 - current) / previous if previous else 1.0
    wait = (1 - needed_share) * WINDOW_SECONDS - elapsed
    return max(1, math.ceil(wait))


class MemoryStore:
    def __init__(self) -> None:
        self._counts: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self._window = 0

    def hit(self, key_id: str, window: int, conn: Connection | None = None) -> tuple[int, int]:
        with self._lock:
            if window != self._window:
                self._counts = {k: v for k, v in self._counts.items() if k[1] >= window - 1}
                self._window = window
            self._counts[(key_id, window)] = self._counts.get((key_id, window), 0) + 1
            return self._counts[(key_id, window)], self._counts.get((key_id, window - 1), 0)

    def undo(self, key_id: str, window: int, conn: Connection | None = None) -> None:
        with self._lock:
            if self._counts.get((key_id, window), 0) > 0:
                self._counts[(key_id, window)] -= 1


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
        "INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, 1) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1 RETURNING hits"
    )
    _PREVIOUS = text("SELECT hits FROM rate_limit_counters WHERE key_id = :k AND window_start = :w")
    _BOTH = text(  # Postgres: the upsert in a CTE beside the previous window's read (SQLite has no DML in a CTE)
        "WITH counted AS (INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, 1) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1 RETURNING hits) "
        "SELECT (SELECT hits FROM counted), "
        "(SELECT hits FROM rate_limit_counters WHERE key_id = :k AND window_start = :p)"
    )

    _ALONE = text(  # Postgres, on a request's connection in autocommit: the whole count in one statement
        "WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true) AS setting), "
        "counted AS (INSERT INTO rate_limit_counters (key_id, window_start, hits) VALUES (:k, :w, 1) "
        "ON CONFLICT (key_id, window_start) DO UPDATE SET hits = rate_limit_counters.hits + 1 RETURNING hits) "
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

    def hit(self, key_id: str, window: int, conn: Connection | None = None) -> tuple[int, int]:
        if self._alone(conn):
            current, previous, _ = conn.execute(self._ALONE, {"k": key_id, "w": window, "p": window - 1}).one()
            if self._pruned != window:
                conn.execute(text("DELETE FROM rate_limit_counters WHERE window_start < :w"), {"w": window - 1})
                self._pruned = window
            return int(current), int(previous or 0)
        with self._transaction(conn) as conn:
            if conn.dialect.name == "postgresql":  # one round trip for both counts
                conn.exec_driver_sql("SET LOCAL synchronous_commit = off")
                current, previous = conn.execute(self._BOTH, {"k": key_id, "w": window, "p": window - 1}).one()
            else:
                current = conn.execute(self._UPSERT, {"k": key_id, "w": window}).scalar_one()
                previous = conn.execute(self._PREVIOUS, {"k": key_id, "w": window - 1}).scalar()
            if self._pruned != window:
                conn.execute(text("DELETE FROM rate_limit_counters WHERE window_start < :w"), {"w": window - 1})
                self._pruned = window
        return int(current), int(previous or 0)

    _UNDO = text("UPDATE rate_limit_counters SET hits = hits - 1 WHERE key_id = :k AND window_start = :w AND hits > 0")

    def undo(self, key_id: str, window: int, conn: Connection | None = None) -> None:
        if self._alone(conn):  # one statement: its own transaction
            conn.execute(self._UNDO, {"k": key_id, "w": window})  # type: ignore[union-attr]
            return
        with self._transaction(conn) as conn:
            conn.execute(self._UNDO, {"k": key_id, "w": window})


class RedisStore:
    """Counters in Redis, keyed `<prefix>:ratelimit:<key_id>:<window>`, each expiring two
    windows after it is created (nothing to prune). A Redis that stops answering turns a
    request into 503 (fail closed: an unreachable limiter must not mean no limit)."""

    def __init__(self, url: str, key_prefix: str) -> None:
        from limits.errors import StorageError
        from limits.storage import storage_from_string

        self._errors = (StorageError,)
        self.url = url
        self.storage = storage_from_string(url, key_prefix=key_prefix, wrap_exceptions=True)

    def check(self) -> None:
        """ConfigurationError unless Redis answers a PING (checked once at start-up)."""
        if not self.storage.check():
            raise ConfigurationError(f"MARKETINTEL_REDIS_URL: Redis at {_redacted(self.url)} does not answer")

    @staticmethod
    def _key(key_id: str, window: int) -> str:
        return f"ratelimit:{key_id}:{window}"

    def hit(self, key_id: str, window: int, conn: Connection | None = None) -> tuple[int, int]:
        try:
            current = self.storage.incr(self._key(key_id, window), 2 * WINDOW_SECONDS)
            previous = self.storage.get(self._key(key_id, window - 1))
        except self._errors as exc:
            raise self._unavailable(exc) from exc
        return int(current), int(previous)

    def undo(self, key_id: str, window: int, conn: Connection | None = None) -> None:
        try:
            self.storage.incr(self._key(key_id, window), 2 * WINDOW_SECONDS, amount=-1)
        except self._errors as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception) -> SourceUnavailableError:
        return SourceUnavailableError(
            f"the rate-limit store (Redis at {_redacted(self.url)}) does not answer: "
            f"{type(getattr(exc, 'storage_error', exc)).__name__}"
        )


def _redacted(url: str) -> str:
    """The URL with its password as ***."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def counter_store(settings: Settings, engine: Engine) -> CounterStore:
    """Where this process counts requests: Redis when `redis_url` is set (checked now, so
    a wrong URL stops start-up with the reason), else the database or the process memory
    as `rate_limit_store` says."""
    if settings.redis_url:
        store = RedisStore(settings.redis_url, settings.redis_key_prefix)
        store.check()
        return store
    return DatabaseStore(engine) if settings.rate_limit_store == "database" else MemoryStore()
