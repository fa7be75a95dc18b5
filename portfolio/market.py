"""Market facts the portfolio code reads from the store, point in time.

`market_days(conn, day)` gives each instrument's latest bar on or before `day` as a rail
`MarketDay`, with ADV_20 over the instrument's last 20 stored bars (within
LOOKBACK_CALENDAR_DAYS) and the volatility of their closes (the cost model's sigma) (a
bar with no trades counts as zero volume). A symbol whose latest bar is older than `day`
is reported with volume 0 for `day`: no trade was reported, so nothing could have been
bought or sold. A symbol without a bar in the LOOKBACK_CALENDAR_DAYS has no MarketDay (a
window with no bar at all reads no sessions); the delisting rule carries a held one at its
last close (portfolio/delisting.py `BookView.carried`).

**The spread every MarketDay carries** (market/liquidity.py's rule, the one the model,
the backtest and the views use): the day's closing quotes where both sides are quoted;
else `spread_estimate` / `spread_estimate_source`, set on every MarketDay from
`stored_estimates` over the same read (the name's latest two-sided quote of its last 5
stored sessions, `recent_quotes`; else Abdi-Ranaldo over the last 60 pairs of traded
sessions, else Corwin-Schultz or the tick floor, else the window's mean range: labels
`abdi_ranaldo`, `corwin_schultz`, `tick`, `range_window`); else (a name with no traded
bar in the lookback) the day's range. A fill through `MarketDay.session()` crosses that
spread and says which in `Fill.touch_source`.

`stored_estimates(conn, day, symbols)` is the one reader of the estimate from stored
history (the instrument liquidity view and the T0 day table read it too): it runs
`market.liquidity.estimate_spreads`' rule (`latest_estimates`: its figure on each name's
latest bar) over the bars stored in the
ESTIMATE_LOOKBACK_CALENDAR_DAYS up to `day` (about 95 sessions: the estimator's whole
60-pair window for a name that trades on two sessions in three; a name that trades more
rarely gets a shorter window than the model's panel, which reads its whole history, and
reads the window's mean range below 20 pairs). Bars before a split known by `day` are put
on the new count first, so the ex-date is not read as a jump. The estimate is the name's
on its latest bar on or before `day` (a day without trades carries the last traded
session's). Quotes still win where the day has them (`market.liquidity.spread_fraction`).
`market_days` reads the bars once, for all symbols, and gives the same frame to both.

**A later day's share count.** The morning suggestions plan trading day D from the latest
scored day before it, on holdings with the splits up to D applied, and a confirmation
checks D's trade against the latest close before it. `market_days(..., count_of=D)` and
`reference_close` put the earlier day on D's count (`store.splits.factor_between` of the
splits with an ex-date after it and on or before D: prices divided, volumes and ADV_20
multiplied), so a 2-for-1 split on D's morning neither doubles what a holding looks worth
nor prices a buy at the old close.

**A later day's reference price.** On a dividend's ex-date the exchange's reference price
is the close before it less the dividend. `reference_close` (the price band of every trade
a client books) and `reference_market` (the morning plan, its confirmation's rails, the
preview) take off the dividends with an ex-date after the close read (the session it is of: a name
that did not trade on its ex-date carries the close before it) and on or before the
later day, on its count (`portfolio.dividends.going_ex`, the one rule
`per_share_on_count` that the valuation applies to the ex-date's close): a sell planned
from Friday's 20.00 for a 2.00 dividend ex Monday is limited near 18, not near 20 with the
dividend credited beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

import numpy as np
import pandas as pd
from sqlalchemy import Connection, func, select

from market.errors import NotFoundError
from market.liquidity import WINDOW, latest_estimates
from portfolio import dividends
from portfolio.rails import MarketDay, adv_20
from store import tables
from store.history import current_frame, current_rows
from store.panels import PRICE_ROW_COLUMNS
from store.splits import factor_between, joined_on_count, stored_splits, with_earlier_symbols

LOOKBACK_CALENDAR_DAYS = 60  # comfortably more than 20 trading days, holidays included
ESTIMATE_LOOKBACK_CALENDAR_DAYS = 140  # the estimator's 60-pair window, holidays and untraded days included


def _frame(conn: Connection, day: date, symbols: list[str] | None, lookback_days: int) -> pd.DataFrame:
    """The current stored bars of `symbols` (all when None) in the `lookback_days` up to
    `day`, in one query."""
    c = tables.eod_prices.c
    where = [c.trading_date <= day, c.trading_date > day - timedelta(days=lookback_days)]
    if symbols is not None:
        where.append(c.symbol.in_(with_earlier_symbols(conn, symbols, day)))
    return current_frame(conn, tables.eod_prices, PRICE_ROW_COLUMNS, where=where)


def _estimates(frame: pd.DataFrame, window: int = WINDOW) -> dict[str, tuple[float, str]]:
    """symbol -> (spread estimate, its source) on each symbol's latest bar in `frame` (the
    stored bars, columns as eod_prices, on one share count: `on_count`)."""
    if frame.empty:
        return {}
    columns = ["symbol", "trading_date", "close", "high", "low", "volume", "bid", "ask"]
    bars = frame[columns].rename(columns={"trading_date": "date"}).reset_index(drop=True)
    for column in ("close", "high", "low", "volume", "bid", "ask"):
        bars[column] = pd.to_numeric(bars[column], errors="coerce").astype(float)
    return latest_estimates(bars, window)


def stored_estimates(
    conn: Connection, day: date, symbols: list[str] | None = None, window: int = WINDOW
) -> dict[str, tuple[float, str]]:
    """symbol -> (spread estimate as a fraction, its source label) on `day`, from the
    stored bars of the ESTIMATE_LOOKBACK_CALENDAR_DAYS up to `day` (point in time: none
    after it), split-adjusted; a symbol without a traded bar is absent. The estimate
    stands in for quotes only: callers still let the day's quotes win."""
    if symbols is not None and not symbols:
        return {}
    frame = _frame(conn, day, symbols, ESTIMATE_LOOKBACK_CALENDAR_DAYS)
    if frame.empty:
        return {}
    return _estimates(joined_on_count(frame, stored_splits(conn, day, frame["symbol"].unique()), day), window)


