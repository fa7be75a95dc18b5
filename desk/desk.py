"""The desk: what a client, an operator or a stage can ask the service to do, reads
included, one method per use case, built once per process from the engine, the settings,
the trading calendar and the clock (freqtrade's RPC facade is the model).

REST (api/), GraphQL (api/graphql/), the CLI (cli/) and the stage adapters
(pipeline/portfolio_stages.py, pipeline/bootstrap.py) call it in one line each and add
only their transport's concerns: status codes and schemas, pages, union members,
one-line errors, stage summaries. The transports import nothing else of the project but
market/ (pyproject.toml's import contracts): the domain's types they annotate with are
re-exported here (desk/domain.py). Nothing below it knows which transport asked, and no
transport passes the engine, settings, calendar or clock down itself.

The use cases are written in three modules: this one (portfolios, trades, cash,
suggestions, statements, research notes, keys, reports, the day's stages), the portfolio
reads (desk/portfolio_reads.py) and the market and model reads (desk/market_reads.py).

Decisions:
- The clock is the desk's (`now`): a replayed market's clock (desk/clock.py
  `ReplayClock`, `Desk.serving`) or a pinned one in tests applies to every use case at once.
- Reads are versioned and kept here: a read a transport may keep answers a `Versioned`
  (desk/cache.py), the version it depends on (desk/versions.py) with how to build it; the
  desk keeps the models its reads share (a valuation, the latest quotes, breadth, a book's
  track record) in its `cache`, where a transport keeps its renderings too (a REST body).
  So a kept read costs a version read and a dict lookup, in every transport alike.
- A write answers from inside its transaction: every write takes `respond`, the
  transport's rendering of its result, and runs it before the commit
  (store.transactions `answered`), so an answer that cannot be rendered rolls the write
  back and an error always means nothing was written (docs/api.md, "A write's answer").
- Reads that run on a request's own connection take it as their first argument, so a
  transport keeps its connection discipline (one per request, api/services.py); writes
  open their own locked transaction (portfolio/ledger.py).
- Opening a portfolio is one method (`open_portfolio`), on the caller's connection where
  it holds one; portfolios are never closed, so the desk remembers the ones it has seen.
- Uploads are read in two steps (`read_statement` / `read_note`, which touch no
  database, then `sync_statement` / `file_note`) so a transport can read a PDF without
  holding a database slot.
- Track records are read models kept by the desk (`records`, views/book_record.py): one
  per process, shared by REST, GraphQL and the CLI; a read brings a book's up to date
  with the rows stored since its last state.
- Keys are the desk's too (desk/keys.py): issuing, listing, revoking, rotating and tuning
  them, and a key's record for a request; authenticating the request (the header, the
  admin key, the rate limit) is the API's (api/security.py). The CLI's admin key is
  printed by `marketintel keys new-admin` and stored nowhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, Table

from desk import keys
from desk.cache import ReadCache
from desk.clock import ReplayClock
from desk.market_reads import MarketReads
from desk.portfolio_reads import PortfolioReads
from ingest.importers.files import CapitalOptions, ImportReport, import_path
from ingest.pdf_text import read_pdf_file
from market.clock import TradingCalendar, default_calendar, utc_now
from market.errors import InvalidInputError, SchemaNotReadyError
from market.settings import Settings
from portfolio import ledger, suggestions
from portfolio.accounts import Account, Opened, open_account, open_on, open_with_deposit
from portfolio.ai import ExecutedDay, execute_day
from portfolio.market import market_days
from portfolio.statements import StatementRead, StatementResult, file_statement, import_statement, read_statement
from portfolio.suggestions import MorningSuggestions, Suggestion
from portfolio.trading import ManualTrade, PlacedTrade, TradePreview, move_cash, place_manual_trade, previewed_for
from portfolio.trading import preview_trade as preview
from reports import Report, generate, generate_apart, save
from store import tables
from store.engine import EventLoopReader, ServerReader, event_loop_reader, server_reader, service_engine
from store.history import current_rows
from store.migrations import current_store, require_current_schema
from store.transactions import Respond, write_transaction
from views.bars import refresh_bars
from views.book_record import TrackRecords

if TYPE_CHECKING:  # the research notes' module is imported by the methods that read or file one
    from analysis.research import NoteText


def keep_books(conn: Connection, symbols: list[str], before_id: int) -> None:
    """The check an import (`Desk.import_files`) and T0 (`pipeline.t0`) store their splits
    under (`ingest.books.BooksCheck`): refuse splits that leave a client's ledger
    unreplayable (`ledger.books_broken_by_splits`) on one line naming the portfolios, the
    symbols and the trades. Stored, such a split made the client's summary a 422 "ledger
    of ... sells 60 LIQ holding 10" for good, the client blamed for a late notice; the
    store keeps every action it is given, so it is never stored. Each affected portfolio's
    write lock is taken before its book is read and held to the caller's commit
    (`ledger.lock_portfolio`, inside `books_broken_by_splits`), so a sale on the old count
    cannot commit between the check and the split's commit. A book broken because the
    import re-dates a stored split (`ledger.BrokenBook.moved`) is said so: the client
    traded on the count the store held then, and the trades stand."""
    broken = ledger.books_broken_by_splits(conn, symbols, before_id)
    late = [b.line() for b in broken if b.moved is None]
    moved = [b.line() for b in broken if b.moved is not None]
    said = []
    if late:
        said.append(
            f"the splits of {', '.join(symbols)} to be stored come after trades on the old count: "
            + "; ".join(late)
            + " (the book would no longer replay; check the ex-date, or record the client's trades on the new count "
            "first)"
        )
    if moved:
        said.append(
            f"the splits of {', '.join(symbols)} to be stored re-date a split clients traded on: "
            + "; ".join(moved)
            + " (the book would no longer replay; the trades stand as recorded: to leave the split where it is "
            "stored, import the files without its row in the actions file)"
        )
    if said:
        raise InvalidInputError("; ".join(said))


@dataclass(frozen=True)
class ReportOrder:
    """A PDF report to build in a process of its own (the API's worker processes,
    api/services.py `Services.apart`): what it needs travels by pickle, and it builds on an
    engine of its own, closed after (reports `generate_apart`)."""

    kind: str
    settings: Settings
    calendar: TradingCalendar
    now: datetime

    def __call__(self) -> Report:
        return generate_apart(self.kind, self.settings, self.calendar, self.now)


@dataclass(frozen=True)
class Desk(PortfolioReads, MarketReads):
    """One per process (the API's `Services.desk`, the CLI's, a stage's `StageContext`):
    every use case of the service with the engine, settings, calendar and clock bound
    once, and what the process keeps of the store's reads (`cache`, `records`, the open
    portfolios and the keys seen)."""

    engine: Engine
    settings: Settings
    calendar: TradingCalendar = field(default_factory=default_calendar)
    now: Callable[[], datetime] = utc_now
    records: TrackRecords = field(default_factory=TrackRecords, compare=False, repr=False)
    cache: ReadCache = field(default_factory=ReadCache, compare=False, repr=False)
    opened: set[str] = field(default_factory=set, compare=False, repr=False)  # portfolios known to exist
    known_keys: keys.KeyCache = field(default_factory=keys.KeyCache, compare=False, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, now: Callable[[], datetime] | None = None) -> Desk:
        """The desk of a process that has only its settings (the CLI, a stage kernel), on a
        store whose schema is current: else SchemaNotReadyError naming the fix
        (store/migrations.py `current_store`)."""
        return cls(current_store(settings), settings, default_calendar(), now or utc_now)

    @classmethod
    def serving(cls, settings: Settings, now: Callable[[], datetime] | None = None) -> Desk:
        """The desk of a serving process: on a replayed market (`replay_path`) its clock is
        the replay's (desk/clock.py) unless `now` pins one. The key pepper is checked now
        (`check_serving`)."""
        engine, calendar = service_engine(settings), default_calendar()
        if now is None and settings.replay_path is not None:
            now = ReplayClock(engine, calendar)
        desk = cls(engine, settings, calendar, now or utc_now)
        desk.check_serving()
        return desk

    def check_serving(self) -> None:
        """ConfigurationError naming the fix when this process's key pepper cannot serve:
        damaged (read, made once if missing: every client key's request was a 500), or not
        the one the store's working keys were issued under (`keys.check_pepper`: every one
        was a 401). A store whose schema is not current is not read: the API starts
        degraded (/healthz) and `marketintel db upgrade` comes first."""
        keys.pepper(self.settings)
        if self.schema_current():
            keys.check_pepper(self.engine, self.settings, self.now())

    def event_loop_reader(self) -> EventLoopReader | None:
        """The engine's one connection for short reads on an event loop, on a SQLite file
        (store/engine.py `EventLoopReader`); None on a database server."""
        return event_loop_reader(self.engine)

    def server_reader(self) -> ServerReader | None:
        """The engine's connections for short reads awaited on an event loop, on a database
        server (store/engine.py `ServerReader`); None on SQLite."""
        return server_reader(self.engine)

    def schema_current(self) -> bool:
        """Whether every migration in sql/ is applied and unedited (else `marketintel db upgrade`)."""
        try:
            require_current_schema(self.engine)
        except SchemaNotReadyError:
            return False
        return True

    # ---- portfolios: open, trade, cash ---------------------------------------------------------

    def open_portfolio(self, account: Account, conn: Connection | None = None) -> str:
        """The account's portfolio (a client's, or the house portfolio), opened on first use;
        its id. On `conn` when the transport holds one (an API request's one connection: a
        read while the portfolio exists, none once this desk has seen it), else in a
        transaction of its own (for a caller about to write in its own anyway)."""
        if conn is not None:
            return open_on(conn, account, self.opened)
        return open_account(self.engine, account)

    def open_with_deposit(self, account: Account, deposit: Decimal | None, note: str) -> Opened:
        """The account's portfolio opened, with `deposit` as its opening cash only when this
        call creates it (portfolio/accounts.py `open_with_deposit`): reopening deposits nothing."""
        return open_with_deposit(self.engine, account, deposit, note, self.now())

    def place_trade(
        self, portfolio_id: str, order: ManualTrade, idempotency_key: str | None = None, respond: Respond = None
    ) -> PlacedTrade:
        """A manual trade checked against the listing, the price band, holdings and cash; a
        retried idempotency key returns the first result."""
        return place_manual_trade(
            self.engine, self.settings, self.calendar, portfolio_id, order, idempotency_key, self.now(), respond
        )

    def preview_trade(
        self, conn: Connection, side: str, symbol: str, quantity: int, portfolio_id: str | None = None
    ) -> TradePreview:
        """What the cost model says the order would cost in a session like the latest and, with
        `portfolio_id`, whether that portfolio's booking of it would be accepted now; stores nothing."""
        moment = self.now()
        shown = preview(conn, self.settings, self.calendar, side, symbol, quantity, moment)
        return (
            shown
            if portfolio_id is None
            else previewed_for(conn, self.settings, self.calendar, portfolio_id, shown, moment)
        )

    def move_cash(
        self,
        portfolio_id: str,
        amount: Decimal | str | int,
        note: str | None = None,
        respond: Respond = None,
        idempotency_key: str | None = None,
    ) -> Decimal:
        """A deposit (amount > 0) or withdrawal (amount < 0); the new balance; a retried
        idempotency key returns the first movement's balance and books nothing."""
        return move_cash(self.engine, portfolio_id, amount, note, self.now(), respond, idempotency_key)

    def deposit_once(self, portfolio_id: str, entry_id: str, amount: Decimal, note: str) -> Decimal:
        """A deposit recorded once under `entry_id` (an opening balance: a second call records
        nothing); the balance after it."""
        with ledger.portfolio_transaction(self.engine, portfolio_id) as conn:
            c = tables.cash_entries.c
            where = [c.portfolio_id == portfolio_id, c.entry_id == entry_id]
            if not current_rows(conn, tables.cash_entries, where=where):
                ledger.record_cash(conn, portfolio_id, entry_id, amount, "DEPOSIT", self.now(), note)
            return ledger.cash_balance(conn, portfolio_id)

    # ---- morning suggestions ---------------------------------------------------------------------

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
    ) -> StatementResult:
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
    ) -> StatementResult:
        """`read_statement` then `sync_statement`; a file synchronised before is not read again."""
        return import_statement(
            self.engine, self.settings, portfolio_id, data, filename, self.now(), preview, confirm, respond
        )

    def import_statement_file(
        self, portfolio_id: str, path: Path, preview: bool = False, confirm: str | None = None
    ) -> StatementResult:
        """`import_statement` of a file, read no further than the PDF size limit
        (ingest.pdf_text `read_pdf_file`): a file over it is refused before anything is read
        or stored, as an upload over it is (413)."""
        data = read_pdf_file(path, self.settings.pdf_max_bytes)
        return self.import_statement(portfolio_id, data, path.name, preview, confirm)

    def read_note(self, data: bytes, filename: str | None, media_type: str | None) -> NoteText:
        """A research note's text (a PDF through the sandbox, text checked); touches no database."""
        from analysis.research import read_note  # research notes' readers: only a note's upload reads them

        return read_note(self.settings, data, filename, media_type)

    def file_note(self, note: NoteText, client_id: str | None, respond: Respond = None) -> dict[str, Any]:
        """A read note tagged, scored and stored once per client and content; its summary."""
        from analysis.research import file_note

        return file_note(self.engine, self.settings, note, client_id, respond)

    def sample_statement(self, day: date) -> bytes:
        """A broker's valuation statement (PDF) over `day`'s most traded instruments: what the
        demo synchronises the house portfolio from."""
        from portfolio.statement_pdfs import sample_holdings_statement  # reportlab: only the demo draws one

        with self.engine.connect() as conn:
            return sample_holdings_statement(market_days(conn, day), day)

    # ---- the operator's ---------------------------------------------------------------------------

    def import_files(
        self, path: Path, fmt: str = "auto", *, currency: str | None = None, capital: CapitalOptions | None = None
    ) -> ImportReport:
        """`marketintel import`: the files into the store (`ingest.importers.import_path`),
        refused, nothing written, where a split it would store leaves a client's ledger
        unreplayable (`keep_books`)."""
        capital = capital if capital is not None else CapitalOptions()
        return import_path(self.engine, path, fmt, currency=currency, capital=capital, keep_books=keep_books)

    def refresh_bars(self, every: bool = False) -> int:
        """The stored daily bars and indicators brought up to date with the stored prices
        (views/bars.py; `every`: every symbol's compared from its first bar), in their read
        model's own transaction; the bars rebuilt."""
        with write_transaction(self.engine, "read-model:daily_bars") as conn:
            return refresh_bars(conn, every)

    def deliver_notifications(self, day: date | None = None) -> dict[str, Any]:
        """Every stored notification (of `day`, or all: what T1's stages and `notify deliver`
        send, so a notification an outage left undelivered goes with the next pass) not yet
        delivered, sent to the webhook."""
        from analysis.notify import deliver_pending  # httpx: only the operator's delivery sends

        return deliver_pending(self.engine, self.settings, day)

    # ---- keys ---------------------------------------------------------------------------------------

    def issue_key(self, client_name: str, tier: str, respond: Respond = None) -> dict[str, Any]:
        """A new key for `client_name` (a new client, with its portfolio, the first time); the
        secret is in the answer only."""
        return keys.generate(self.engine, self.settings, client_name, tier, self.now(), respond)

    def client(self, client_name: str, tier: str) -> str:
        """The client id of `client_name` (created with `tier` if new, no key issued) with its
        portfolio opened."""
        client_id = keys.ensure_client(self.engine, client_name, tier, self.now())
        self.open_portfolio(Account.of_client(client_id))
        return client_id

    def list_keys(self) -> list[dict[str, Any]]:
        """Every key with its client, tier, limits and status; never a secret or a hash."""
        return keys.list_keys(self.engine, self.now())

    def revoke_key(self, key_id: str, respond: Respond = None) -> dict[str, Any]:
        """Stop the key from the next request on."""
        return keys.revoke(self.engine, key_id, self.now(), respond)

    def rotate_key(self, key_id: str, grace_seconds: int = 0, respond: Respond = None) -> dict[str, Any]:
        """A new key for the same client, tier and limits; the old one stops now or after the grace period."""
        return keys.rotate(self.engine, self.settings, key_id, grace_seconds, self.now(), respond)

    def set_key_option(self, key_id: str, event: str, value: Any, respond: Respond = None) -> dict[str, Any]:
        """RATE_LIMIT_SET, MACRO_ACCESS_SET or TIER_SET on the key, from now."""
        return keys.set_option(self.engine, key_id, event, value, self.now(), respond)

    def key_record(self, conn: Connection, presented: str) -> keys.KeyRecord | None:
        """The record of a well-formed, known, usable client key, its rows kept by the keys'
        version (read on `conn` on every call); None otherwise."""
        return keys.authenticate(conn, self.settings, presented, self.now(), self.known_keys)

    def remembered_key(self, presented: str) -> tuple[tuple, keys.KeyRecord] | None:
        """A key this desk has read before, from memory alone: the keys' version its rows were
        read at and its record now; None when it is not kept or its kept rows refuse it (the
        version is for the caller to confirm: `keys.KeyCheck`)."""
        kept = self.known_keys.kept(keys.key_hash(self.settings, presented))
        record = kept[1].at(self.now()) if kept is not None else None
        return None if kept is None or record is None else (kept[0], record)

    # ---- reports --------------------------------------------------------------------------------------

    def report(self, kind: str) -> Report:
        """PDF report `kind` ('quant-briefing' or 'compliance') from the store as it is now."""
        return generate(kind, self.engine, self.settings, self.calendar, self.now())

    def on_market_clock(self) -> Desk:
        """This desk on a replayed market's own clock (desk/clock.py), as a serving process
        reads it (`serving`), so a report made from the CLI or the demo is dated, and judged
        current or stale (reports.inputs `staleness`), as the API's is; itself elsewhere."""
        if self.settings.replay_path is None:
            return self
        return replace(self, now=ReplayClock(self.engine, self.calendar))

    def report_order(self, kind: str) -> ReportOrder:
        """`report`, to be built in a process of its own (`ReportOrder`)."""
        return ReportOrder(kind, self.settings, self.calendar, self.now())

    def save_report(self, report: Report, path: Path) -> Path:
        """The report's PDF written whole or not at all; where."""
        return save(report, path)

    # ---- the day's stages -------------------------------------------------------------------------

    def morning_suggestions(self, day: date, record: Table | None = None) -> MorningSuggestions:
        """T2 for `day`: every client and house portfolio's plan from the latest day scored
        before it in `record` (None: the live predictions where they have such a day, else
        the validation record: `suggestions.record_before`), as pending suggestions (expiry
        judged at T2's own moment, never the wall clock)."""
        return suggestions.generate(self.engine, self.settings, day, record=record)

    def ai_day(self, day: date, record: Table = tables.predictions) -> ExecutedDay:
        """T1 step 6: the AI book's plan for `day` under the rails, filled in the next
        session (`record`: the live predictions, or the validation record on a replay)."""
        return execute_day(self.engine, self.settings, day, record=record)
