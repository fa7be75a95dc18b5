"""The desk's reads of the market and the model: the latest day, breadth, a symbol's
statistics and history, the instruments and what a list of them shows (quotes,
predictions, fundamentals, news, sentiment, liquidity, bars), the model's records and
monitor, the day's analysis and the macro indicators. A mixin of `Desk` (desk/desk.py),
written apart to keep each module readable.

A read a transport may keep answers a `Versioned` (desk/cache.py) with the version it
depends on (desk/versions.py); the reads of a list's fields take `(conn, symbols, *args)`
and answer `{symbol: value}`, the shape of a GraphQL DataLoader's batch
(api/graphql/loaders.py). Where the model is kept here (the latest quotes, breadth, the
latest predictions and the stored bars of a batch), REST and GraphQL share one entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection

from desk import versions
from desk.cache import ReadCache, Versioned
from market.clock import TradingCalendar, exchange_date, latest_closed_trading_day
from market.errors import InvalidInputError
from models import macro_model
from models.macro_model import MacroInsights
from models.scoring import ServedPrediction
from store import tables
from store.history import current_rows
from store.splits import ShareSplit, TickerChanges, share_splits, ticker_changes
from views import bars as bar_views
from views import instrument as instrument_views
from views import macro as macro_views
from views import market as market_views
from views.analysis import StoredAnalysis, stored_analysis
from views.breadth import Breadth, market_breadth
from views.instrument import FundamentalsRow, InstrumentRow, Liquidity, NewsItem
from views.macro import Indicators
from views.market import History, Quote, SymbolHistory, SymbolStatistics
from views.performance import ModelRecord, MonitorState, Performance, monitor_state, performance, validation_record


class MarketReads:
    """What `Desk` reads of the market and the model (its fields: desk/desk.py)."""

    calendar: TradingCalendar
    now: Callable[[], datetime]
    cache: ReadCache

    def today(self) -> date:
        """The exchange's date on the service's clock: what the macro reads call today (a
        release dated after it is not known yet)."""
        return exchange_date(self.now())

    def closed_day(self) -> date:
        """The latest closed trading day on the desk's clock: which days a market read serves."""
        return latest_closed_trading_day(self.now(), self.calendar)

    # ---- the day's market -------------------------------------------------------------------------

    def latest_market(self, conn: Connection, day: date | None = None) -> Versioned[dict[str, Quote]]:
        """Every ticker's close, volume, change and indicators on the latest delivered day (or
        `day`) with its prediction; a day before the first live day from the validation record."""
        closed = self.closed_day()
        version = (versions.latest_market(conn), closed)
        return Versioned(("latest", day), version, lambda: market_views.latest_market(conn, self.calendar, closed, day))

    def quotes(self, conn: Connection, symbols: list[str]) -> dict[str, Quote]:
        """The latest day's quote of each of `symbols`, from the latest market kept here."""
        read = self.latest_market(conn)
        quotes = self.cache.cached(("latest-quotes",), read.version, read.build)
        return {s: quotes[s] for s in symbols if s in quotes}

    def breadth(self, conn: Connection, day: date | None = None) -> Versioned[Breadth]:
        """The day's advancers, decliners, unchanged and untraded names and the index's change,
        kept here per version (REST's body and GraphQL's `marketBreadth` share it)."""
        closed = self.closed_day()
        version = (versions.breadth(conn), closed)

        def build() -> Breadth:
            return self.cache.cached(
                ("market-breadth", day), version, lambda: market_breadth(conn, self.calendar, closed, day)
            )

        return Versioned(("breadth", day), version, build)

    def symbol_statistics(self, conn: Connection, symbol: str) -> Versioned[SymbolStatistics]:
        """A symbol's return variances and latest z-scores from the stored bars, with the
        reasons of its latest prediction (which move with the predictions)."""
        version = versions.symbol_statistics(conn)
        return Versioned(
            ("symbol", symbol.upper()), version, lambda: _named(conn, bar_views.symbol_statistics(conn, symbol))
        )

    def history(
        self,
        conn: Connection,
        symbol: str,
        span: tuple[date | None, date | None],
        limit: int,
        cursor: tuple[date | None, date | None] = (None, None),
    ) -> Versioned[SymbolHistory]:
        """A page of `limit` daily bars with their indicators within `span` (start, end):
        forward after `cursor`'s first date, else backward before its second; with the
        symbol's ticker changes and splits (the bars are what traded under the ticker, as
        traded: `views.market.split_history`)."""

        def read() -> SymbolHistory:
            page = _named(conn, bar_views.history(conn, symbol, bar_views.BarPage(limit, *span, *cursor)))
            return {**page, "splits": market_views.split_history(conn, page["symbol"])}

        return Versioned(("history", symbol.upper(), *span, limit, *cursor), versions.bars(conn), read)

    # ---- instruments and a list's fields ----------------------------------------------------------

    def instruments(self, conn: Connection) -> list[InstrumentRow]:
        """The instruments listed on the latest closed trading day, by symbol (a delisted
        one is read by its symbol, `instruments_by_symbol`, not listed)."""
        return instrument_views.instruments(conn, on=self.closed_day())

    def instrument_version(self, conn: Connection) -> tuple:
        """What every field of an instrument reads (a whole market query is kept per it)."""
        return versions.instrument_reads(conn)

    def instruments_by_symbol(self, conn: Connection, symbols: list[str]) -> dict[str, InstrumentRow]:
        wanted = set(symbols)
        return {r["symbol"]: r for r in instrument_views.instruments(conn) if r["symbol"] in wanted}

    def latest_predictions(self, conn: Connection, symbols: list[str]) -> dict[str, ServedPrediction]:
        """Each symbol's prediction on the latest scored day, kept per batch until either
        record's predictions move (the validation record's serve before the first live day)."""
        return self.cache.cached(
            ("latest-predictions", tuple(symbols)),
            versions.predictions(conn),
            lambda: instrument_views.latest_predictions(conn, symbols),
        )

    def predictions_between(
        self,
        conn: Connection,
        symbols: list[str],
        start: date | None,
        end: date | None,
        limit: int | None = None,
        after: date | None = None,
    ) -> dict[str, list[ServedPrediction]]:
        """Each symbol's served predictions within [start, end], oldest first: the first
        `limit` after the day `after` (a page and its cursor's day), all without them."""
        return instrument_views.predictions_between(conn, symbols, start, end, limit, after)

    def fundamentals(self, conn: Connection, symbols: list[str]) -> dict[str, FundamentalsRow]:
        return instrument_views.latest_fundamentals(conn, symbols)

    def news(self, conn: Connection, symbols: list[str]) -> dict[str, list[NewsItem]]:
        return instrument_views.news(conn, symbols)

    def sentiment_between(
        self, conn: Connection, symbols: list[str], start: date | None, end: date | None
    ) -> dict[str, list[dict]]:
        return instrument_views.sentiment_between(conn, symbols, start, end)

    def ticker_changes(self, conn: Connection, symbols: list[str]) -> dict[str, TickerChanges]:
        """Each symbol's stored ticker changes (`store.splits.ticker_changes`)."""
        return ticker_changes(conn, symbols)

    def share_splits(self, conn: Connection, symbols: list[str]) -> dict[str, tuple[ShareSplit, ...]]:
        """Each symbol's stored splits, oldest first (`store.splits.share_splits`)."""
        return share_splits(conn, symbols)

    def liquidity(self, conn: Connection, symbols: list[str]) -> dict[str, Liquidity]:
        """The entry gates of each symbol on the latest priced day (none before any price)."""
        day = market_views.latest_priced_day(conn)
        return instrument_views.liquidity(conn, day, symbols) if day else {}

    def histories(
        self,
        conn: Connection,
        symbols: list[str],
        start: date | None,
        end: date | None,
        limit: int,
        after: date | None = None,
    ) -> dict[str, History]:
        """Each symbol's stored bars forward from `start`, kept per batch until the bars move."""
        return self.cache.cached(
            ("histories", tuple(symbols), start, end, limit, after),
            versions.bars(conn),
            lambda: bar_views.histories(conn, symbols, start, end, limit, after),
        )

    def recent_histories(
        self, conn: Connection, symbols: list[str], count: int, end: date | None = None
    ) -> dict[str, History]:
        """Each symbol's last `count` stored bars up to `end`, kept per batch until the bars move."""
        return self.cache.cached(
            ("recent_histories", tuple(symbols), count, end),
            versions.bars(conn),
            lambda: bar_views.recent_histories(conn, symbols, count, end),
        )

    # ---- the model, the analysis, macro -----------------------------------------------------------

    def performance(self, conn: Connection) -> Versioned[Performance]:
        """The model's validation and live records beside their base rates, the latest
        model and the monitor's latest day, kept here per version (REST's body and
        GraphQL's `modelPerformance` share it)."""
        version = versions.performance(conn)
        return Versioned(
            ("performance",),
            version,
            lambda: self.cache.cached(("performance-model",), version, lambda: performance(conn, self.calendar)),
        )

    def validation_record(self, conn: Connection) -> ModelRecord:
        """The validation record as the performance read counts it."""
        return validation_record(conn)

    def monitor_state(self, conn: Connection, as_of: date | None = None) -> MonitorState:
        """The model monitor's latest day (on or before `as_of`): the overall state and each check's."""
        return monitor_state(conn, as_of)

    def analysis(self, conn: Connection, day: date | None = None) -> StoredAnalysis:
        """The day's written analysis (the latest analysed day without `day`) and its notifications;
        a `day` that is no trading day or has not closed is refused as the market's reads refuse it."""
        if day is not None:
            market_views.check_closed_session(self.calendar, day, self.closed_day())
        return stored_analysis(conn, day)

    def macro_indicators(
        self,
        conn: Connection,
        source: str | None = None,
        category: str | None = None,
        currency: str | None = None,
        as_of: date | None = None,
    ) -> Versioned[Indicators]:
        """The latest value of every macro indicator (as known on `as_of`), filtered, money
        values in `currency` where asked. An `as_of` after today (the exchange's date) is
        refused: what will be known then is not known yet, and the answer labelled with it
        would be today's (ALFRED reads such a date as "the latest"; here that is an `as_of`
        left out). Without `as_of`, the latest is what is known today: a release dated
        after it is not served."""
        today = self.today()
        if as_of is not None and as_of > today:
            raise InvalidInputError(
                f"as_of {as_of.isoformat()} is after today ({today.isoformat()}): values are known only up to "
                "today; leave as_of out for the latest"
            )
        return Versioned(
            ("macro", source, category, currency, as_of, today),
            versions.macro(conn),
            lambda: macro_views.indicators(conn, source, category, currency, as_of, today),
        )

    def macro_insights(self, conn: Connection) -> MacroInsights:
        """The macro parameters of the latest week starting on or before today (`today`, the
        date `macro_indicators` reads its latest on) with their inputs, so they draw only on
        releases known today (who may read them is the transport's tier check; its refusal
        text is INSIGHTS_REFUSAL)."""
        stored = current_rows(conn, tables.macro_parameters)
        return macro_model.insights(macro_model.latest_parameters(stored, self.today()))


def _named(conn: Connection, answer: Mapping[str, Any]) -> Any:
    """A symbol's answer with its ticker changes (`views.market.renamed`)."""
    return {**answer, **market_views.renamed(conn, answer["symbol"])}
