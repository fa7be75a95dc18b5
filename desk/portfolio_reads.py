"""The desk's reads of portfolios: a book's valuation and summary, its ledger's pages, its
track record and pending suggestions, and the AI portfolio's. A mixin of `Desk`
(desk/desk.py), written apart to keep each module readable.

Each answers a `Versioned` (desk/cache.py): the version its model depends on
(desk/versions.py) and how to build it. A valuation is kept here once per version and
shared by every read of it (positions, summary, the AI portfolio's both); a client's track
record is kept per version too, its rebuild that client's expensive read (`owner`); a
book's suggestions are kept with their states, expiry applied at the desk's clock on
each read."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from sqlalchemy import Connection

from desk import versions
from desk.cache import ReadCache, Versioned
from market.clock import TradingCalendar, exchange_date
from market.fees import fee_schedule
from market.settings import Settings
from portfolio import suggestions
from portfolio.ledger import AI_PORTFOLIO, get_portfolio
from portfolio.suggestions import Suggestion
from portfolio.track_record import TrackRecord
from store.history import Part
from views import portfolio as portfolio_views
from views.book_record import TrackRecords
from views.market import valued_at
from views.portfolio import AIDayTrades, AIPosition, AISummary, CashMovement, PortfolioSummary, TradeView
from views.valuation import PortfolioValuation, portfolio_view


class PortfolioReads:
    """What `Desk` reads of portfolios (its fields: desk/desk.py)."""

    settings: Settings
    calendar: TradingCalendar
    now: Callable[[], datetime]
    records: TrackRecords
    cache: ReadCache

    # ---- valuations -------------------------------------------------------------------------------

    def _valuation_version(self, conn: Connection, portfolio_id: str, *more: Part) -> tuple:
        """The valuation day and the current session (views/market.py `valued_at`, the rule
        the reports value by too: kept per newest price and exchange date, all it depends
        on), then the ids the valuation is built from (`versions.valuation`) and `more`."""
        newest = versions.valuation(conn, portfolio_id, *more)
        now = self.now()
        at = self.cache.cached(
            ("valued-at",), (newest[0], exchange_date(now)), lambda: valued_at(conn, self.calendar, now)
        )
        return (at.day, at.session, *newest)

    def _valued(self, conn: Connection, portfolio_id: str, version: tuple) -> PortfolioValuation:
        """The portfolio valued once per valuation version (less any `more` parts)."""
        return self.cache.cached(
            ("valuation", portfolio_id), version[:6], lambda: portfolio_view(conn, portfolio_id, *version[:2])
        )

    def positions(self, conn: Connection, portfolio_id: str) -> Versioned[PortfolioValuation]:
        """The portfolio after every booked trade at the latest priced day's closes, with
        exit flags; the shares of trades booked for a later session than the clock's marked
        pending."""
        version = self._valuation_version(conn, portfolio_id)
        return Versioned(("positions", portfolio_id), version, lambda: self._valued(conn, portfolio_id, version))

    @staticmethod
    def _named(conn: Connection, portfolio_id: str) -> None:
        """An operator's portfolio id must name a book (NotFoundError otherwise: a typo,
        where a caller's own book is opened on first use), except the AI portfolio's: it
        answers before its first executed day as REST's AI reads do, an empty book that
        has not started."""
        if portfolio_id != AI_PORTFOLIO:
            get_portfolio(conn, portfolio_id)

    def valuation(self, conn: Connection, portfolio_id: str) -> PortfolioValuation:
        """`positions` of a portfolio an operator named (`_named`)."""
        self._named(conn, portfolio_id)
        return self.positions(conn, portfolio_id).value()

    def record_of(self, conn: Connection, portfolio_id: str) -> TrackRecord:
        """The track record of a portfolio an operator named (`_named`): the AI portfolio's
        with its null books (`ai_track_record`; before its first executed day, days 0 and
        the reason), any other's beside both benchmarks (`track_record`); what an
        operator's command prints."""
        self._named(conn, portfolio_id)
        if portfolio_id == AI_PORTFOLIO:
            return self.ai_track_record(conn).value()
        return self.track_record(conn, portfolio_id).value()

    def portfolio_summary(self, conn: Connection, portfolio_id: str) -> Versioned[PortfolioSummary]:
        """Totals, each position's and cash's share of equity, the flagged positions and the
        dividends receivable today (the exchange date of the desk's clock: what a withdrawal
        now may not take)."""
        version = self._summary_version(conn, portfolio_id)
        return Versioned(("summary", portfolio_id), version, lambda: self._summary(conn, portfolio_id, version))

    def portfolio(self, conn: Connection, portfolio_id: str) -> tuple[PortfolioSummary, PortfolioValuation]:
        """`portfolio_summary` and `positions` on one version read, both as kept (GraphQL's
        `portfolio`)."""
        version = self._summary_version(conn, portfolio_id)
        return self._summary(conn, portfolio_id, version), self._valued(conn, portfolio_id, version)

    def _summary_version(self, conn: Connection, portfolio_id: str) -> tuple:
        """The valuation's version and the exchange date the receivable is counted on."""
        return (*self._valuation_version(conn, portfolio_id), exchange_date(self.now()))

    def _summary(self, conn: Connection, portfolio_id: str, version: tuple) -> PortfolioSummary:
        """The summary model at `version` (`_summary_version`), built once per version."""

        def build() -> PortfolioSummary:
            view = self._valued(conn, portfolio_id, version)
            return portfolio_views.summarise(view, portfolio_views.receivable(conn, view, version[-1]))

        return self.cache.cached(("summary-model", portfolio_id), version, build)

    def ai_positions(self, conn: Connection) -> Versioned[list[AIPosition]]:
        """The AI portfolio's open positions, each with its opening trade's rationale and
        time, kept here per valuation version (REST's body and GraphQL's `aiPortfolio`
        share them)."""
        version = self._valuation_version(conn, AI_PORTFOLIO)
        return Versioned(("ai-positions",), version, lambda: self._ai_positions(conn, version))

    def ai_summary(self, conn: Connection) -> Versioned[AISummary]:
        """The AI portfolio's summary with its start, starting cash and total return, kept
        here per version of its valuation and executed days (REST's body and GraphQL's
        `aiPortfolio` share it)."""
        version = self._valuation_version(conn, AI_PORTFOLIO, versions.AI_DAYS)
        return Versioned(("ai-summary",), version, lambda: self._ai_summary(conn, version))

    def ai_portfolio(self, conn: Connection) -> tuple[AISummary, list[AIPosition]]:
        """`ai_summary` and `ai_positions` on one version read, both as kept (GraphQL's
        `aiPortfolio`)."""
        version = self._valuation_version(conn, AI_PORTFOLIO, versions.AI_DAYS)
        return self._ai_summary(conn, version), self._ai_positions(conn, version[:6])

    def _ai_positions(self, conn: Connection, version: tuple) -> list[AIPosition]:
        """The AI portfolio's positions model at its valuation `version`, built once per version."""
        return self.cache.cached(
            ("ai-positions-model",),
            version[:6],
            lambda: portfolio_views.ai_positions(conn, version[0], view=self._valued(conn, AI_PORTFOLIO, version)),
        )

    def _ai_summary(self, conn: Connection, version: tuple) -> AISummary:
        """The AI portfolio's summary model at `version` (its valuation's and its executed
        days'), built once per version: its starting cash is the opening deposit among the
        cash entries the version names (the setting only before the book has opened)."""
        cash = self.settings.ai_starting_cash
        return self.cache.cached(
            ("ai-summary-model",),
            version,
            lambda: portfolio_views.ai_summary(conn, version[0], cash, view=self._valued(conn, AI_PORTFOLIO, version)),
        )

    # ---- the ledger's pages -----------------------------------------------------------------------

    def trades(
        self, conn: Connection, portfolio_id: str, after: int | None, limit: int
    ) -> Versioned[list[tuple[int, TradeView]]]:
        """At most `limit + 1` of the portfolio's trades after ledger row `after`, in the order
        the book recorded them, each keyed by its row."""
        return Versioned(
            ("trades", portfolio_id, after, limit),
            versions.trades(conn, portfolio_id),
            lambda: portfolio_views.trade_page(conn, portfolio_id, after, limit),
        )

    def cash_movements(
        self, conn: Connection, portfolio_id: str, after: int | None, limit: int
    ) -> Versioned[list[tuple[int, CashMovement]]]:
        """At most `limit + 1` of the portfolio's cash movements after ledger row `after`,
        with the balance after each."""
        return Versioned(
            ("cash", portfolio_id, after, limit),
            versions.cash(conn, portfolio_id),
            lambda: portfolio_views.cash_page(conn, portfolio_id, after, limit),
        )

    def ai_days(self, conn: Connection, after: date | None, limit: int) -> Versioned[list[tuple[date, AIDayTrades]]]:
        """At most `limit + 1` of the AI portfolio's executed days after `after`, oldest first,
        each with the trades executed that day."""
        return Versioned(
            ("ai-days", after, limit),
            versions.ai_record(conn),
            lambda: portfolio_views.ai_day_page(conn, after, limit),
        )

    # ---- track records ----------------------------------------------------------------------------

    def track_record(self, conn: Connection, portfolio_id: str) -> Versioned[TrackRecord]:
        """A client's or the house portfolio's record beside both benchmarks, from the book's
        read model (views/book_record.py: a read after a write costs what changed), kept
        here per version; rebuilding it is the book's owner's expensive read."""
        version = versions.track_record(conn, portfolio_id)
        key = ("track-record", portfolio_id)

        def build() -> TrackRecord:
            return self.cache.owned(portfolio_id, key, version, lambda: self.records.client(conn, portfolio_id))

        return Versioned(key, version, build, owner=portfolio_id)

    def ai_track_record(self, conn: Connection) -> Versioned[TrackRecord]:
        """The AI portfolio's record beside both benchmarks and against its null books over
        the same days, at the fee schedule the settings name."""
        return Versioned(
            ("ai-track-record",),
            versions.ai_track_record(conn),
            lambda: self.records.ai(conn, self.settings.ai_starting_cash, fee_schedule(self.settings)),
        )

    # ---- morning suggestions ----------------------------------------------------------------------

    def pending_suggestions(self, conn: Connection, portfolio_id: str) -> Versioned[list[Suggestion]]:
        """The portfolio's pending suggestions at the desk's clock, oldest trading day first,
        sells before buys, then by symbol (a suggestion for day D expires at D's close). Their
        states are kept per version of the suggestions and their events; the version of the
        answer adds how many of them have expired by now (the clock's part of it)."""
        version = versions.suggestions(conn, portfolio_id)
        states = self.cache.cached(
            ("suggestion-states", portfolio_id), version, lambda: suggestions.suggestion_states(conn, portfolio_id)
        )
        now = self.now()
        expired = sum(suggestions.is_expired(s, now) for s in states)
        return Versioned(("suggestions", portfolio_id), (version, expired), lambda: suggestions.pending_at(states, now))
