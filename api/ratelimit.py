"""Per-key rate limits: a sliding-window counter over one-minute windows.

The estimate at a moment is `hits in this window + hits in the previous window x the
share of the previous window still inside the last 60 s`: smooth like a true sliding
window, two counters per key instead of a timestamp per request, and no burst of twice
the limit at a window boundary. A request over the limit is refused (429) and not
counted, so a client that backs off for `Retry-After` seconds gets through. A request
may cost more than one (`decide`'s `cost`: a GraphQL mutation, one per write it will
make): it is admitted whole while all of it fits, else refused whole and counted not at all.

Three stores with one behaviour, chosen once by `counter_store`: `MemoryStore` for a
single API worker (the embedded default); `DatabaseStore` for several workers, which
share the counters through the `rate_limit_counters` table (an atomic upsert per request;
windows older than the previous one are deleted as the minute turns; the desk's,
desk/counters.py, as everything the API keeps in the store); `RedisStore` when
`MARKETINTEL_REDIS_URL` is set, for API processes on several machines, or to keep the
per-request writes off the store's database.

`RedisStore` talks to Redis through the `limits` library's storage (URL forms for TLS,
unix sockets, Sentinel and Cluster, an atomic INCRBY+EXPIRE script, a health check), but
not through its rate-limiter strategies: the sliding-window arithmetic above is the one
rule, so the three stores give the same answers, headers and Retry-After.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine

from desk.counters import DatabaseStore
from market.errors import ConfigurationError, SourceUnavailableError
from market.settings import Settings

log = logging.getLogger(__name__)
WINDOW_SECONDS = 60
# the Retry-After of a request the rate-limit store could not count (a Redis that stopped
# answering, failing over): a client backs off this long rather than retrying at once
UNAVAILABLE_RETRY_SECONDS = 5
# the estimate's floating-point error: 15 x (1 - 20/60) is 10.000000000000002, and a
# request that fits exactly at its Retry-After was refused for it
ROUNDING = 1e-9
POLICY_NAME = "per-key"  # a client's keys, counted together
ADDRESS_POLICY = "per-address"  # requests without a valid key, per client address


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    retry_after: int
    policy: str = POLICY_NAME

    def headers(self) -> dict[str, str]:
        """IETF draft-ietf-httpapi-ratelimit-headers: the policy and the current state."""
        headers = {
            "RateLimit-Policy": f'"{self.policy}";q={self.limit};w={WINDOW_SECONDS}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset_seconds}',
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


class CounterStore(Protocol):
    def hit(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> tuple[int, int]:
        """Count `amount` requests in `window`; (hits in window, hits in the window before).
        `conn`: the request's connection, which a store in the database writes on rather
        than taking a second one from the pool."""

    def undo(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> None:
        """Take back the `amount` requests just counted (refused), never below none."""


def decide(
    store: CounterStore,
    key_id: str,
    limit: int,
    now: float,
    conn: Connection | None = None,
    policy: str = POLICY_NAME,
    cost: int = 1,
) -> Decision:
    """Count a request of `cost` requests (one, unless a GraphQL mutation's writes make it
    more) on `key_id` against `limit` a minute, under `policy`'s name: admitted whole while
    all of it fits, else refused and counted not at all. The
    decision's `reset_seconds` (the RateLimit header's `t`) is the seconds left in this
    minute while requests remain; with none left, the seconds until the next one fits, the
    figure a 429's Retry-After gives: the minute's end was no reset of a sliding window (its
    hits carry into the next), and a client that waited `t` was refused again; a refusal's
    Retry-After is when all of its `cost` fits."""
    window = int(now // WINDOW_SECONDS)
    elapsed = now - window * WINDOW_SECONDS
    current, previous = store.hit(key_id, window, conn, cost)
    carried = previous * (1 - elapsed / WINDOW_SECONDS)
    estimate = current + carried
    if estimate <= limit + ROUNDING:
        remaining = max(0, math.floor(limit - estimate))
        reset = minute_left(now) if remaining else _retry_after(current, previous, limit, elapsed)
        return Decision(True, limit, remaining, reset, 0, policy)
    store.undo(key_id, window, conn, cost)
    wait = _retry_after(current - cost, previous, limit, elapsed, cost)
    return Decision(False, limit, 0, wait, wait, policy)


def minute_left(now: float) -> int:
    """The whole seconds left in the minute `now` falls in (at least 1): a decision's `t`
    while requests remain."""
    return max(1, math.ceil(WINDOW_SECONDS - now % WINDOW_SECONDS))


def _retry_after(current: int, previous: int, limit: int, elapsed: float, need: int = 1) -> int:
    """Seconds until `need` more requests fit under the limit; past the limit itself
    they never do, and this is when the count is empty."""
    if current + need > limit:  # this window alone is full: wait for the next, where it carries over
        to_next = WINDOW_SECONDS - elapsed
        # in the next window the estimate is current x (1 - t/60); need it <= limit - need
        share = 1 - (limit - need) / current if current else 0.0
        return max(1, math.ceil(to_next + min(1.0, max(0.0, share)) * WINDOW_SECONDS))
    # the previous window's carried share must fall to limit - need - current
    needed_share = (limit - need - current) / previous if previous else 1.0
    wait = (1 - needed_share) * WINDOW_SECONDS - elapsed
    return max(1, math.ceil(wait))


class MemoryStore:
    def __init__(self) -> None:
        self._counts: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self._window = 0

    def hit(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> tuple[int, int]:
        with self._lock:
            if window != self._window:
                self._counts = {k: v for k, v in self._counts.items() if k[1] >= window - 1}
                self._window = window
            self._counts[(key_id, window)] = self._counts.get((key_id, window), 0) + amount
            return self._counts[(key_id, window)], self._counts.get((key_id, window - 1), 0)

    def undo(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> None:
        with self._lock:
            if self._counts.get((key_id, window), 0) > 0:
                self._counts[(key_id, window)] = max(0, self._counts[(key_id, window)] - amount)


class RedisStore:
    """Counters in Redis, keyed `<prefix>:ratelimit:<key_id>:<window>`, each expiring two
    windows after it is created (nothing to prune). A Redis that stops answering turns a
    request into 503 (fail closed: an unreachable limiter must not mean no limit), with a
    Retry-After of UNAVAILABLE_RETRY_SECONDS; where Redis is is logged, never told the
    client (the 503 comes before the key is known)."""

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

    def hit(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> tuple[int, int]:
        try:
            current = self.storage.incr(self._key(key_id, window), 2 * WINDOW_SECONDS, amount=amount)
            previous = self.storage.get(self._key(key_id, window - 1))
        except self._errors as exc:
            raise self._unavailable(exc) from exc
        return int(current), int(previous)

    def undo(self, key_id: str, window: int, conn: Connection | None = None, amount: int = 1) -> None:
        try:
            self.storage.incr(self._key(key_id, window), 2 * WINDOW_SECONDS, amount=-amount)
        except self._errors as exc:
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception) -> SourceUnavailableError:
        cause = type(getattr(exc, "storage_error", exc)).__name__
        log.error("the rate-limit store (Redis at %s) does not answer: %s", _redacted(self.url), cause)
        return SourceUnavailableError(
            f"the service cannot count requests against their rate limit just now; retry in "
            f"{UNAVAILABLE_RETRY_SECONDS} s",
            headers={"Retry-After": str(UNAVAILABLE_RETRY_SECONDS)},
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
