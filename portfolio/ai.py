"""The autonomous AI portfolio (T1 step 6) and what the API and reports read of it.

`execute_day` runs the book (portfolio/book.py) for one trading date in one transaction: it opens the
portfolio with `ai_starting_cash` on first use (its opening deposit: from then on what it
started with, `starting_cash`, whatever the setting says later), credits the dividends owed up to the
date (`portfolio.dividends`), fills the orders the previous executed day decided in this
session (the first an order decided after a close can reach: the ask or the bid, impact,
at most 25% of the session's volume, fees, market/costs.py; what the session cannot fill
lapses and is listed with the reason), records each fill as a trade dated this session
with its rationale and cost parts, then reads the date's predictions (from the latest
model that scored the date) and plans the next session's orders (`pending` in the day's
record), and appends the day's `portfolio_days` record (cash, market value, liquid
equity, what was filled, what lapsed, what was decided). A date already executed returns its stored
record and writes nothing; a date earlier than the latest executed one is refused, since
trades cannot be slotted into the past of a ledger that has moved on.

The day is three steps in that transaction: `read_day` reads what the day needs of the
store (`DayInputs`), `decide_day` decides without a connection (`DayDecision`: the
deposit, dividends, fills checked as `ledger.check_trade` checks a trade, the plan, the
valuation, the day's record) and `write_day` appends it. The decide step works out the
cash and holdings after the fills with the ledger's own check and balance
(`ledger.balance_after`), so its record is what the store reads back afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import Connection, Engine, Table, func, select

from market.clock import exchange_iso, session_close_utc, utc_now
from market.costs import CostBreakdown, FeeSchedule
from market.errors import ConflictError, NotReadyError
from market.instruments import is_ordinary
from market.money import Money, Price
from market.plain import JsonValue, to_plain
from market.settings import Settings
from models.reasons import served as served_reasons
from models.scoring import served_predictions
from portfolio import dividends, ledger
from portfolio.book import BookDay, Mandate, Outlook, plan_book
from portfolio.delisting import Absence, DelistedRecord, DelistingRule, book_view, stored_absences, stored_rule
from portfolio.dividends import DividendBook, DividendCredit
from portfolio.executor import DayPlan, Execution, Lapse, Order, Signal, Skip, fill_orders, split_adjusted
from portfolio.ledger import AI_PORTFOLIO, CheckedTrade, TradeRequest
from portfolio.market import known_persistence, reference_market
from portfolio.rails import MarketDay, Valuation
from portfolio.rows import CashEntry, CreditedDividend, LedgerRow, PortfolioDayRow, StoredPortfolioDay
from store import tables
from store.history import append_history, current_rows
from store.instruments import instrument_types
from store.splits import Split, stored_splits

OPENING_ENTRY = "AI:opening-cash"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DayFill:
    """A fill of the day, as the day's record lists it: the order filled (money as the fill
    priced it), its cost parts, the day that decided it and the limit that bound its size.
    Days filled at their own close, before the next-session fills, stored neither the parts
    nor the deciding day: None, and left out of the JSON as they were."""

    symbol: str
    side: str
    quantity: int
    price: Price
    fees: Money
    costs: CostBreakdown | None
    decided_on: str | None
    bound_by: str

    @classmethod
    def of(cls, order: Order, decided_on: str | None) -> DayFill:
        costs = order.costs
        return cls(order.symbol, order.side, order.quantity, order.price, order.fees, costs, decided_on, order.bound_by)

    def to_json(self) -> dict[str, JsonValue]:
        stored: dict[str, JsonValue] = {
            "symbol": self.symbol,
            "side": self.side,
            "quantity": self.quantity,
            "price": str(self.price),
            "fees": str(self.fees),
        }
        if self.costs is not None:  # a fill in the next session, through the cost model
            stored |= {"costs": dict(self.costs.as_text()), "decided_on": self.decided_on}
        return {**stored, "bound_by": self.bound_by}

    @classmethod
    def from_json(cls, stored: Mapping[str, JsonValue]) -> DayFill:
        text, decided_on = stored.get("costs"), stored.get("decided_on")
        costs = None
        if isinstance(text, dict):  # CostBreakdown.as_text: its parts and their total, as decimal text
            costs = CostBreakdown(**{part.name: Decimal(str(text[part.name])) for part in fields(CostBreakdown)})
        return cls(
            str(stored["symbol"]),
            str(stored["side"]),
            int(stored["quantity"]),
            Decimal(str(stored["price"])),
            Decimal(str(stored["fees"])),
            costs,
            None if decided_on is None else str(decided_on),
            str(stored["bound_by"]),
        )


@dataclass(frozen=True)
class ExecutedDay:
    """The AI portfolio's day, as `execute_day` returns it and as the day's `portfolio_days`
    record stores it (`summary()`, JSON; `from_summary` reads a stored one back). The one
    declaration that the stage (pipeline/portfolio_stages.py), the bootstrap's replay and
    the analysis (analysis/day_facts.py) read, instead of keys of a dict.

    Its lists are typed: `orders` the fills of this session (`DayFill`), `lapsed` what it
    could not fill (`Lapse`), `skipped` the candidates the plan left alone (`Skip`),
    `pending` the orders decided for the next session (`Order`, each with its rationale),
    `dividends` the dividends credited, `delisted` the positions delisted on the day. Their
    JSON is what the record has always stored: money as strings (`cash`, an order's `price`
    and `fees`), valuations as rounded floats."""

    trading_date: str
    model_id: str | None
    timestamp: str  # the session's close, exchange time
    orders: list[DayFill]
    skipped: list[Skip]
    would_trade: int
    blocked_by_rails: int
    cut_by_rails: int
    cash: Money  # decimal text, as the record has always stored it
    market_value: Money
    equity: Money
    liquid_equity: Money
    illiquid_discounts: dict[str, float]
    # Days executed before the record was named, fills were deferred or dividends were credited
    # stored none of these: read back as the live record and empty lists.
    record: str = "live"  # or "validation": the predictions the decisions read
    lapsed: list[Lapse] = field(default_factory=list)
    pending: list[Order] = field(default_factory=list)
    dividends: list[CreditedDividend] = field(default_factory=list)
    # The positions delisted on the day (portfolio/delisting.py `DelistedRecord`: last row,
    # delisted_on, value under the rule and under each reading); days executed before the
    # rule stored none.
    delisted: list[DelistedRecord] = field(default_factory=list)
    rerun: bool = False  # the day was already executed: its stored record, nothing written
    trades_recorded: int = 0  # trades written by this call
    # On a rerun: what of the day's inputs was recorded after the day was executed (a
    # corrected close or a rescored prediction: `superseded_inputs`), None when nothing was.
    superseded: str | None = None

    def summary(self) -> dict[str, JsonValue]:
        """What `portfolio_days.summary` stores (everything but the call's own facts), in the
        order of the fields."""
        stored: dict[str, JsonValue] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _READERS:
                stored[f.name] = [entry.to_json() for entry in value]
            elif f.name not in ("rerun", "trades_recorded", "superseded"):
                stored[f.name] = to_plain(value)
        return stored

    @classmethod
    def from_summary(
        cls, summary: Mapping[str, JsonValue], rerun: bool = False, superseded: str | None = None
    ) -> ExecutedDay:
        """A stored day, whichever code stored it (a key it lacks takes the field's default)."""
        known = {f.name for f in fields(cls)}
        plain = {k: v for k, v in summary.items() if k in known and k not in _READERS}
        typed = {k: [read(e) for e in summary[k]] for k, read in _READERS.items() if k in summary}
        return cls(**plain, **typed, rerun=rerun, superseded=superseded)


# The typed lists of a day: how `from_summary` reads each entry back (`summary` writes each
# with its `to_json`)
_READERS = {
    "orders": DayFill.from_json,
    "skipped": Skip.from_json,
    "lapsed": Lapse.from_json,
    "pending": Order.from_json,
    "delisted": DelistedRecord.from_json,
}


def fee_schedule(settings: Settings) -> FeeSchedule:
    return FeeSchedule.from_settings(settings)


def day_signals(
    conn: Connection, day: date, record: Table = tables.predictions
) -> tuple[str | None, dict[str, Signal]]:
    """The date's predictions from the model that scored it last, read from the live
    record (`predictions`) or the validation record (`validation_predictions`)."""
    c = record.c
    served = served_predictions(current_rows(conn, record, where=[c.trading_date == day])).get(day)
    if not served:
        return None, {}
    rows = list(served.values())
    types = instrument_types(conn)
    return rows[0]["model_id"], {
        r["symbol"]: Signal(
            r["symbol"],
            r["score"],
            r["action"],
            r["tercile"],
            r["weight"] or 0.0,
            r["predicted_return"] or 0.0,
            _number(r.get("held_edge")),
            _number(r.get("round_trip_cost")),
            r.get("decision_reason") or "",
            served_reasons(r.get("reasons")),
            is_ordinary(types[r["symbol"]]) if r["symbol"] in types else True,
        )
        for r in rows
        if r["score"] is not None
    }


def _number(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def pending_orders(conn: Connection, portfolio_id: str, day: date) -> tuple[str | None, list[Order]]:
    """The orders the last day executed before `day` decided for the next session."""
    c = tables.portfolio_days.c
    rows = current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == portfolio_id, c.trading_date < day])
    if not rows:
        return None, []
    last = max(rows, key=lambda r: r["trading_date"])
    return last["trading_date"].isoformat(), ExecutedDay.from_summary(last["summary"]).pending


def opening_deposit(conn: Connection) -> Decimal | None:
    """The AI portfolio's opening deposit (OPENING_ENTRY, written with its first executed
    day); None before it has opened."""
    opened = current_rows(conn, tables.cash_entries, where=[tables.cash_entries.c.entry_id == OPENING_ENTRY])
    return opened[0]["amount"] if opened else None


def starting_cash(conn: Connection, opens_with: float) -> Decimal:
    """What the AI portfolio started with, the base of its return and track record: the
    opening deposit its ledger holds once it has opened (whatever the setting says since),
    else `opens_with` (MARKETINTEL_AI_STARTING_CASH: what its first executed day deposits)."""
    deposit = opening_deposit(conn)
    return deposit if deposit is not None else Decimal(str(opens_with))


def days_executed(conn: Connection) -> int:
    """How many days the AI portfolio has executed (the book rebalances every
    `Mandate.rebalance_every` of them, `DayDecision`)."""
    c = tables.portfolio_days.c
    return conn.execute(select(func.count()).where(c.portfolio_id == AI_PORTFOLIO)).scalar() or 0


def record_name(record: Table) -> str:
    """`live` for the daily predictions, `validation` for the walk-forward record."""
    return "validation" if record is tables.validation_predictions else "live"


def executed_day(conn: Connection, portfolio_id: str, day: date) -> StoredPortfolioDay | None:
    c = tables.portfolio_days.c
    rows = current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == portfolio_id, c.trading_date == day])
    return rows[0] if rows else None