def _known(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def market_days(
    conn: Connection, day: date, symbols: list[str] | None = None, count_of: date | None = None
) -> dict[str, MarketDay]:
    """symbol -> the rail's MarketDay on `day` (module docstring). Its spread: the day's
    quotes where both sides are quoted, else `spread_estimate` (set on every MarketDay that
    has a traded bar in the ESTIMATE_LOOKBACK_CALENDAR_DAYS, from the same split-adjusted
    bars as `stored_estimates`, with `spread_estimate_source` its label), else the day's
    range. One query for all symbols.

    Every bar is read on `day`'s share count (`on_count`, the splits known by `day`): a
    name's close (a name without a bar since an ex-date keeps its last close, divided),
    its volatility (no split reads as a return) and ADV_20 (a 10-for-1 split does not make a
    name look ten times less liquid for 20 sessions) are on the count its holdings are.

    `count_of`: a later day whose share count the market is read on (the day a plan or a
    trade is for, whose holdings have the splits up to it applied): the splits with an
    ex-date after `day` and on or before it apply too."""
    if symbols is not None and not symbols:
        return {}
    frame = _frame(conn, day, symbols, ESTIMATE_LOOKBACK_CALENDAR_DAYS)
    if frame.empty:
        return {}
    through = max(day, count_of) if count_of is not None else day
    splits = stored_splits(conn, through, frame["symbol"].unique())
    return _sessions(joined_on_count(frame, splits, through), day)


def market_days_over(
    conn: Connection, days: list[date], symbols: list[str] | None = None
) -> dict[date, dict[str, MarketDay]]:
    """`market_days(conn, day, symbols)` for each of `days`, from one read of the bars
    (the ESTIMATE_LOOKBACK_CALENDAR_DAYS before the first day to the last) and one of the
    splits: each day reads only its own window of them and the splits known by it, so
    each day's sessions are those `market_days` gives (tested)."""
    if not days or (symbols is not None and not symbols):
        return {day: {} for day in days}
    c = tables.eod_prices.c
    where = [c.trading_date <= max(days), c.trading_date > min(days) - timedelta(days=ESTIMATE_LOOKBACK_CALENDAR_DAYS)]
    if symbols is not None:
        where.append(c.symbol.in_(with_earlier_symbols(conn, symbols, max(days))))
    frame = pd.DataFrame(
        current_rows(conn, tables.eod_prices, where=where), columns=[x.name for x in tables.eod_prices.c]
    )
    splits = stored_splits(conn, max(days), frame["symbol"].unique())
    dated = pd.to_datetime(frame["trading_date"]).to_numpy()
    out = {}
    for day in days:
        until = np.datetime64(day)
        inside = frame[(dated <= until) & (dated > until - np.timedelta64(ESTIMATE_LOOKBACK_CALENDAR_DAYS, "D"))]
        out[day] = _sessions(joined_on_count(inside, splits, day), day) if not inside.empty else {}
    return out


def _sessions(frame: pd.DataFrame, day: date) -> dict[str, MarketDay]:
    """`market_days` from its read: `frame`, the stored bars of the
    ESTIMATE_LOOKBACK_CALENDAR_DAYS up to `day` on one share count (`on_count`). Each
    name's bars of the LOOKBACK_CALENDAR_DAYS are read as arrays (one sort for all names)."""
    estimates = _estimates(frame)
    recent = frame[frame["trading_date"] > day - timedelta(days=LOOKBACK_CALENDAR_DAYS)]
    symbols = recent["symbol"].to_numpy()
    dated = pd.to_datetime(recent["trading_date"]).to_numpy()
    order = np.lexsort((dated, symbols))
    symbols, dated = symbols[order], dated[order]
    close, volume = (pd.to_numeric(recent[c], errors="coerce").to_numpy(float)[order] for c in ("close", "volume"))
    quotes = {c: recent[c].to_numpy()[order] for c in ("bid", "ask", "high", "low")}
    today = np.datetime64(day)
    result: dict[str, MarketDay] = {}
    for start, end in _runs(symbols):
        symbol, last, stale = symbols[start], end - 1, dated[end - 1] != today
        estimate, source = estimates.get(symbol, (None, "estimate"))
        result[symbol] = MarketDay(
            symbol=symbol,
            close=float(close[last]),
            volume=0 if stale else int(volume[last]),
            adv_20=adv_20(volume[start:end][-20:]),
            bid=None if stale else _known(quotes["bid"][last]),
            ask=None if stale else _known(quotes["ask"][last]),
            high=None if stale else _known(quotes["high"][last]),
            low=None if stale else _known(quotes["low"][last]),
            volatility=_volatility(close[start:end]),
            spread_estimate=estimate,
            spread_estimate_source=source,
            dated=pd.Timestamp(dated[last]).date(),
        )
    return result


def _runs(symbols: np.ndarray) -> list[tuple[int, int]]:
    """Each name's [start, end) in `symbols`, sorted by name: none where the window holds no
    bar (a held name suspended for longer than LOOKBACK_CALENDAR_DAYS has no session; the
    delisting rule carries it, portfolio/delisting.py)."""
    if not len(symbols):
        return []
    starts = np.flatnonzero(np.r_[True, symbols[1:] != symbols[:-1]])
    return list(zip(starts, [*starts[1:], len(symbols)], strict=True))


def _volatility(closes: np.ndarray) -> float | None:
    """volatility_20 as the features define it: the standard deviation of the last 20
    daily returns (the cost model's sigma); None with fewer than 5."""
    returns = np.diff(closes[-21:]) / closes[-21:-1] if len(closes) > 1 else np.array([])
    returns = returns[np.isfinite(returns)]
    return float(returns.std(ddof=1)) if len(returns) >= 5 else None


def known_symbols(conn: Connection) -> set[str]:
    return {r["symbol"] for r in current_rows(conn, tables.instruments)}


@dataclass(frozen=True)
class ReferenceClose:
    """The price a trade on a later session is checked and previewed against: the latest
    close on or before it, on that session's share count, less the dividends going ex
    after the close and by the session (`dividends.going_ex`): the exchange's reference
    price, which on an ex-date is the close before it less the dividend."""

    price: Decimal  # the reference: `close` less `dividend`, never below zero
    dated: date  # the close's session
    close: Decimal  # on the later session's count
    dividend: Decimal  # per share on that count, taken off (0: none goes ex)


def reference_close(conn: Connection, symbol: str, day: date) -> ReferenceClose:
    """The latest close of `symbol` on or before `day`, on `day`'s share count (a split
    with an ex-date after the close and on or before `day` divides it: `factor_between`),
    less the dividends going ex after it and on or before `day` (`ReferenceClose`)."""
    c = tables.eod_prices.c
    rows = current_rows(
        conn,
        tables.eod_prices,
        where=[
            c.symbol == symbol,
            c.trading_date <= day,
            c.trading_date > day - timedelta(days=LOOKBACK_CALENDAR_DAYS),
        ],
    )
    if not rows:
        raise NotFoundError(f"no price for {symbol} in the {LOOKBACK_CALENDAR_DAYS} days up to {day.isoformat()}")
    latest = max(rows, key=lambda r: r["trading_date"])
    close, dated = Decimal(str(latest["close"])), latest["trading_date"]
    factor = factor_between(stored_splits(conn, day, [symbol], after=dated), symbol, dated, day)
    close = close if factor == 1.0 else Decimal(str(round(float(close) / factor, 6)))
    dividend = dividends.going_ex(conn, {symbol: dated}, day).get(symbol, Decimal(0))
    return ReferenceClose(max(close - dividend, Decimal(0)), dated, close, dividend)


@dataclass(frozen=True)
class ReferenceMarket:
    """`reference_market`'s answer: the sessions, and what was taken off their prices."""

    sessions: dict[str, MarketDay]
    dividends: dict[str, Decimal]  # by symbol, per share on the later count (`dividends.going_ex`)


def reference_market(conn: Connection, day: date, count_of: date, symbols: list[str] | None = None) -> ReferenceMarket:
    """`market_days(conn, day, symbols, count_of=count_of)` as the exchange's reference for
    the session `count_of` (`count_of` = `day`: the day's own reference): each name's prices
    (close, quotes, range) less the dividends going ex after the session of its close (`day`,
    or an earlier one the name last traded on: an ex-date it did not trade on is one) and on
    or before `count_of` (`dividends.going_ex`, the rule `reference_close` applies), a price
    the dividend reaches read as unknown (the close as 0, which nothing buys). What the
    morning plan sizes and prices its orders on, its confirmation checks the rails on, a
    preview estimates from, and the AI book's day is planned and valued on (it credits every
    dividend it is owed up to the day: portfolio/ai.py `read_day`)."""
    sessions = market_days(conn, day, symbols, count_of=count_of)
    paid = dividends.going_ex(conn, {s: m.dated or day for s, m in sessions.items()}, count_of)
    for symbol, amount in paid.items():
        sessions[symbol] = _less(sessions[symbol], float(amount))
    return ReferenceMarket(sessions, paid)


def _less(session: MarketDay, amount: float) -> MarketDay:
    """`session` with `amount` taken off its prices (an ex-date's reference)."""

    def off(price: float | None) -> float | None:
        return None if price is None or price - amount <= 0 else price - amount

    return replace(
        session,
        close=max(session.close - amount, 0.0),
        bid=off(session.bid),
        ask=off(session.ask),
        high=off(session.high),
        low=off(session.low),
    )


HALT_NOTICES = ("HALT", "RESUME", "DELISTING")  # the exchange's notices that start or end a halt


def halted_since(conn: Connection, symbol: str, day: date) -> date | None:
    """The date of the exchange's HALT notice `symbol` is under on `day`, else None
    (`halts_on`'s rule). What a client's trade and confirmation are refused with, and what
    a preview says fills nothing (portfolio/trading.py `closed_to_trading`)."""
    return halts_on(conn, day, [symbol]).get(symbol)


def halt_said(symbol: str, since: date) -> str:
    """How a halt is said wherever it stops or marks a name: a trade's refusal
    (portfolio/trading.py `closed_to_trading`), the Quant Briefing's signals."""
    return (
        f"{symbol} is halted since {since.isoformat()} (the exchange's HALT notice); "
        "a halted name cannot be traded until it resumes"
    )


def halts_on(conn: Connection, day: date, symbols: list[str] | None = None) -> dict[str, date]:
    """symbol -> the date of the exchange's HALT notice it is under on `day`, of `symbols`
    (every name when None; a name trading is absent): one query whatever their number.

    The rule: a name's HALT, RESUME and DELISTING notices dated on or before `day` in the
    order they apply (date, then the order they were stored: a HALT and a RESUME of one day
    end resumed when the RESUME came after), and the name is halted when the last is a HALT,
    since the first of the HALTs that end the run (a repeated notice does not move the
    date). A RESUME's date is the session trading resumes; a DELISTING ends a halt (the
    delisting is then what refuses a trade).

    The notices are what says a name is halted, not `eod_prices.halted`: that column is the
    status on a delivered bar (the exchange's page; an imported bar has none), absent on a
    day the name has no bar and silent on since when; the notices are dated, point in time,
    and what a trade is refused with, so a quote (views/market.py) says what a trade meets."""
    c = tables.corporate_actions.c
    where = [c.kind.in_(HALT_NOTICES), c.action_date <= day]
    if symbols is not None:
        where.append(c.symbol.in_(sorted(set(symbols))))
    # a notice is its key (symbol, date, kind), and its place its first version's: a HALT
    # re-sent with corrected text stays before the RESUME that followed it
    notices = select(c.symbol, c.action_date, c.kind, func.min(c.id)).where(*where)
    rows = conn.execute(notices.group_by(c.symbol, c.action_date, c.kind)).all()
    since: dict[str, date] = {}
    for symbol, action_date, kind, _ in sorted(rows, key=lambda r: (r[0], r[1], r[3])):
        if kind != "HALT":
            since.pop(symbol, None)
        else:
            since.setdefault(symbol, action_date)
    return since


def trading_currency(conn: Connection, default: str = "JMD") -> str:
    """The currency the listed instruments trade in (the most common one among them, as
    their delivery or import recorded it; KES for a replayed NSE), `default` before any
    instrument is stored. Money figures of the AI portfolio are in this currency."""
    from collections import Counter

    counts = Counter(r["currency"] for r in current_rows(conn, tables.instruments) if r["currency"])
    return counts.most_common(1)[0][0] if counts else default


def known_persistence(conn: Connection, day: date) -> dict[str, float | None] | None:
    """The expected excess's persistence known on `day` (models/metrics.py `persistence`):
    the mean rank IC per window after the fill, on the book's universe (the stored rows with
    a tercile other than ILLIQUID: ordinary shares that passed the entry gates), over the
    stored predictions (the validation record, then the live one, which wins a day both
    hold) whose windows had closed by `day`; None before any is known. What the AI book and
    the morning suggestions weigh a trade's hold with (portfolio/book.py `Outlook`), as the
    backtest does (portfolio/backtest.py `persistence_by_day`)."""
    return persistence_known_over(conn, [day])[day]


_EXCESS: dict[tuple, pd.DataFrame] = {}  # the window excess of the stored bars, by the store's data version


def _window_excess(conn: Connection) -> pd.DataFrame:
    """models.metrics.window_excess of every stored bar, kept per store and data version
    (the newest price and corporate action): a day reads only the windows that had closed
    by it (`means_known_by`), which read no close after it, so the bars stored after a day
    change nothing it reads, and a replay of many days (bootstrap, the demo) builds the
    panel's windows once."""
    from models.metrics import window_excess
    from store.history import newest_ids
    from store.panels import price_panel

    key = (str(conn.engine.url), *newest_ids(conn, tables.eod_prices, tables.corporate_actions))
    if key not in _EXCESS:
        _EXCESS.clear()  # one version per process: the store moved on
        latest = conn.execute(select(func.max(tables.eod_prices.c.trading_date))).scalar()
        _EXCESS[key] = window_excess(price_panel(conn, latest)) if latest else pd.DataFrame()
    return _EXCESS[key]


def _stored_expected_excess(conn: Connection, day: date) -> pd.DataFrame:
    """symbol, date, expected_return of the stored predictions before `day` on the book's
    universe: the latest row of each name and day, the live record over the validation one."""
    frames = []
    for rank, record in enumerate((tables.validation_predictions, tables.predictions)):
        c = record.c
        rows = conn.execute(
            select(c.id, c.symbol, c.trading_date, c.expected_return, c.tercile).where(
                c.trading_date < day, c.expected_return.is_not(None)
            )
        )
        # plain tuples: pandas reads SQLAlchemy's rows one attribute lookup at a time (1.1 of 2.5 s at 2,000 names)
        frame = pd.DataFrame([tuple(r) for r in rows], columns=["id", "symbol", "date", "expected_return", "tercile"])
        frames.append(frame.assign(rank=rank))
    stored = pd.concat(frames, ignore_index=True)
    stored = stored[stored["tercile"].notna() & (stored["tercile"] != "ILLIQUID")]
    latest = stored.sort_values(["rank", "id"]).drop_duplicates(["symbol", "date"], keep="last")
    return latest[["symbol", "date", "expected_return"]].reset_index(drop=True)


def persistence_known_over(conn: Connection, days: list[date]) -> dict[date, dict[str, float | None] | None]:
    """`known_persistence` on each of `days`, from one read of the stored predictions (up
    to the last day) and the stored bars' window excess (`_window_excess`): each day counts
    only the ICs whose windows had closed by it (`Persistence.means_known_by`), so a day
    reads what it read on its own (tested). A replay of many days (the track record's null
    books) reads them once."""
    from models.metrics import persistence

    if not days:
        return {}
    scored = _stored_expected_excess(conn, max(days))
    excess = _window_excess(conn) if not scored.empty else pd.DataFrame()
    if excess.empty:
        return {day: None for day in days}
    known = persistence(scored, excess).means_known_by(sorted(set(days)))
    return {day: known[day] if any(v is not None for v in known[day].values()) else None for day in days}
