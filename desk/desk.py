"""The desk: what a client, an operator or a stage can ask the service to do, one method per
use case, built once per process from the engine, the settings, the trading calendar and
the clock (freqtrade's RPC facade is the model).

REST (api/routers/), GraphQL (api/graphql/mutation.py, query.py), the CLI (cli/) and the
stage adapters (pipeline/portfolio_stages.py, pipeline/bootstrap.py) call it in one line
each and add only their transport's concerns: status codes and schemas, union members,
one-line errors, stage summaries. Nothing below it knows which transport asked, and no
transport passes the engine, settings, calendar or clock down itself.

Decisions:
- The clock is the desk's (`now`): a replayed market's clock (api/services.py
  `ReplayClock`) or a pinned one in tests applies to every use case at once.
- A write answers from inside its transaction: every write takes `respond`, the
  transport's rendering of its result, and runs it before the commit
  (store.transactions `answered`), so an answer that cannot be rendered rolls the write
  back and an error always means nothing was written (docs/api.md, "A write's answer").
- Reads that run on a request's own connection (a preview, a track record) take it as
  their first argument, so a transport keeps its connection discipline (one per request,
  api/services.py); writes open their own locked transaction (portfolio/ledger.py).
- Uploads are read in two steps (`read_statement` / `read_note`, which touch no
  database, then `sync_statement` / `file_note`) so a transport can read a PDF without
  holding a database slot.
- Track records are read models kept by the desk (`records`, views/book_record.py): one
  per process, shared by REST and GraphQL; a read brings a book's up to date with the rows
  stored since its last state.
- Key issuance lives with authentication in api/keystore.py (it is the API's own
  concern and no other transport issues keys); the CLI's admin key is printed by
  `marketintel keys new-admin`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, Table

from analysis.research import NoteText, file_note, read_note
from market.clock import TradingCalendar, default_calendar, utc_now
from market.fees import fee_schedule
from market.settings import Settings
from models import macro_model
from models.macro_model import INSIGHTS_REFUSAL, MacroInsights
from portfolio import suggestions
from portfolio.ai import ExecutedDay, execute_day
from portfolio.ledger import AI_PORTFOLIO, get_portfolio
from portfolio.statements import StatementRead, file_statement, import_statement, read_statement
from portfolio.suggestions import MorningSuggestions, Suggestion
from portfolio.track_record import TrackRecord
from portfolio.trading import (
    ManualTrade,
    PlacedTrade,
    TradePreview,
    move_cash,
    open_client_portfolio,
    place_manual_trade,
)
from portfolio.trading import preview_trade as preview
from store import tables
from store.engine import service_engine
from store.history import current_rows
from store.transactions import Respond
from views.book_record import TrackRecords
from views.market import valuation_day
from views.valuation import PortfolioValuation, portfolio_view

__all__ = ["AI_PORTFOLIO", "INSIGHTS_REFUSAL", "Desk", "ManualTrade"]


@dataclass(frozen=True)
class Desk:
    """One per process (the API's `Services.desk`, the CLI's `desk()`, a stage's
    `StageContext`): every use case of the service with the engine, settings, calendar and
    clock bound once."""

    engine: Engine
    settings: Settings
    calendar: TradingCalendar = field(default_factory=default_calendar)
    now: Callable[[], datetime] = utc_now
    records: TrackRecords = field(default_factory=TrackRecords, compare=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, now: Callable[[], datetime] | None = None) -> Desk:
        """The desk of a process that has only its settings (the CLI, a stage kernel)."""
        return cls(service_engine(settings), settings, default_calendar(), now or utc_now)

    # ---- portfolios: open, trade, cash ---------------------------------------------------------

    def open_portfolio(self, client_id: str, house: bool = False) -> str:
        """The client's portfolio (or the house portfolio), created on first use; its id."""
        return open_client_portfolio(self.engine, client_id, kind="HOUSE" if house else "CLIENT")

    def place_trade(
        self, portfolio_id: str, order: ManualTrade, idempotency_key: str | None = None, respond: Respond = None
    ) -> PlacedTrade:
        """A manual trade checked against the listing, the price band, holdings and cash; a
        retried idempotency key returns the first result."""
        return place_manual_trade(
            self.engine, self.settings, self.calendar, portfolio_id, order, idempotency_key, self.now(), respond
        )

    def valuation(self, conn: Connection, portfolio_id: str) -> PortfolioValuation:
        """The portfolio after every booked trade at the latest priced day's closes, the shares
        of trades booked for a later session than the clock's marked pending
        (`TradingCalendar.session_of`); the API keeps its own per version (api/services.py)."""
        get_portfolio(conn, portfolio_id)
        now = self.now()
        day = valuation_day(conn, self.calendar, now)
        return portfolio_view(conn, portfolio_id, day, self.calendar.session_of(now))

    def preview_trade(self, conn: Connection, side: str, symbol: str, quantity: int) -> TradePreview:
        """What the cost model says the order would cost in a session like the latest; stores nothing."""
        return preview(conn, self.settings, self.calendar, side, symbol, quantity, self.now())

    def move_cash(
        self, portfolio_id: str, amount: Decimal | str | int, note: str | None = None, respond: Respond = None
    ) -> Decimal:
        """A deposit (amount > 0) or withdrawal (amount < 0); the new balance."""
        return move_cash(self.engine, portfolio_id, amount, note, self.now(), respond)

    # ---- morning suggestions ---------------------------------------------------------------------

    def suggestion_states(self, conn: Connection, portfolio_id: str) -> list[Suggestion]:
        """Every suggestion of the portfolio with its state (cacheable: it changes only with
        the suggestions and their events; expiry is applied by `pending_suggestions`)."""
        return suggestions.suggestion_states(conn, portfolio_id)

    def expired_suggestions(self, states: list[Suggestion], now: datetime) -> int:
        """How many of `states` have expired by `now` (a suggestion for day D at D's close)."""
        return sum(suggestions.is_expired(s, now) for s in states)

    def pending_suggestions(self, states: list[Suggestion], now: datetime) -> list[Suggestion]:
        """The pending, unexpired suggestions of `states` at `now`."""
        return suggestions.pending_at(states, now)

    def confirm_suggestion(self, portfolio_id: str, suggestion_id: str, respond: Respond = None) -> Suggestion:
        """Execute a pending suggestion after re-checking cash, holdings and the rails."""
        return suggestions.confirm(
            self.engine, self.settings, self.calendar, portfolio_id, suggestion_id, self.now(), respond
        )

    def reject_suggestion(self, portfolio_id: str, suggestion_id: str, respond: Respond = None) -> Suggestion:
        """Decline a pending suggestion."""
        return suggestions.reject(self.engine, portfolio_id, suggestion_id, self.now(), respond)

    # ---- statements and research notes -----------------------------------------------------------

    def read_statement(self, data: bytes, filename: str) -> StatementRead:
        """A statement PDF read in its sandbox and parsed; touches no database."""
        return read_statement(self.settings, data, filename)

    def sync_statement(
        self,
        portfolio_id: str,
        read: StatementRead,
        preview: bool = False,
        confirm: str | None = None,
        respond: Respond = None,
    ) -> dict[str, Any]:
        """The portfolio synchronised to a read statement (`preview`: rolled back, with a
        confirm token; `confirm`: a preview's token, applied only while the book is unchanged)."""
        return file_statement(self.engine, portfolio_id, read, self.now(), preview, confirm, respond)

    def import_statement(
        self,
        portfolio_id: str,
        data: bytes,
        filename: str,
        preview: bool = False,
        confirm: str | None = None,
        respond: Respond = None,
    ) -> dict[str, Any]:
        """`read_statement` then `sync_statement`; a file synchronised before is not read again."""
        return import_statement(
            self.engine, self.settings, portfolio_id, data, filename, self.now(), preview, confirm, respond
        )

    def read_note(self, data: bytes, filename: str | None, media_type: str | None) -> NoteText:
        """A research note's text (a PDF through the sandbox, text checked); touches no database."""
        return read_note(self.settings, data, filename, media_type)

    def file_note(self, note: NoteText, client_id: str | None, respond: Respond = None) -> dict[str, Any]:
        """A read note tagged, scored and stored once per client and content; its summary."""
        return file_note(self.engine, self.settings, note, client_id, respond)

    # ---- track records ----------------------------------------------------------------------------

    def track_record(self, conn: Connection, portfolio_id: str) -> TrackRecord:
        """A client's or the house portfolio's record beside both benchmarks, from the book's
        read model (views/book_record.py): a read after a write costs what changed."""
        return self.records.client(conn, portfolio_id)

    def ai_track_record(self, conn: Connection) -> TrackRecord:
        """The AI portfolio's record beside both benchmarks and against its null books over
        the same days, at the fee schedule the settings name."""
        return self.records.ai(conn, self.settings.ai_starting_cash, fee_schedule(self.settings))

    def macro_insights(self, conn: Connection) -> MacroInsights:
        """The week's macro parameters with their inputs (who may read them is the transport's
        tier check; its refusal text is INSIGHTS_REFUSAL)."""
        return macro_model.insights(macro_model.latest_parameters(current_rows(conn, tables.macro_parameters)))

    # ---- the day's stages -------------------------------------------------------------------------

    def morning_suggestions(self, day: date, record: Table = tables.predictions) -> MorningSuggestions:
        """T2 for `day`: every client and house portfolio's plan from the latest day scored
        before it in `record`, as pending suggestions (expiry judged at T2's own moment,
        never the wall clock)."""
        return suggestions.generate(self.engine, self.settings, day, record=record)

    # ---- the AI day ---------------------------------------------------------------------------------

    def ai_day(self, day: date, record: Table = tables.predictions) -> ExecutedDay:
        """T1 step 6: the AI book's plan for `day` under the rails, filled in the next
        session (`record`: the live predictions, or the validation record on a replay)."""
        return execute_day(self.engine, self.settings, day, record=record)