def execute_day(engine: Engine, settings: Settings, day: date, record: Table = tables.predictions) -> ExecutedDay:
    """T1 step 6 for `day` on the signals of `record`: the live predictions, or the
    validation record when bootstrapping replays the days before the first live one
    (each trade's rationale names which, under `record`). In the portfolio's one
    transaction: `read_day`, `decide_day` (no connection), `write_day`."""
    with ledger.portfolio_transaction(engine, AI_PORTFOLIO) as conn:
        done = executed_day(conn, AI_PORTFOLIO, day)
        if done is not None:
            superseded = superseded_inputs(conn, day, done["recorded_at"], record)
            if superseded is not None:
                log.warning("the AI portfolio's %s: %s", day.isoformat(), superseded)
            return ExecutedDay.from_summary(done["summary"], rerun=True, superseded=superseded)
        decision = decide_day(read_day(conn, settings, day, record), fee_schedule(settings), Mandate())
        write_day(conn, decision)
        return decision.executed


def superseded_inputs(conn: Connection, day: date, executed_at: datetime, record: Table) -> str | None:
    """What of `day`'s closes and predictions was recorded after the day was executed at
    `executed_at` (a corrected delivery, a rescored day), said in a sentence; None when
    nothing was. The executed day stands (its fills were booked at that day's prices and
    the ledger is append-only): the correction reaches the book from the next session,
    and the stage says so rather than rerunning in silence."""
    later = {}
    for table in (tables.eod_prices, record):
        c = table.c
        query = select(func.count()).where(c.trading_date == day, c.recorded_at > executed_at)
        later[table.name] = conn.execute(query).scalar() or 0
    if not any(later.values()):
        return None
    counted = ", ".join(f"{n} {name}" for name, n in later.items() if n)
    return (
        f"executed at {executed_at.isoformat()} on inputs corrected since ({counted} recorded after it); "
        "its fills stand, the correction reaches the book from the next session"
    )


