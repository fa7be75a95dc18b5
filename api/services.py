"""What a request handler needs, built once per app: settings, the service engine, the
trading calendar, the clock (tests pin it), the rate limiter's store, a small cache of
rendered bodies keyed by the store's data version, and the limit on heavy work."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Callable

from anyio import CapacityLimiter, to_thread
from fastapi import Request
from sqlalchemy import Engine

from api.ratelimit import CounterStore, counter_store
from market.clock import TradingCalendar, default_calendar, utc_now
from market.settings import Settings
from store.engine import service_engine


@dataclass
class Services:
    settings: Settings
    engine: Engine
    calendar: TradingCalendar
    now: Callable[[], datetime]
    limiter: CounterStore
    heavy: CapacityLimiter
    _cache: dict[Any, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cached(self, key: Any, version: Any, build: Callable[[], Any]) -> Any:
        """`build()` once per (key, version); a new version replaces the old entry."""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        value = build()
        with self._lock:
            self._cache[key] = (version, value)
        return value

    async def run_heavy(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` in a worker thread, at most `heavy_requests` at a time (PDF
        reports, GraphQL operations): the rest wait for a turn without holding a thread, so
        the event loop, /healthz and light requests keep their share of the CPU."""
        return await to_thread.run_sync(function, *args, limiter=self.heavy)

    def valuation_day(self) -> date:
        """The day portfolios are valued at: the latest priced trading day (or, on an empty
        store, the latest trading day on the exchange clock)."""
        from views.market import valuation_day

        with self.engine.connect() as conn:
            return valuation_day(conn, self.calendar, self.now())


def build_services(settings: Settings, now: Callable[[], datetime] | None = None) -> Services:
    engine = service_engine(settings)
    return Services(settings, engine, default_calendar(), now or utc_now, counter_store(settings, engine),
                    CapacityLimiter(settings.heavy_requests))


async def services(request: Request) -> Services:
    """Async on purpose: FastAPI runs a sync dependency in the thread pool, a hop this needs not."""
    return request.app.state.services
