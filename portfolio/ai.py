"""The autonomous AI portfolio (T1 step 6) and what the API and reports read of it.

`execute_day` runs the book (portfolio/book.py) for one trading date in one transaction: it opens the
portfolio with `ai_starting_cash` on first use, credits the dividends owed up to the
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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import date
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, Table, func, select

from market.clock import exchange_iso, session_close_utc
from market.costs import FeeSchedule
from market.errors import ConflictError, NotReadyError
from market.instruments import is_ordinary
from market.settings import Settings
from models.reasons import served as served_reasons
from models.scoring import served_predictions
from portfolio import dividends, ledger
from portfolio.book import Mandate, plan_book
from portfolio.executor import Order, Signal, fill_orders
from portfolio.ledger import AI_PORTFOLIO, TradeRequest
from portfolio.market import market_days
from portfolio.rails import value_positions
from store import tables
from store.history import append_history, current_rows
from store.instruments import instrument_types

OPENING_ENTRY = "AI:opening-cash"


@dataclass(frozen=True)
class ExecutedDay:
    """The AI portfolio's day, as `execute_day` returns it and as the day's `portfolio_days`
    record stores it (`summary()`, JSON; `from_summary` reads a stored one back). The one
    declaration that the stage (pipeline/portfolio_stages.py), the bootstrap's replay and
    the analysis (analysis/day_facts.py) read, instead of keys of a dict.

    Money leaves as strings (`cash`, each order's `price` and `fees`) or rounded floats
    (valuations), as stored. `orders` are the fills of this session, `lapsed` what it could
    not fill, `pending` the orders decided for the next session (each with its rationale)."""

    trading_date: str
    model_id: str | None
    timestamp: str  # the session's close, exchange time
    orders: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    would_trade: int
    blocked_by_rails: int
    cut_by_rails: int
    cash: str
    market_value: float
    equity: float
    liquid_equity: float
    illiquid_discounts: dict[str, float]
    # Days executed before the record was named, fills were deferred or dividends were credited
    # stored none of these: read back as the live record and empty lists.
    record: str = "live"  # or "validation": the predictions the decisions read
    lapsed: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    dividends: list[dict[str, Any]] = field(default_factory=list)
    rerun: bool = False  # the day was already executed: its stored record, nothing written
    trades_recorded: int = 0  # trades written by this call

    def summary(self) -> dict[str, Any]:
        """What `portfolio_days.summary` stores (everything but the call's own facts)."""
        stored = asdict(self)
        del stored["rerun"], stored["trades_recorded"]
        return stored

    @classmethod
    def from_summary(cls, summary: dict[str, Any], rerun: bool = False) -> ExecutedDay:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in summary.items() if k in known}, rerun=rerun)


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


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def pending_orders(conn: Connection, portfolio_id: str, day: date) -> tuple[str | None, list[Order]]:
    """The orders the last day executed before `day` decided for the next session."""
    c = tables.portfolio_days.c
    rows = current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == portfolio_id, c.trading_date < day])
    if not rows:
        return None, []
    last = max(rows, key=lambda r: r["trading_date"])
    return last["trading_date"].isoformat(), [
        Order(o["symbol"], o["side"], int(o["quantity"]), Decimal(o["price"]), Decimal(o["fees"]), o["rationale"])
        for o in ExecutedDay.from_summary(last["summary"]).pending
    ]


def order_dict(order: Order) -> dict[str, Any]:
    return {
        "symbol": order.symbol,
        "side": order.side,
        "quantity": order.quantity,
        "price": str(order.price),
        "fees": str(order.fees),
        "rationale": order.rationale,
    }


def rebalance_due(conn: Connection, mandate: Mandate) -> bool:
    """The book rebalances on its first executed day and every `rebalance_every` executed
    days after it (the model's retrain cadence)."""
    c = tables.portfolio_days.c
    executed = conn.execute(select(func.count()).where(c.portfolio_id == AI_PORTFOLIO)).scalar() or 0
    return executed % mandate.rebalance_every == 0


def record_name(record: Table) -> str:
    """`live` for the daily predictions, `validation` for the walk-forward record."""
    return "validation" if record is tables.validation_predictions else "live"


def executed_day(conn: Connection, portfolio_id: str, day: date) -> dict[str, Any] | None:
    c = tables.portfolio_days.c
    rows = current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == portfolio_id, c.trading_date == day])
    return rows[0] if rows else None