@dataclass(frozen=True)
class DayInputs:
    """Everything the AI portfolio's day reads of the store (`read_day`), before it writes."""

    day: date
    record: str  # `record_name` of the predictions the decisions read
    model_id: str | None
    signals: dict[str, Signal]
    # the day's session per symbol (market_days), a close carried over an ex-date less its
    # dividend, which the day credits (portfolio/market.py `reference_market`)
    market: dict[str, MarketDay]
    trades: list[LedgerRow]  # the ledger's rows (ledger.ledger_rows)
    splits: list[Split]  # every stored split of the names traded or pending, any ex-date
    cash: Decimal  # the balance before the day (ledger.cash_balance)
    opening: Decimal | None  # the starting cash still to deposit; None once deposited
    dividends: DividendBook
    decided_on: str | None  # the day that decided `pending`
    pending: list[Order]
    days_executed: int
    now: datetime  # when the day runs: the date of a dividend correction
    # The signal's persistence known on the day (portfolio/market.py known_persistence): what
    # the book weighs a trade's hold with (portfolio/book.py Outlook); None before any.
    persistence: dict[str, float | None] | None = None
    # The delisting rule (portfolio/delisting.py) and, for each name the ledger has traded
    # without a row on the day, its last row and the sessions since (`stored_absences`).
    delisting: DelistingRule = DelistingRule()
    absences: dict[str, Absence] = field(default_factory=dict)


