"""The AI portfolio's track record beside the equal-weighted liquid universe, read from the
store (portfolio/track_record.py computes; this view gathers).

The equity curve is the AI portfolio's `portfolio_days` (cash plus positions at each
close, dividends included), its first day measured against the opening cash; `records`
splits the days replayed on the validation record from the live ones; costs are
the parts each fill stored as the trade's columns (fees, spread_cost, impact_cost), summed
as exact money, and turnover the value its trades moved.
The benchmarks, over the same days: the equal-weighted liquid universe, from the stored
closes, volumes and quotes (ADV_20 over each name's last 20 stored bars), and the
market's index: the index levels the exchange published (`index_levels`, stored by T0
and the file importer; `MARKETINTEL_BENCHMARK_INDEX` names which where there are several,
else `portfolio.track_record.benchmark_index` chooses), else the service's
capitalisation-weighted index (the day's change as views/breadth.py defines it, from the
stored closes and the shares outstanding the fundamentals reported), absent while neither
exists. `index_source` says which: the index's symbol, or `cap_weighted`.

Beside the benchmarks every record says what the book held (portfolio/track_record.py):
`average_exposure` (mean of market value / equity over the days), `fill_count` (fills in
the span: the AI portfolio's trades; a client's trades but the shares a statement sync
booked, which no order filled), `mostly_cash` and its `note`. A record without statistics
says why in `reason` (no executed day, no trade or cash movement, too few market days).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pandas as pd
from sqlalchemy import Connection, select

from market.clock import exchange_date
from market.costs import CostBreakdown
from market.settings import get_settings
from portfolio import ledger
from portfolio.track_record import (
    RECORDS,
    TrackRecord,
    benchmark_index,
    cap_weighted_index,
    daily_returns,
    equal_weight_liquid,
    index_returns,
    statistics,
)
from store import tables
from store.history import current_rows
from store.splits import stored_splits
from views.portfolio import equity_curve

NO_AI_DAYS = "the AI portfolio has no executed day yet"
ONE_AI_DAY = "one executed day: the statistics need at least two"
NO_CLIENT_HISTORY = "no trades or cash movements yet"


def _ai_returns(conn: Connection, starting_cash: float) -> tuple[list, pd.Series, list[dict[str, Any]]]:
    curve = equity_curve(conn)
    dates = [row["trading_date"] for row in curve]
    equity = pd.Series([float(starting_cash), *(row["equity"] for row in curve)], index=range(len(curve) + 1))
    returns = daily_returns(equity)
    returns.index = dates
    return dates, returns, curve


def ai_track_series(conn: Connection, starting_cash: float) -> dict[str, Any]:
    """What the Quant Briefing draws: the book's cumulative return by executed day beside
    each benchmark's, its drawdown from the running peak, and its return per calendar
    month (compounded from the daily returns)."""
    dates, returns, _ = _ai_returns(conn, starting_cash)
    if len(dates) < 2:
        return {"days": [], "book": [], "benchmarks": {}, "drawdown": [], "monthly": []}
    growth = (1 + returns).cumprod()
    series_by_name, index_source = _benchmarks(conn, dates)
    benchmarks = {
        name: ((1 + series.reindex(dates).fillna(0.0)).cumprod() - 1).round(6).tolist()
        for name, series in series_by_name.items()
    }
    drawdown = (growth / growth.cummax() - 1).round(6)
    index = pd.to_datetime(pd.Index(dates))
    monthly = (1 + pd.Series(returns.to_numpy(), index=index)).groupby([index.year, index.month]).prod() - 1
    return {
        "days": [d.isoformat() for d in dates],
        "book": (growth - 1).round(6).tolist(),
        "benchmarks": benchmarks,
        "index_source": index_source,
        "drawdown": drawdown.tolist(),
        "monthly": [{"year": int(y), "month": int(m), "return": round(float(r), 6)} for (y, m), r in monthly.items()],
    }


def ai_track_record(conn: Connection, starting_cash: float) -> TrackRecord:
    """The AI portfolio's record (module docstring); its costs are the trades' cost
    columns (fees, spread_cost, impact_cost), summed exactly."""
    dates, returns, curve = _ai_returns(conn, starting_cash)
    if not curve:
        return TrackRecord(days=0, fill_count=0, reason=NO_AI_DAYS)
    trades = ledger.trade_rows(conn, ledger.AI_PORTFOLIO)
    benchmarks, index_source = _benchmarks(conn, dates)
    exposure = pd.Series([_exposure(r["market_value"], r["equity"]) for r in curve], index=dates, dtype=float)
    out = statistics(
        returns,
        benchmarks,
        traded_value=_traded_value(trades),
        mean_equity=float(pd.Series([r["equity"] for r in curve]).mean()),
        costs=paid(trades),
        exposure=exposure,
        fill_count=len(trades),
    )
    return out.with_view(
        reason=ONE_AI_DAY if out.reason else None,
        trades=len(trades),
        index_source=index_source,
        records=_by_record(conn, returns, benchmarks, trades, exposure),
    )


def paid(trades: list[dict[str, Any]]) -> CostBreakdown:
    """What the trades paid: each one's fees and its spread and impact columns (0 for a
    trade the cost model did not fill)."""
    parts = (CostBreakdown(t["fees"], t["spread_cost"], t["impact_cost"]) for t in trades)
    return sum(parts, CostBreakdown())


def _traded_value(trades: list[dict[str, Any]]) -> float:
    """The value the trades moved (price times quantity, summed): turnover's numerator."""
    return sum(float(t["price"] * int(t["quantity"])) for t in trades)


