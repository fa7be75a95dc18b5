"""Simulated history: deliver past simulated days through the same T0 code path (pages,
parsers, validation, store), served in-process instead of over a socket."""
from __future__ import annotations

from datetime import date

from sqlalchemy import Engine
from tqdm import tqdm

from market.settings import Settings
from ingest.exchange.client import ExchangeClient
from ingest.exchange.delivery import DeliveryReport, deliver_day
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite


def simulator_for(settings: Settings, **options) -> SimulatedMarket:  # noqa: ANN003
    return SimulatedMarket(seed=settings.simulator_seed, size=settings.simulator_instruments, **options)


def backfill(engine: Engine, settings: Settings, days: int, end: date, market: SimulatedMarket | None = None) -> list[DeliveryReport]:
    """Deliver the `days` simulated trading days ending at `end` (inclusive), oldest first."""
    market = market or simulator_for(settings)
    wanted = [d for d in market.days if d <= end][-days:]
    site = SimulatorSite(market, base_url="http://simulator.local", published_through=end)
    reports = []
    with ExchangeClient(site.base_url, transport=site.transport(), retries=0) as client:
        for day in tqdm(wanted, desc="backfill", unit="day", disable=None):
            reports.append(deliver_day(engine, settings, day, client, source="exchange"))
    return reports