def read_day(conn: Connection, settings: Settings, day: date, record: Table) -> DayInputs:
    """The read step: refuses a day before the latest executed one (ConflictError) and a
    day without predictions (NotReadyError), then reads the day's signals, market,
    ledger, cash, dividends owed, pending orders and how many days were executed."""
    latest = ledger.latest_executed_day(conn, AI_PORTFOLIO)
    if latest is not None and latest > day:
        raise ConflictError(f"the AI portfolio has already executed {latest}; {day} cannot be executed after it")
    model_id, signals = day_signals(conn, day, record)
    if not signals:
        raise NotReadyError(
            f"no {record_name(record)} predictions for {day.isoformat()}: run t1_predict for that date first"
        )
    opened = opening_deposit(conn) is not None
    decided_on, pending = pending_orders(conn, AI_PORTFOLIO, day)
    trades = ledger.ledger_rows(conn, AI_PORTFOLIO)
    traded = {t["symbol"] for t in trades}
    delisting = stored_rule(conn, settings, day, traded)
    return DayInputs(
        day=day,
        record=record_name(record),
        model_id=model_id,
        signals=signals,
        market=reference_market(conn, day, day).sessions,
        trades=trades,
        splits=stored_splits(conn, None, {t["symbol"] for t in trades} | {o.symbol for o in pending}),
        cash=ledger.cash_balance(conn, AI_PORTFOLIO),
        opening=None if opened else Decimal(str(settings.ai_starting_cash)),
        dividends=dividends.dividend_book(conn, AI_PORTFOLIO, day),
        decided_on=decided_on,
        pending=pending,
        days_executed=days_executed(conn),
        now=utc_now(),
        persistence=known_persistence(conn, day),
        delisting=delisting,
        absences=stored_absences(conn, day, traded, delisting),
    )


@dataclass(frozen=True)
class DayDecision:
    """What the day writes (`write_day`): the opening deposit on first use, the dividends
    credited, the fills as checked trades, and the day itself (`executed`, also the
    `portfolio_days` row)."""

    opening: CashEntry | None
    credited: list[DividendCredit]
    trades: list[CheckedTrade]
    executed: ExecutedDay
    day_row: PortfolioDayRow