def _exposure(market_value: float, equity: float) -> float:
    """Market value / equity at a close; NaN (left out of the average) without equity."""
    return float(market_value) / float(equity) if equity > 0 else float("nan")


def _by_record(
    conn: Connection,
    returns: pd.Series,
    benchmarks: dict[str, pd.Series],
    trades: list[dict[str, Any]],
    exposure: pd.Series,
) -> dict[str, TrackRecord]:
    """The same statistics over the days replayed on the validation record and over the
    live days apart (each day's `record`, as t1_trade stored it)."""
    c = tables.portfolio_days.c
    labels = {
        r["trading_date"]: (r["summary"] or {}).get("record", "live")
        for r in current_rows(conn, tables.portfolio_days, where=[c.portfolio_id == ledger.AI_PORTFOLIO])
    }
    out = {}
    for label in RECORDS:
        days = [d for d in returns.index if labels.get(d) == label]
        if not days:
            continue
        fills = sum(1 for t in trades if t["trading_date"] in set(days))
        part = statistics(
            returns.loc[days], {k: v.reindex(days) for k, v in benchmarks.items()}, exposure=exposure, fill_count=fills
        )
        out[label] = part.with_view(trades=fills)
    return out


EXTERNAL_FLOWS = ("DEPOSIT", "WITHDRAWAL", "RECONCILIATION")


@dataclass(frozen=True)
class ClientHistory:
    """A client's (or the house's) book as stored: its cash entries as (exchange date,
    amount, kind), sorted, and its ledger rows (trades and the shares statement syncs
    booked), oldest first."""

    entries: list[tuple[date, float, str]]
    trades: list[dict[str, Any]]

    @property
    def start(self) -> date | None:
        """The day of the first cash movement or trade; None when there is neither."""
        return min([when for when, _, _ in self.entries] + [t["trading_date"] for t in self.trades], default=None)

    @property
    def fills(self) -> int:
        """The trades an order filled: not the shares a statement sync booked."""
        return sum(1 for t in self.trades if t["origin"] != "STATEMENT_SYNC")


@dataclass(frozen=True)
class ValuedDays:
    """The book at each market day's close: its equity (cash plus positions at the latest
    closes), the flows from outside that day, and its exposure (market value / equity)."""

    dates: list[date]
    equity: list[float]
    flows: list[float]
    exposure: list[float]


def portfolio_track_record(conn: Connection, portfolio_id: str) -> TrackRecord:
    """A client's (or the house's) book valued at every market day's close from its first
    cash movement or trade (`value_days`). Deposits, withdrawals, statement reconciliations
    and the shares a statement sync adds or removes are flows, not performance. Costs are
    the fees recorded: a manual trade's price is the client's own, so no spread or impact
    is attributed to it."""
    history = client_history(conn, portfolio_id)
    start = history.start
    if start is None:
        return TrackRecord(days=0, fill_count=0, reason=NO_CLIENT_HISTORY)
    c = tables.eod_prices.c
    prices = pd.DataFrame(
        current_rows(conn, tables.eod_prices, where=[c.trading_date >= start - timedelta(days=60)]),
        columns=[x.name for x in tables.eod_prices.c],
    )
    dates = sorted(d for d in prices["trading_date"].unique() if d >= start)
    too_few = (
        f"{len(dates)} market day(s) with prices since the first trade or cash movement ({start}): the statistics "
        "need at least three (two daily returns)"
    )
    if len(dates) < 2:
        return TrackRecord(days=len(dates), fill_count=history.fills, reason=too_few)
    valued = value_days(conn, history, prices, dates)
    returns = daily_returns(pd.Series(valued.equity, index=dates), pd.Series(valued.flows, index=dates))
    positive = [e for e in valued.equity if e > 0]
    benchmarks, index_source = _benchmarks(conn, list(returns.index))
    out = statistics(
        returns,
        benchmarks,
        traded_value=_traded_value(history.trades),
        mean_equity=float(pd.Series(positive).mean()) if positive else None,
        costs=sum((CostBreakdown(fees=t["fees"]) for t in history.trades), CostBreakdown()),
        exposure=pd.Series(valued.exposure, index=dates, dtype=float),
        fill_count=history.fills,
    )
    return out.with_view(reason=too_few if out.reason else None, trades=len(history.trades), index_source=index_source)


