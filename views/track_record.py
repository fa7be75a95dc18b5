"""The AI portfolio's track record beside the equal-weighted liquid universe, read from the
store (portfolio/track_record.py computes; this view gathers), and what every record
shares: the benchmarks' returns (`benchmark_returns`, kept per span by `Benchmarks`) and
the trades' totals (`LedgerTotals`). A client's and the house's record is the read model
of views/book_record.py, which uses both.

The equity curve is the AI portfolio's `portfolio_days` (cash plus positions at each
close, dividends included), its first day measured against the opening cash (the opening
deposit its ledger holds, portfolio/ai.py `starting_cash`: not the setting, which only
opens the book); `records`
splits the days replayed on the validation record from the live ones; costs are
the parts each fill stored as the trade's columns (fees, spread_cost, impact_cost), summed
as exact money, and turnover the value its trades moved.
The benchmarks, over the same days, are total returns like the book's curve: the stored
bars on the last day's share count (`store.splits.on_count`, so a split is no loss) with
each stored DIVIDEND reinvested at its ex-date's close (a close carried over an ex-date
the name did not trade on read less it: `portfolio.track_record.carried_ex_dividend`).
The equal-weighted liquid universe,
from those closes, volumes and quotes (ADV_20 over each name's last 20 stored bars, on
each bar's own count), and the
market's index: the index levels the exchange published (`index_levels`, stored by T0
and the file importer; `MARKETINTEL_BENCHMARK_INDEX` names which where there are several,
else `portfolio.track_record.benchmark_index` chooses), else the service's
capitalisation-weighted index (the day's change as views/breadth.py defines it, from the
stored closes and the shares outstanding the fundamentals reported, put on the same count,
dividends added: breadth serves it as a price index), absent while neither
exists. `index_source` says which: the index's symbol, or `cap_weighted`.

Beside the benchmarks every record says what the book held (portfolio/track_record.py):
`average_exposure` (mean of market value / equity over the days), `fill_count` (fills in
the span: the AI portfolio's trades; a client's trades but the shares a statement sync
booked, which no order filled), `mostly_cash` and its `note`. A record without statistics
says why in `reason` (no executed day, no trade or cash movement, too few market days).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Required, TypedDict

import numpy as np
import pandas as pd
from sqlalchemy import Connection, select

from market.costs import CostBreakdown
from market.fees import FeeSchedule, fee_schedule
from market.plain import JsonValue
from market.settings import get_settings
from portfolio import ledger
from portfolio.ai import starting_cash
from portfolio.book_days import STATEMENT_SYNC
from portfolio.dividends import announced, per_share_on_count
from portfolio.nulls import beside_live
from portfolio.track_record import (
    RECORDS,
    TrackRecord,
    benchmark_index,
    cap_weighted_index,
    daily_returns,
    dividend_matrix,
    equal_weight_liquid,
    index_returns,
    statistics,
)
from store import tables
from store.history import current_rows, newest_ids
from store.splits import followed, joined, joined_rows, on_count, stored_splits, with_earlier_symbols
from views.market import on_own_count
from views.null_record import KEPT, NullRecords
from views.portfolio import EquityPoint, equity_curve

MonthlyReturn = TypedDict("MonthlyReturn", {"year": int, "month": int, "return": float})  # "return": a keyword


class TrackSeries(TypedDict, total=False):
    """The Quant Briefing's charts of the AI book (`ai_track_series`): its cumulative return
    by executed day beside each benchmark's (`index_source`: where the market index came
    from), its drawdown, its monthly returns and its null books' band (NullBand as a dict).
    Empty lists, no benchmarks and no band before two executed days, without `index_source`."""

    days: Required[list[str]]
    book: Required[list[float]]
    benchmarks: Required[dict[str, list[float]]]
    index_source: str | None
    drawdown: Required[list[float]]
    monthly: Required[list[MonthlyReturn]]
    nulls: Required[dict[str, JsonValue] | None]


NO_AI_DAYS = "the AI portfolio has no executed day yet"
ONE_AI_DAY = "one executed day: the statistics need at least two"
NO_CLIENT_HISTORY = "no trades or cash movements yet"
BENCHMARK_SPANS = 64
# What the benchmarks beside a record are read from: the closes, the corporate actions (splits
# and dividends), the exchange's index levels and the fundamentals (shares outstanding of the
# service's index). A record kept while any of them moves is stale (views/book_record.py).
BENCHMARK_PARTS = (tables.eod_prices, tables.corporate_actions, tables.index_levels, tables.fundamentals)


@dataclass(frozen=True)
class _AIReturns:
    """The AI portfolio's executed days, their daily returns and equity curve, and the cash
    it started with (the first day's return is measured against it)."""

    dates: list[date]
    returns: pd.Series
    curve: list[EquityPoint]
    starting: float


def _ai_returns(conn: Connection, opens_with: float) -> _AIReturns:
    """`opens_with`: the setting the book opens with, the start only before it has opened
    (portfolio/ai.py `starting_cash`)."""
    curve = equity_curve(conn)
    dates = [row["trading_date"] for row in curve]
    starting = float(starting_cash(conn, opens_with))
    returns = daily_returns(pd.Series([row["equity"] for row in curve], index=dates), opening=starting)
    return _AIReturns(dates, returns, curve, starting)


def ai_track_series(
    conn: Connection, opens_with: float, nulls: NullRecords | None = None, fees: FeeSchedule | None = None
) -> TrackSeries:
    """What the Quant Briefing draws: the book's cumulative return by executed day beside
    each benchmark's, its drawdown from the running peak, its return per calendar month
    (compounded from the daily returns), and its null books' band over the same days
    (`nulls`: portfolio/nulls.py NullBand as a dict; `ai_track_record`'s null books).
    `opens_with`: as `ai_track_record`'s."""
    read = _ai_returns(conn, opens_with)
    dates, returns = read.dates, read.returns
    if len(dates) < 2:
        return {"days": [], "book": [], "benchmarks": {}, "drawdown": [], "monthly": [], "nulls": None}
    growth = (1 + returns).cumprod()
    series_by_name, index_source = benchmark_returns(conn, dates)
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
        "nulls": asdict(
            (nulls or KEPT)
            .over(conn, fees or fee_schedule(get_settings()), read.starting, null_benchmark(conn, dates))
            .band
        ),
    }