def decide_day(inputs: DayInputs, fees: FeeSchedule, mandate: Mandate) -> DayDecision:
    """The decide step, touching no store: the opening cash on first use, the dividends
    owed up to the day, the fills of the pending orders in this session (checked as
    `ledger.record_trade` checks them, each against the ledger with the ones before it),
    then the next session's plan on the cash and holdings they leave, and the day's
    valuation. The book rebalances on its first executed day and every
    `rebalance_every` executed days after it (the model's retrain cadence)."""
    close = session_close_utc(inputs.day)
    opening = _opening(inputs, close)
    cash = ledger.balance_after(inputs.cash, [opening] if opening else [])
    credited = dividends.dividends_due(inputs.dividends, AI_PORTFOLIO, cash, inputs.now)
    cash = ledger.balance_after(cash, [c.entry() for c in credited])
    pending = split_adjusted(inputs.pending, inputs.splits, inputs.decided_on, inputs.day)
    run = fill_orders(pending, inputs.market, cash, fees, True, inputs.decided_on)
    checked, trades = [], list(inputs.trades)
    for order in run.filled:
        checked.append(ledger.check_trade(_fill_request(inputs.day, close, order), trades, inputs.splits, cash))
        trades.append(checked[-1].replayed)
        cash = ledger.balance_after(cash, checked[-1].entries)
    held = {s: p.quantity for s, p in ledger.open_positions(trades, inputs.splits, inputs.day).items()}
    view = book_view(held, inputs.absences, inputs.delisting, inputs.day)  # the delisted are not the book's names
    rebalance = inputs.days_executed % mandate.rebalance_every == 0
    outlook = Outlook.of(inputs.persistence, mandate.hold)
    market = view.with_carried(inputs.market)
    plan = plan_book(BookDay(cash, view.names, inputs.signals, market, fees), mandate, rebalance, True, outlook)
    valuation = view.valuation(float(cash), inputs.market)
    executed = replace(
        _executed(inputs, run, plan, credited, cash, valuation, len(checked)),
        delisted=[d.record() for d in view.delisted],
    )
    day_row: PortfolioDayRow = {
        "portfolio_id": AI_PORTFOLIO,
        "trading_date": inputs.day,
        "model_id": inputs.model_id,
        "cash": cash,
        "market_value": Decimal(str(round(valuation.market_value, 6))),
        "liquid_equity": Decimal(str(round(valuation.liquid_equity, 6))),
        "summary": executed.summary(),
    }
    return DayDecision(opening, credited, checked, executed, day_row)


def _opening(inputs: DayInputs, close: datetime) -> CashEntry | None:
    """The deposit of the starting cash on the portfolio's first day, at its close."""
    if inputs.opening is None:
        return None
    note = "opening cash of the AI portfolio"
    return ledger.cash_entry(AI_PORTFOLIO, OPENING_ENTRY, inputs.opening, "DEPOSIT", close, note, inputs.cash)


def _fill_request(day: date, close: datetime, order: Order) -> TradeRequest:
    """A fill of this session as the trade it records, dated the session, at its close."""
    return TradeRequest(
        portfolio_id=AI_PORTFOLIO,
        trading_date=day,
        executed_at=close,
        symbol=order.symbol,
        side=order.side,
        quantity=order.quantity,
        price=order.price,
        fees=order.fees,
        origin="AI",
        rationale={**order.rationale, "timestamp": exchange_iso(close)},
        trade_id=f"AI-{day.isoformat()}-{order.symbol}-{order.side}",
        costs=order.costs,
    )


def _executed(
    inputs: DayInputs,
    run: Execution,
    plan: DayPlan,
    credited: list[DividendCredit],
    cash: Decimal,
    valuation: Valuation,
    trades_recorded: int,
) -> ExecutedDay:
    """The day's record: fills, lapses, the next session's orders (each noting when, by
    which model and on which record it was decided), the plan's tallies, the cash and
    the valuation rounded to cents."""
    stamp = exchange_iso(session_close_utc(inputs.day))
    decided = {"decided_at": stamp, "model_id": inputs.model_id, "record": inputs.record}
    return ExecutedDay(
        trading_date=inputs.day.isoformat(),
        model_id=inputs.model_id,
        record=inputs.record,
        timestamp=stamp,
        orders=[DayFill.of(o, inputs.decided_on) for o in run.filled],
        lapsed=run.lapsed,
        pending=[replace(o, rationale={**o.rationale, **decided}) for o in plan.orders],
        skipped=plan.skipped,
        would_trade=plan.would_trade,
        blocked_by_rails=plan.blocked_by_rails,
        cut_by_rails=plan.cut_by_rails,
        dividends=[c.report() for c in credited],
        cash=str(cash),
        market_value=round(valuation.market_value, 2),
        equity=round(valuation.equity, 2),
        liquid_equity=round(valuation.liquid_equity, 2),
        illiquid_discounts={k: round(v, 2) for k, v in valuation.discounts.items()},
        trades_recorded=trades_recorded,
    )


def write_day(conn: Connection, decision: DayDecision) -> None:
    """The write step: the portfolio, its opening deposit, the dividends, each trade with
    its cash entries (in the order they filled) and the day's `portfolio_days` record."""
    ledger.ensure_portfolio(conn, AI_PORTFOLIO, "AI")
    if decision.opening is not None:
        append_history(conn, tables.cash_entries, [decision.opening])
    if decision.credited:
        append_history(conn, tables.cash_entries, [c.entry() for c in decision.credited])
    for checked in decision.trades:
        ledger.append_trade(conn, checked)
    append_history(conn, tables.portfolio_days, [decision.day_row])