def client_history(conn: Connection, portfolio_id: str) -> ClientHistory:
    """The book's cash entries and ledger rows (`ClientHistory`)."""
    e = tables.cash_entries.c
    cash_rows = conn.execute(select(e.amount, e.kind, e.effective_at).where(e.portfolio_id == portfolio_id)).all()
    entries = sorted((exchange_date(r.effective_at), float(r.amount), r.kind) for r in cash_rows)
    return ClientHistory(entries, ledger.ledger_rows(conn, portfolio_id))


def value_days(conn: Connection, history: ClientHistory, prices: pd.DataFrame, dates: list[date]) -> ValuedDays:
    """The book at each of `dates`' closes: cash as its entries stood at the close (trades,
    fees and dividends included), positions replayed from the ledger with the splits known
    by the day, at each name's latest close (carried forward over days it did not trade)."""
    closes = (
        prices.pivot_table(index="trading_date", columns="symbol", values="close", aggfunc="last").sort_index().ffill()
    )
    symbols = {t["symbol"] for t in history.trades}
    splits = stored_splits(conn, dates[-1], symbols) if symbols else []
    equity, flows, held = [], [], []
    for day in dates:
        cash = sum(amount for when, amount, _ in history.entries if when <= day)
        book = ledger.replay(
            [t for t in history.trades if t["trading_date"] <= day], [s for s in splits if s.ex_date <= day]
        )
        value = sum(
            p.quantity * float(closes.at[day, sym])
            for sym, p in book.items()
            if p.quantity > 0 and sym in closes.columns and pd.notna(closes.at[day, sym])
        )
        equity.append(cash + value)
        flows.append(_external_flow(history, closes, day))
        held.append(_exposure(value, cash + value))
    return ValuedDays(dates, equity, flows, held)


def _external_flow(history: ClientHistory, closes: pd.DataFrame, day: date) -> float:
    """What came from outside on `day`: deposits, withdrawals and statement reconciliations,
    and the shares a statement brought in (or took out), which arrive from outside like
    cash, at the day's close."""
    flow = sum(amount for when, amount, kind in history.entries if when == day and kind in EXTERNAL_FLOWS)
    for t in history.trades:
        if t["origin"] == "STATEMENT_SYNC" and t["trading_date"] == day and t["symbol"] in closes.columns:
            sign = 1 if t["side"] == "BUY" else -1
            flow += sign * int(t["quantity"]) * float(closes.at[day, t["symbol"]])
    return flow


def _benchmarks(conn: Connection, dates: list) -> tuple[dict[str, pd.Series], str | None]:
    """The benchmarks' daily returns over `dates`, and which index `index` is (module docstring)."""
    c = tables.eod_prices.c
    rows = current_rows(
        conn, tables.eod_prices, where=[c.trading_date >= dates[0] - timedelta(days=60), c.trading_date <= dates[-1]]
    )
    if not rows:
        return {}, None
    frame = pd.DataFrame(rows).rename(columns={"trading_date": "date"}).sort_values(["symbol", "date"])
    for column in ("close", "volume", "bid", "ask", "high", "low"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    frame["adv_20"] = frame.groupby("symbol")["volume"].transform(lambda v: v.rolling(20, min_periods=20).mean())
    out = {"equal_weight_liquid": equal_weight_liquid(frame).reindex(dates).fillna(0.0)}
    i = tables.index_levels.c
    levels = pd.DataFrame(
        current_rows(
            conn,
            tables.index_levels,
            where=[i.trading_date >= dates[0] - timedelta(days=60), i.trading_date <= dates[-1]],
        ),
        columns=[x.name for x in tables.index_levels.c],
    ).rename(columns={"trading_date": "date"})
    chosen = benchmark_index(levels, dates[0], dates[-1], get_settings().benchmark_index) if len(levels) else None
    if chosen is not None:
        series = levels[levels["symbol"] == chosen].set_index("date")["level"]
        # a day without a published level: no change (the index's last level stands)
        out["index"] = (
            index_returns(series.reindex(sorted(set(series.index) | set(dates))).ffill().dropna())
            .reindex(dates)
            .fillna(0.0)
        )
        return out, chosen
    f = tables.fundamentals.c
    shares = pd.DataFrame(
        current_rows(conn, tables.fundamentals, where=[f.report_date <= dates[-1]]),
        columns=[x.name for x in tables.fundamentals.c],
    )
    shares = shares.dropna(subset=["shares_outstanding"])
    if not shares.empty:
        closes = frame.pivot_table(index="date", columns="symbol", values="close", aggfunc="last")
        out["index"] = (
            cap_weighted_index(closes, shares[["symbol", "report_date", "shares_outstanding"]])
            .reindex(dates)
            .fillna(0.0)
        )
        return out, "cap_weighted"
    return out, None