@dataclass
class DayTotals:
    """What a book's trades of one trading date add up to (`LedgerTotals`)."""

    rows: int = 0
    fills: int = 0
    traded_value: Decimal = Decimal(0)
    paid: CostBreakdown = field(default_factory=CostBreakdown)


@dataclass(frozen=True)
class SpanTotals:
    """A book's trades summed over the span its record covers (`LedgerTotals.through`)."""

    rows: int
    fills: int
    traded_value: Decimal
    paid: CostBreakdown


@dataclass
class LedgerTotals:
    """What a book's trades add up to per trading date, kept up to date by `catch_up` with
    the trades stored since (ids above `through_id`: the ledger is append-only and a book's
    ids commit in order under its lock, so the sums are exact): how many rows and fills
    (trades an order filled, not the shares a statement sync booked), the value those
    fills traded (price times quantity: turnover's numerator; a sync's shares moved no
    money and are left out) and the costs paid by part (each trade's
    fees, spread_cost and impact_cost columns, 0 where the cost model did not fill)."""

    through_id: int = 0
    days: dict[date, DayTotals] = field(default_factory=dict)

    def catch_up(self, conn: Connection, portfolio_id: str, newest: int | None) -> None:
        """Add the book's trades stored after `through_id` up to `newest` (its newest id now)."""
        if newest is None or newest <= self.through_id:
            return
        t = tables.trades.c
        columns = (t.trading_date, t.price, t.quantity, t.fees, t.spread_cost, t.impact_cost, t.origin)
        query = select(*columns).where(t.portfolio_id == portfolio_id, t.id > self.through_id, t.id <= newest)
        for row in conn.execute(query):
            day = self.days.setdefault(row.trading_date, DayTotals())
            filled = row.origin != STATEMENT_SYNC  # a sync's shares came from outside: a flow, not a trade
            day.rows += 1
            day.fills += filled
            day.traded_value += Decimal(row.price) * int(row.quantity) if filled else Decimal(0)
            day.paid += CostBreakdown(row.fees, row.spread_cost, row.impact_cost)
        self.through_id = newest

    def through(self, last: date) -> SpanTotals:
        """The trades dated on or before `last`, the record's last valued close: a trade
        dated after it (placed before the day's prices are delivered) moved no valued
        equity yet, so its fill, value and costs join the record with that day's close."""
        kept = [t for d, t in self.days.items() if d <= last]
        paid = CostBreakdown()
        for t in kept:
            paid += t.paid
        return SpanTotals(
            sum(t.rows for t in kept), sum(t.fills for t in kept), sum((t.traded_value for t in kept), Decimal(0)), paid
        )

    def fills_by_day(self) -> Counter[date]:
        return Counter({d: t.fills for d, t in self.days.items()})


