"""Past days through the same T0 and T1 text code paths (pages, parsers, validation,
store; feeds, PDFs, sentiment), served in-process instead of over a socket: simulated
days, or real ones from a replay (`ingest/replay.py`) when MARKETINTEL_REPLAY_PATH is set."""

from __future__ import annotations

from datetime import date

import httpx
from sqlalchemy import Engine
from tqdm import tqdm

from desk import Desk, keep_books
from ingest.exchange.client import ExchangeClient
from ingest.exchange.delivery import DeliveryReport, deliver_day
from ingest.markets import market_for
from ingest.replay import ReplayMarket
from ingest.simulator.market import SimulatedMarket
from ingest.simulator.site import SimulatorSite
from ingest.text_sources import ingest_text, pdf_extractor
from market.errors import InvalidInputError
from market.settings import Settings
from pipeline.sentiment import build_composite
from store.transactions import write_transaction


def backfill(
    engine: Engine,
    settings: Settings,
    days: int,
    end: date,
    market: SimulatedMarket | ReplayMarket | None = None,
    with_text: bool = True,
    base_url: str = "http://simulator.local",
) -> list[DeliveryReport]:
    """Deliver the `days` trading days of `market` (default: `market_for(settings)`) ending
    at `end` (inclusive), oldest first; with `with_text`, also each day's news and
    disclosures and its sentiment composite. `base_url`: the address the pages and the
    news feed's links name (a served simulator's, so that a later run over HTTP finds the
    disclosures it announces stored under the same address). A day whose closes were
    stored from another source (T0's scrape of the exchange) and differ is refused, not
    replaced (`deliver_day`'s `keep_sources`): the error names the day and the fix, and
    the days before it stay delivered."""
    market = market or market_for(settings)
    wanted = [d for d in market.days if d <= end][-days:]
    kind = "replayed" if isinstance(market, ReplayMarket) else "simulated"
    if not wanted:
        raise InvalidInputError(
            f"the {kind} market has no trading day on or before {end.isoformat()} "
            f"(its first is {market.days[0].isoformat()}); nothing was delivered"
        )
    site = SimulatorSite(market, base_url=base_url, published_through=end)
    # What the stored rows' `source` says they are (the Compliance Report counts days by it):
    # the simulator's made-up market, or real history replayed from files.
    origin = f"replay:{market.source.path.name}" if isinstance(market, ReplayMarket) else "simulated"
    # the site answers in process (no request leaves it), at an address that may be local or not resolve
    update = {"exchange_base_url": site.base_url, "news_feeds": [], "allow_private_enclosures": True}
    settings = settings.model_copy(update=update)
    reports = []
    with (
        ExchangeClient(site.base_url, transport=site.transport(), retries=0) as client,
        httpx.Client(transport=site.transport()) as http,
        pdf_extractor(settings) as extractor,
    ):
        for day in tqdm(wanted, desc="backfill", unit="day", disable=None):
            reports.append(
                deliver_day(engine, settings, day, client, source=origin, keep_books=keep_books, keep_sources=True)
            )
            if with_text:
                ingest_text(engine, settings, day, client, http, extractor)
                with write_transaction(engine, f"stage:t1_sentiment:{day.isoformat()}") as conn:
                    build_composite(conn, day)
    Desk(engine, settings).refresh_bars()  # the API's stored bars and indicators for the delivered history
    return reports
