from __future__ import annotations

from datetime import date
from typing import Any

import strawberry
from strawberry.types import Info

from api.graphql.loaders import loaded
from api.graphql.pagination import Connection, Page, PageInfo, connection_field, day, keyed, moment, row_id, text
from api.graphql.types.daily_bar import DailyBar
from api.graphql.types.derived import from_domain
from api.graphql.types.fundamentals import Fundamentals
from api.graphql.types.liquidity import Liquidity
from api.graphql.types.news_item import NewsItem
from api.graphql.types.prediction import Prediction, latest_prediction_of
from api.graphql.types.quote import Quote
from api.graphql.types.sentiment_score import SentimentScore
from api.graphql.types.share_split import ShareSplit
from api.graphql.types.ticker_change import TickerChange
from api.paging import HISTORY
from market.errors import InvalidInputError

# An instrument's lists: their cursors name the instrument (`Page.on`), another's is refused
# (its history's, HISTORY, REST's market history pages forward too: api/paging.py).
RECENT_BARS = Page("recentBars", default=20, largest=2000, key=day, per_instrument=True)
PREDICTIONS = Page("predictions", default=100, largest=2000, key=day, per_instrument=True)
NEWS_KEY = keyed(moment, text, row_id)  # published, kind, id
NEWS = Page("news", default=20, largest=200, key=NEWS_KEY, per_instrument=True)
SENTIMENT = Page("sentiment", default=100, largest=2000, key=day, per_instrument=True)


def _range(start: date | None, end: date | None) -> None:
    if start and end and start > end:
        raise InvalidInputError(f"start {start.isoformat()} is after end {end.isoformat()}")


@strawberry.type(
    description="An instrument, listed or delisted (`delistedOn`); every per-instrument field is batched across a "
    "list of instruments."
)
class Instrument:
    symbol: str
    name: str
    board: str
    sector: str | None
    currency: str
    listed_on: date | None
    delisted_on: date | None = strawberry.field(
        description="The first day it was no longer listed (its last session is the one before); null while listed."
    )

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Instrument:
        return cls(**{name: row[name] for name in cls.__annotations__})

    @strawberry.field(description="This instrument's entry in GET /api/market/latest.")
    async def latest_quote(self, info: Info) -> Quote | None:
        return await loaded(info.context.loaders.quote, self.symbol, Quote.from_entry)

    latest_prediction = strawberry.field(
        resolver=latest_prediction_of,
        description="The prediction of the latest scored day; null when the model skipped the instrument.",
    )

    @strawberry.field(
        description="Set when this ticker was renamed: the ticker the company trades under from `asOf`. The bars "
        "under this ticker are what traded under it, before `asOf`; the model and the benchmarks read them as the new "
        "ticker's history. null: not renamed."
    )
    async def renamed_to(self, info: Info) -> TickerChange | None:
        changes = await info.context.loaders.ticker_changes.load((self.symbol,))
        return from_domain(TickerChange, changes.renamed_to) if changes and changes.renamed_to else None

    @strawberry.field(
        description="The company's earlier tickers, oldest first, each with the day this ticker replaced it "
        "(`asOf`): their bars, under them, are this ticker's history for the model and the benchmarks. Empty: none."
    )
    async def renamed_from(self, info: Info) -> list[TickerChange]:
        changes = await info.context.loaders.ticker_changes.load((self.symbol,))
        return [from_domain(TickerChange, c) for c in changes.renamed_from] if changes else []

    @strawberry.field(
        description="The instrument's splits, bonus issues and consolidations, oldest first (GET "
        "/api/market/history's `splits`; an ex-date after the newest bar is one announced ahead): its bars' prices "
        "and volume are as traded, so a close divided by the `factor` of each split after its date through a day is "
        "on that day's count. Empty: none."
    )
    async def splits(self, info: Info) -> list[ShareSplit]:
        found = await info.context.loaders.share_splits.load((self.symbol,))
        return [from_domain(ShareSplit, s) for s in found or ()]

    @strawberry.field(description="Entry gates of the liquidity rail on the latest market day.")
    async def liquidity(self, info: Info) -> Liquidity | None:
        return await loaded(info.context.loaders.liquidity, self.symbol, Liquidity.from_row)

    @strawberry.field(description="The latest reported fundamentals.")
    async def fundamentals(self, info: Info) -> Fundamentals | None:
        return await loaded(info.context.loaders.fundamentals, self.symbol, Fundamentals.from_row)

    @connection_field("Daily bars oldest first within [start, end] (GET /api/market/history).")
    async def history(
        self,
        info: Info,
        start: date | None = None,
        end: date | None = None,
        first: int | None = HISTORY.default,
        after: str | None = None,
    ) -> Connection[DailyBar] | None:
        _range(start, end)
        pages = HISTORY.on(self.symbol)
        size, cursor_day = pages.size(first), pages.key_after(after)
        page = await info.context.loaders.history.load((self.symbol, start, end, size, cursor_day))
        return _bars(pages, page)

    @connection_field("The last `first` bars up to `end` (default: the latest), oldest first.")
    async def recent_bars(
        self, info: Info, first: int | None = RECENT_BARS.default, end: date | None = None
    ) -> Connection[DailyBar] | None:
        page = await info.context.loaders.recent_bars.load((self.symbol, RECENT_BARS.size(first), end))
        return _bars(RECENT_BARS.on(self.symbol), page)

    @connection_field("Served predictions within [start, end], oldest first.")
    async def predictions(
        self,
        info: Info,
        start: date | None = None,
        end: date | None = None,
        first: int | None = PREDICTIONS.default,
        after: str | None = None,
    ) -> Connection[Prediction] | None:
        _range(start, end)
        pages = PREDICTIONS.on(self.symbol)
        size, cursor_day = pages.size(first), pages.key_after(after)
        # The page is read, not the range: `size` + 1 rows after the cursor's day say whether another follows.
        rows = await info.context.loaders.predictions.load((self.symbol, start, end, size + 1, cursor_day))
        return pages.connection(rows, lambda r: r.trading_date, first, after, Prediction.from_row)

    @connection_field("News and disclosures naming the instrument, newest first.")
    async def news(
        self, info: Info, first: int | None = NEWS.default, after: str | None = None
    ) -> Connection[NewsItem] | None:
        rows = await info.context.loaders.news.load((self.symbol,))
        return NEWS.on(self.symbol).connection(
            rows, lambda r: (r["published_at"], r["kind"], r["id"]), first, after, NewsItem.from_row, "descending"
        )

    @connection_field("The daily sentiment composite within [start, end], oldest first.")
    async def sentiment(
        self,
        info: Info,
        start: date | None = None,
        end: date | None = None,
        first: int | None = SENTIMENT.default,
        after: str | None = None,
    ) -> Connection[SentimentScore] | None:
        _range(start, end)
        rows = await info.context.loaders.sentiment.load((self.symbol, start, end))
        pages = SENTIMENT.on(self.symbol)
        return pages.connection(rows, lambda r: r["trading_date"], first, after, SentimentScore.from_row)


def _bars(page_rule: Page, page: dict[str, Any]) -> Connection[DailyBar]:
    items = page["items"]
    end_cursor = page_rule.cursor(items[-1]["trading_date"]) if items else None
    return Connection(
        nodes=[DailyBar.from_item(i) for i in items],
        page_info=PageInfo(end_cursor=end_cursor, has_next_page=page["next_cursor"] is not None),
    )