def ai_track_record(
    conn: Connection,
    opens_with: float,
    totals: LedgerTotals | None = None,
    benchmarks: Benchmarks | None = None,
    nulls: NullRecords | None = None,
    fees: FeeSchedule | None = None,
) -> TrackRecord:
    """The AI portfolio's record (module docstring); its costs are the trades' cost
    columns (fees, spread_cost, impact_cost), summed exactly; `nulls`, its null books over
    the same days (views/null_record.py) at `fees` (default: the settings' schedule).
    `totals`, `benchmarks` and `nulls`: a read model's (views/book_record.py TrackRecords),
    caught up here; fresh totals and benchmarks read everything, and the null books are
    the process's (`null_record.KEPT`). `opens_with`: the setting the book opens with
    (MARKETINTEL_AI_STARTING_CASH); its return is measured from its opening deposit once
    it has one (portfolio/ai.py `starting_cash`)."""
    read = _ai_returns(conn, opens_with)
    dates, returns, curve = read.dates, read.returns, read.curve
    if not curve:
        return TrackRecord(days=0, fill_count=0, reason=NO_AI_DAYS)
    totals = totals or LedgerTotals()
    totals.catch_up(
        conn, ledger.AI_PORTFOLIO, newest_ids(conn, (tables.trades, "portfolio_id", ledger.AI_PORTFOLIO))[0]
    )
    span = totals.through(dates[-1])
    series, index_source = (benchmarks or Benchmarks()).over(conn, dates)
    exposure = pd.Series([_exposure(r["market_value"], r["equity"]) for r in curve], index=dates, dtype=float)
    out = statistics(
        returns,
        series,
        traded_value=float(span.traded_value),
        mean_equity=float(pd.Series([r["equity"] for r in curve]).mean()),
        costs=span.paid,
        exposure=exposure,
        fill_count=span.rows,
    )
    against = (nulls or KEPT).over(
        conn, fees or fee_schedule(get_settings()), read.starting, null_benchmark(conn, dates)
    )
    return out.with_view(
        reason=ONE_AI_DAY if out.reason else None,
        trades=span.rows,
        index_source=index_source,
        records=_by_record(conn, returns, series, totals.fills_by_day(), exposure),
        nulls=beside_live(against.record, out.total_return, (out.first, out.last) if out.first and out.last else None),
    )


def _exposure(market_value: float, equity: float) -> float:
    """Market value / equity at a close; NaN (left out of the average) without equity."""
    return float(market_value) / float(equity) if equity > 0 else float("nan")


