"""Per-request DataLoaders: every per-instrument field of a list of N instruments is
gathered into one batch and answered by one call of a desk read (desk/market_reads.py:
a fixed number of SQL statements), not N.

A key is a tuple `(symbol, *arguments)`; keys that share their arguments (the same
`history(first: 20)` on every instrument of a list) are answered together.

A prediction is loaded as the desk hands it, a `ServedPrediction`.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from strawberry.dataloader import DataLoader

if TYPE_CHECKING:
    from api.services import Services

BatchRead = Callable[..., dict[str, Any]]  # (conn, symbols, *arguments) -> {symbol: value}
T = TypeVar("T")


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` in a worker thread (asyncio's), its StopIteration raised as a
    RuntimeError: asyncio cannot set a StopIteration on the future awaited, so a read that
    raised one (a `next()` that found nothing) left its field, its operation and the worker
    thread running it waiting for ever, where it is now the field's masked error."""
    return await asyncio.to_thread(_no_stop_iteration, function, *args)


def _no_stop_iteration(function: Callable[..., T], *args: Any) -> T:
    try:
        return function(*args)
    except StopIteration as stop:
        raise RuntimeError(f"{getattr(function, '__qualname__', function)} raised StopIteration") from stop


async def loaded(loader: DataLoader, symbol: str, build: Callable[[Any], T]) -> T | None:
    """What `loader` holds for `symbol` (a key without arguments) as `build` makes it; None
    where it holds nothing."""
    value = await loader.load((symbol,))
    return build(value) if value else None


class Loaders:
    def __init__(self, svc: Services) -> None:
        self.svc = svc
        desk = svc.desk
        self.instrument = self._loader(desk.instruments_by_symbol)
        self.quote = self._loader(desk.quotes)  # REST's /api/market/latest entries, from the same read
        self.latest_prediction = self._loader(desk.latest_predictions)
        self.predictions = self._loader(desk.predictions_between)
        self.fundamentals = self._loader(desk.fundamentals)
        self.news = self._loader(desk.news)
        self.sentiment = self._loader(desk.sentiment_between)
        self.liquidity = self._loader(desk.liquidity)
        self.ticker_changes = self._loader(desk.ticker_changes)
        self.share_splits = self._loader(desk.share_splits)
        self.history = self._loader(desk.histories)
        self.recent_bars = self._loader(desk.recent_histories)

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

            found = await in_thread(run)
            return [found[tuple(arguments)].get(symbol) for symbol, *arguments in keys]

        return DataLoader(load_fn=load)
