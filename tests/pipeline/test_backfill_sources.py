"""`marketintel backfill` delivers another market (the simulator's made-up days, or replayed
files) through the T0 code path. Over a day T0 had delivered from the exchange with other
closes it stored its made-up closes as the day's current version, silently ("delivered 2
simulated days; 118 price rows inserted"): a valuation, the features and the AI book read
them from then on. Such a day is refused now, naming the day, both sources and the fix."""

from datetime import date

import pytest

from ingest.exchange.client import ExchangeClient
from ingest.exchange.delivery import deliver_day
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite
from market.errors import DeliveryRejectedError
from market.settings import Settings
from pipeline.backfill import backfill
from store import tables
from store.engine import service_engine
from store.history import current_rows

THURSDAY, FRIDAY = date(2026, 11, 19), date(2026, 11, 20)


def _scraped(settings: Settings, market: SimulatedMarket, day: date) -> None:
    """T0's delivery of `day` from an exchange serving `market` (source `exchange`)."""
    site = SimulatorSite(market, published_through=day)
    with ExchangeClient(site.base_url, transport=site.transport(), retries=0) as client:
        deliver_day(service_engine(settings), settings, day, client)


def _closes(settings: Settings, day: date) -> dict[str, tuple[float, str]]:
    with service_engine(settings).connect() as conn:
        rows = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == day])
    return {r["symbol"]: (r["close"], r["source"]) for r in rows}


def test_a_backfill_never_replaces_closes_the_exchange_delivered(settings: Settings) -> None:
    _scraped(settings, SimulatedMarket(seed=11), FRIDAY)  # the exchange: another market than the simulator's
    scraped = _closes(settings, FRIDAY)
    with pytest.raises(DeliveryRejectedError) as refused:
        backfill(service_engine(settings), settings, 2, FRIDAY, with_text=False)
    said = refused.value.detail
    assert "T0 data for 2026-11-20 refused, nothing stored" in said
    assert "closes of 2026-11-20 are stored from exchange and would be replaced by simulated ones" in said
    assert "`marketintel scrape --date 2026-11-20`" in said
    assert _closes(settings, FRIDAY) == scraped  # the exchange's closes stand
    assert _closes(settings, THURSDAY)  # the day before it, which nothing had delivered, was delivered
    with service_engine(settings).connect() as conn:
        (delivery,) = current_rows(conn, tables.deliveries, where=[tables.deliveries.c.trading_date == FRIDAY])
    assert (delivery["status"], delivery["source"]) == ("COMPLETE", "exchange")


def test_a_backfill_over_the_same_closes_from_the_exchange_adds_nothing(settings: Settings) -> None:
    """The demo's and the tests' way: T0 scraped the simulator served over HTTP (source
    `exchange`), and a later backfill over that day finds the same closes."""
    _scraped(settings, SimulatedMarket(), FRIDAY)
    scraped = _closes(settings, FRIDAY)
    (thursday, friday) = backfill(service_engine(settings), settings, 2, FRIDAY, with_text=False)
    assert friday.inserted.get("eod_prices", 0) == 0 and thursday.inserted["eod_prices"] > 0
    assert _closes(settings, FRIDAY) == scraped
