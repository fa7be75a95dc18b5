"""Per-request DataLoaders: every per-instrument field of a list of N instruments is
gathered into one batch and answered by one call of a `views/instrument.py` or
`views/market.py` function (a fixed number of SQL statements), not N.

A key is a tuple `(symbol, *arguments)`; keys that share their arguments (the same
`history(first: 20)` on every instrument of a list) are answered together.

A prediction is loaded as the views hand it, a `models.scoring.ServedPrediction`.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection
from strawberry.dataloader import DataLoader

from market.clock import latest_closed_trading_day
from models.scoring import ServedPrediction
from store import tables
from store.history import newest_ids
from views import bars as bar_views
from views import instrument as instrument_views
from views import market as market_views

if TYPE_CHECKING:
    from api.services import Services

BatchRead = Callable[..., dict[str, Any]]  # (conn, symbols, *arguments) -> {symbol: value}
T = TypeVar("T")


async def loaded(loader: DataLoader, symbol: str, build: Callable[[Any], T]) -> T | None:
    """What `loader` holds for `symbol` (a key without arguments) as `build` makes it; None
    where it holds nothing."""
    value = await loader.load((symbol,))
    return build(value) if value else None


class Loaders:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self.instrument = self._loader(_instruments_by_symbol)
        self.quote = self._loader(self._latest_quotes)
        self.latest_prediction = self._loader(self._latest_predictions)
        self.predictions = self._loader(instrument_views.predictions_between)
        self.fundamentals = self._loader(instrument_views.latest_fundamentals)
        self.news = self._loader(instrument_views.news)
        self.sentiment = self._loader(instrument_views.sentiment_between)
        self.liquidity = self._loader(self._liquidity)
        self.history = self._loader(self._stored(bar_views.histories))
        self.recent_bars = self._loader(self._stored(bar_views.recent_histories))

    def _loader(self, read: BatchRead) -> DataLoader:
        engine = self.svc.engine

        async def load(keys: list[tuple]) -> list[Any]:
            groups: dict[tuple, list[str]] = defaultdict(list)
            for symbol, *arguments in keys:
                if symbol not in groups[tuple(arguments)]:
                    groups[tuple(arguments)].append(symbol)

            def run() -> dict[tuple, dict[str, Any]]:
                with engine.connect() as conn:
                    return {arguments: read(conn, symbols, *arguments) for arguments, symbols in groups.items()}

            found = await asyncio.to_thread(run)
            return [found[tuple(arguments)].get(symbol) for symbol, *arguments in keys]

        return DataLoader(load_fn=load)

    def _latest_quotes(self, conn: Connection, symbols: list[str]) -> dict[str, dict]:
        """The REST /api/market/latest entries, from the same function and the same cache."""
        svc = self.svc

        def build() -> dict[str, dict]:
            return market_views.latest_market(conn, svc.calendar, latest_closed_trading_day(svc.now(), svc.calendar))

        quotes = svc.cached(("latest-quotes",), market_views.data_version(conn), build)
        return {s: quotes[s] for s in symbols if s in quotes}

    def _stored(self, read: BatchRead) -> BatchRead:
        """A batch read of the stored daily bars (views/bars.py), kept per batch of keys
        until the bars' version moves: one statement for every symbol of a batch."""

        def batch(conn: Connection, symbols: list[str], *arguments: Any) -> dict[str, Any]:
            marks = bar_views.watermarks(conn)
            return self.svc.cached(
                (read.__name__, tuple(symbols), *arguments), marks, lambda: read(conn, symbols, *arguments, marks=marks)
            )

        return batch

    def _latest_predictions(self, conn: Connection, symbols: list[str]) -> dict[str, ServedPrediction]:
        def build() -> dict[str, ServedPrediction]:
            return instrument_views.latest_predictions(conn, symbols)

        version = newest_ids(conn, tables.predictions)
        return self.svc.cached(("latest-predictions", tuple(symbols)), version, build)

    def _liquidity(self, conn: Connection, symbols: list[str]) -> dict[str, dict]:
        day = market_views.latest_priced_day(conn)
        return instrument_views.liquidity(conn, day, symbols) if day else {}


def _instruments_by_symbol(conn: Connection, symbols: list[str]) -> dict[str, dict]:
    wanted = set(symbols)
    return {r["symbol"]: r for r in instrument_views.instruments(conn) if r["symbol"] in wanted}