def execute_day(engine: Engine, settings: Settings, day: date, record: Table = tables.predictions) -> ExecutedDay:
    """T1 step 6 for `day` on the signals of `record`: the live predictions, or the
    validation record when bootstrapping replays the days before the first live one
    (each trade's rationale names which, under `record`)."""
    with ledger.portfolio_transaction(engine, AI_PORTFOLIO) as conn:
        done = executed_day(conn, AI_PORTFOLIO, day)
        if done is not None:
            return ExecutedDay.from_summary(done["summary"], rerun=True)
        c = tables.portfolio_days.c
        latest = conn.execute(select(func.max(c.trading_date)).where(c.portfolio_id == AI_PORTFOLIO)).scalar()
        if latest is not None and latest > day:
            raise ConflictError(f"the AI portfolio has already executed {latest}; {day} cannot be executed after it")
        model_id, signals = day_signals(conn, day, record)
        if not signals:
            raise NotReadyError(
                f"no {record_name(record)} predictions for {day.isoformat()}: run t1_predict for that date first"
            )
        ledger.ensure_portfolio(conn, AI_PORTFOLIO, "AI")
        close = session_close_utc(day)
        if not current_rows(conn, tables.cash_entries, where=[tables.cash_entries.c.entry_id == OPENING_ENTRY]):
            ledger.record_cash(
                conn,
                AI_PORTFOLIO,
                OPENING_ENTRY,
                Decimal(str(settings.ai_starting_cash)),
                "DEPOSIT",
                close,
                "opening cash of the AI portfolio",
            )
        credited = dividends.credit_dividends(conn, AI_PORTFOLIO, day)
        market = market_days(conn, day)
        fees = fee_schedule(settings)
        stamp = exchange_iso(close)
        decided_on, pending = pending_orders(conn, AI_PORTFOLIO, day)
        run = fill_orders(pending, market, ledger.cash_balance(conn, AI_PORTFOLIO), fees, True, decided_on)
        trades = []
        for order in run.filled:
            trades.append(
                ledger.record_trade(
                    conn,
                    TradeRequest(
                        portfolio_id=AI_PORTFOLIO,
                        trading_date=day,
                        executed_at=close,
                        symbol=order.symbol,
                        side=order.side,
                        quantity=order.quantity,
                        price=order.price,
                        fees=order.fees,
                        origin="AI",
                        rationale={**order.rationale, "timestamp": stamp},
                        trade_id=f"AI-{day.isoformat()}-{order.symbol}-{order.side}",
                        costs=order.costs,
                    ),
                )
            )
        held = {s: p.quantity for s, p in ledger.holdings(conn, AI_PORTFOLIO, day).items()}
        mandate = Mandate()
        plan = plan_book(
            ledger.cash_balance(conn, AI_PORTFOLIO), held, signals, market, fees, mandate, rebalance_due(conn, mandate)
        )
        decided = [
            Order(
                o.symbol,
                o.side,
                o.quantity,
                o.price,
                o.fees,
                {**o.rationale, "decided_at": stamp, "model_id": model_id, "record": record_name(record)},
            )
            for o in plan.orders
        ]
        cash = ledger.cash_balance(conn, AI_PORTFOLIO)
        after = {s: p.quantity for s, p in ledger.holdings(conn, AI_PORTFOLIO, day).items()}
        valuation = value_positions(float(cash), after, market)
        executed = ExecutedDay(
            trading_date=day.isoformat(),
            model_id=model_id,
            record=record_name(record),
            timestamp=stamp,
            orders=[
                {
                    "symbol": o.symbol,
                    "side": o.side,
                    "quantity": o.quantity,
                    "price": str(o.price),
                    "fees": str(o.fees),
                    "costs": o.costs.as_text(),
                    "decided_on": decided_on,
                    "bound_by": o.rationale["limits"]["bound_by"],
                }
                for o in run.filled
            ],
            lapsed=run.lapsed,
            pending=[order_dict(o) for o in decided],
            skipped=plan.skipped,
            would_trade=plan.would_trade,
            blocked_by_rails=plan.blocked_by_rails,
            cut_by_rails=plan.cut_by_rails,
            dividends=credited,
            cash=str(cash),
            market_value=round(valuation.market_value, 2),
            equity=round(valuation.equity, 2),
            liquid_equity=round(valuation.liquid_equity, 2),
            illiquid_discounts={k: round(v, 2) for k, v in valuation.discounts.items()},
            trades_recorded=len(trades),
        )
        append_history(
            conn,
            tables.portfolio_days,
            [
                {
                    "portfolio_id": AI_PORTFOLIO,
                    "trading_date": day,
                    "model_id": model_id,
                    "cash": cash,
                    "market_value": Decimal(str(round(valuation.market_value, 6))),
                    "liquid_equity": Decimal(str(round(valuation.liquid_equity, 6))),
                    "summary": executed.summary(),
                }
            ],
        )
        return executed