def _by_record(
    conn: Connection,
    returns: pd.Series,
    benchmarks: dict[str, pd.Series],
    fills_by_day: Counter[date],
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
        fills = sum(fills_by_day.get(d, 0) for d in days)
        part = statistics(
            returns.loc[days], {k: v.reindex(days) for k, v in benchmarks.items()}, exposure=exposure, fill_count=fills
        )
        out[label] = part.with_view(trades=fills)
    return out


class Benchmarks:
    """The benchmarks' daily returns over a span of days (`benchmark_returns`), kept per
    span while the closes, index levels, fundamentals and corporate actions (splits and
    dividends) they are read from stand (their newest ids) and the settings name the same
    index: books valued over the same days, and every read of one book between two market
    days, share one computation. The
    BENCHMARK_SPANS most recently used spans are kept."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple, tuple[dict[str, pd.Series], str | None]] = OrderedDict()
        self._lock = threading.Lock()

    def over(self, conn: Connection, dates: list) -> tuple[dict[str, pd.Series], str | None]:
        """`benchmark_returns(conn, dates)`, computed once per span and version."""
        version = newest_ids(conn, *BENCHMARK_PARTS)
        key = (tuple(dates), version, get_settings().benchmark_index)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        found = benchmark_returns(conn, dates)
        with self._lock:
            self._kept[key] = found
            while len(self._kept) > BENCHMARK_SPANS:
                self._kept.popitem(last=False)
        return found


def benchmark_returns(conn: Connection, dates: list) -> tuple[dict[str, pd.Series], str | None]:
    """The benchmarks' daily returns over `dates`, and which index `index` is (module
    docstring): total returns, from the stored bars on the last day's share count
    (`store.splits.on_count`: a split is no loss; each bar's ADV_20 on its own day's count,
    views/market.py `on_own_count`) with the stored dividends reinvested at their ex-date's
    close (`_dividends`)."""
    read = _on_one_count(conn, dates)
    if read is None:
        return {}, None
    frame, splits = read
    since = dates[0] - timedelta(days=60)
    dividends = _dividends(conn, set(frame["symbol"]), since, dates[-1], splits)
    out = {"equal_weight_liquid": equal_weight_liquid(frame, dividends).reindex(dates).fillna(0.0)}
    index, source = _index(conn, dates, frame, splits, dividends)
    if index is not None:
        out["index"] = index
    return out, source


def null_benchmark(conn: Connection, dates: list) -> pd.Series | None:
    """The equal-weighted liquid universe over `dates` on closes alone, no dividend added:
    what the null books and the model's replayed book are measured against. The replay
    credits no dividends (views/null_record.py), so a total return there would count
    against every replayed book the dividends none of them can receive (the demo's null
    books read -1.55 against it, -1.08 against closes); their ranks do not depend on it."""
    read = _on_one_count(conn, dates)
    return None if read is None else equal_weight_liquid(read[0]).reindex(dates).fillna(0.0)


def _on_one_count(conn: Connection, dates: list) -> tuple[pd.DataFrame, list] | None:
    """The stored bars from 60 days before `dates` through its last, on the last day's share
    count (`store.splits.on_count`), each bar's ADV_20 on its own day's count, and the
    splits; a company whose ticker changed is one series under its last symbol
    (`store.splits.joined`: the old symbol stops without a delisting, the new one has its
    ADV_20 from its first day); None without a bar."""
    c = tables.eod_prices.c
    since = dates[0] - timedelta(days=60)
    rows = current_rows(conn, tables.eod_prices, where=[c.trading_date >= since, c.trading_date <= dates[-1]])
    if not rows:
        return None
    bars = pd.DataFrame(rows)
    for column in ("close", "volume", "bid", "ask", "high", "low"):
        bars[column] = pd.to_numeric(bars[column], errors="coerce").astype(float)
    splits = stored_splits(conn, dates[-1], bars["symbol"].unique())
    bars = joined(bars, splits, dates[-1]).sort_values(["symbol", "trading_date"], kind="stable")
    bars, splits = bars.reset_index(drop=True), followed(splits, dates[-1])
    adv = on_own_count(bars, splits, lambda b: {"adv_20": _adv_20(b)})["adv_20"]
    return on_count(bars, splits, dates[-1]).assign(adv_20=adv).rename(columns={"trading_date": "date"}), splits


def _adv_20(bars: pd.DataFrame) -> np.ndarray:
    """Each bar's mean volume over its symbol's last 20 bars (NaN before 20)."""
    return bars.groupby("symbol")["volume"].transform(lambda v: v.rolling(20, min_periods=20).mean()).to_numpy()


def _dividends(conn: Connection, symbols: set[str], since: date, through: date, splits: list) -> pd.DataFrame:
    """The stored DIVIDEND notices of `symbols` with an ex-date in (since, through], as date x
    symbol cash per share on `through`'s count (`portfolio.dividends.per_share_on_count`: an
    amount paid on the count before a split, one on the ex-date included, divided by it); a
    renamed company's notices under its old symbol are its series' (`store.splits.joined`)."""
    notices = announced(conn, set(with_earlier_symbols(conn, symbols, through)), through, after=since)
    notices = joined_rows(notices, splits, through, "action_date")
    rows = [
        {
            "symbol": n["symbol"],
            "date": n["action_date"],
            "amount": float(per_share_on_count(n, splits, through)),
        }
        for n in notices
        if n["amount"] > 0
    ]
    return dividend_matrix(pd.DataFrame(rows, columns=["symbol", "date", "amount"]))


def _index(
    conn: Connection, dates: list, frame: pd.DataFrame, splits: list, dividends: pd.DataFrame
) -> tuple[pd.Series | None, str | None]:
    """The `index` benchmark's daily returns over `dates` and its source: the published
    index's levels (as the exchange publishes them), else the service's cap-weighted index
    on total return, else none."""
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
        return index_returns(series, dates), chosen
    f = tables.fundamentals.c
    shares = pd.DataFrame(
        current_rows(conn, tables.fundamentals, where=[f.report_date <= dates[-1]]),
        columns=[x.name for x in tables.fundamentals.c],
    ).dropna(subset=["shares_outstanding"])
    if shares.empty:
        return None, None
    closes = frame.pivot_table(index="date", columns="symbol", values="close", aggfunc="last")
    known = joined(shares[["symbol", "report_date", "shares_outstanding"]], splits, dates[-1], "report_date")
    index = cap_weighted_index(closes, known, splits, dates[-1], dividends)
    return index.reindex(dates).fillna(0.0), "cap_weighted"
