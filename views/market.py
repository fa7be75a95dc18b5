"""What the market endpoints serve, read point in time from the store: the latest day
per ticker with its prediction, a symbol's variance and normalised statistics, and its
history with technical indicators.

Indicators are the feature registry's own functions (models/features.py), computed over
the bars before the requested range as well, so the first rows of a page are warmed up.
The prices served are as traded; every return-based figure (the day's change and breadth,
RSI, momentum, volatility, the bands, the volume ratio, the statistics' variances and
z-scores) reads the bars before a day on that day's share count (`on_own_count`, by
`store.splits.on_count`: the splits with an ex-date on or before the day, none after), so
a split's ex-date reads the move net of the split, not a loss.
RSI is Wilder's exponential average; reading `INDICATOR_WARMUP_DAYS` of earlier bars makes
it equal to the full-history value to within about 1e-4 (measured 2e-5: (13/14)^180 times
how far the average's seed is from its value; tests/api/test_read_models.py).

The API serves history, symbol statistics and GraphQL's bars from the stored read model
(views/bars.py: the same functions over each instrument's whole history, written when
prices change); the per-request `history`, `histories`, `recent_histories` and
`symbol_statistics` here are what it is checked against, field for field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, TypedDict

import numpy as np
import pandas as pd
from sqlalchemy import Connection, Table, and_, func, or_, select, tuple_

from market.clock import TRADING_DAYS_PER_YEAR, TradingCalendar
from market.errors import InvalidInputError, NotFoundError, NotReadyError
from models import features as f
from models.reasons import ServedReasons
from models.scoring import ServedPrediction, served_predictions
from portfolio.market import halts_on
from store import tables
from store.history import current_frame, current_rows, newest_ids
from store.panels import PRICE_ROW_COLUMNS
from store.splits import (
    ShareSplit,
    Split,
    TickerChanges,
    factor_between,
    followed,
    on_count,
    share_splits,
    stored_splits,
    ticker_changes,
)
from views.instrument import instruments, served_models

INDICATOR_WARMUP_DAYS = 270  # calendar days, about 185 trading days
LATEST_LOOKBACK_DAYS = 60  # a symbol whose last bar is older is not "latest" any more
VARIANCE_WINDOWS = (20, 60, 120, 250)
INDICATORS = {
    "rsi_14": f.rsi_14,
    "bollinger_pct_b": f.bollinger_pct_b,
    "bollinger_bandwidth": f.bollinger_bandwidth,
    "momentum_5": f.momentum_5,
    "momentum_20": f.momentum_20,
    "volatility_20": f.volatility_20,
    "volume_ratio_20": f.volume_ratio_20,
    "spread_pct": lambda p: f.spread_pct(p) * 100,
}  # one unit convention in every answer: a *_pct field is in percent, other ratios are fractions
EARLIEST = date(1900, 1, 1)
# A latest quote's prediction fields: the served prediction's (models/scoring.py
# `ServedPrediction`) that GET /api/market/latest shows, each with the decimals it is
# rounded to (None: as stored). `model_id` is the day's one served model.
QUOTED: dict[str, int | None] = {
    "predicted_return": 6,
    "score": 4,
    "action": None,
    "weight": 4,
    "tercile": None,
    "model_id": None,
    "layer1_backend": None,
    "held_edge": None,  # as stored: a reader that formats it (the briefing) rounds it once, as the reason does
    "round_trip_cost": 6,
    "decision_reason": None,
    "reasons": None,
}
PRICE_COLUMNS = ["trading_date", "open", "high", "low", "close", "volume", "bid", "ask"]


class QuotedPrediction(TypedDict):
    """A latest quote's prediction fields (`QUOTED`, rounded as listed there), all None
    where the day's record did not score the ticker."""

    predicted_return: float | None
    score: float | None
    action: str | None
    weight: float | None
    tercile: str | None
    model_id: str | None
    layer1_backend: str | None
    held_edge: float | None
    round_trip_cost: float | None
    decision_reason: str | None
    reasons: ServedReasons | None


class Quote(QuotedPrediction):
    """A ticker's latest quote (`latest_market`): its last bar, whether the exchange has
    halted it (`halted_since`), the change, RSI, the prediction fields and which record they
    come from (`reason`, `DayScores.reason`)."""

    trading_date: date
    close: float
    volume: int
    halted_since: date | None
    change_pct: float | None
    rsi_14: float | None
    reason: str | None


class Bar(TypedDict):
    """A history item: a bar's prices and volume (`PRICE_COLUMNS`) and its indicators
    (`INDICATORS`), numbers rounded to 6 places, None where there is none yet."""

    trading_date: date
    volume: int
    open: float | None
    high: float | None
    low: float | None
    close: float | None
    bid: float | None
    ask: float | None
    rsi_14: float | None
    bollinger_pct_b: float | None
    bollinger_bandwidth: float | None
    momentum_5: float | None
    momentum_20: float | None
    volatility_20: float | None
    volume_ratio_20: float | None
    spread_pct: float | None


@dataclass(frozen=True)
class BarMark:
    """Where the page after a page of a symbol's bars starts: after `day` (forward, to newer
    bars) or, `older`, before it (backward). The transport writes it as its own cursor
    (REST's: api/paging.py `bars_page`, opaque and naming the symbol)."""

    day: date
    older: bool = False


class History(TypedDict):
    """A page of a symbol's bars, oldest first, and where the next page starts (a date
    forward; REST's history a `BarMark`, either way), None at the end."""

    symbol: str
    items: list[Bar]
    next_cursor: date | BarMark | None


class TickerChangeRow(TypedDict):
    symbol: str
    as_of: date
    relisted_on: date | None


class Renamed(TypedDict):
    """A symbol's ticker changes (`store.splits.ticker_changes`): the symbol it trades under
    from an ex-date, and the symbols whose rows before theirs are its history."""

    renamed_to: TickerChangeRow | None
    renamed_from: list[TickerChangeRow]


class SymbolHistory(History, Renamed):
    """A page of one symbol's bars (REST's history) with its ticker changes and its splits
    (`split_history`: the bars are as traded, the splits say where the count changed)."""

    splits: list[ShareSplit]


def split_history(conn: Connection, symbol: str) -> list[ShareSplit]:
    """`symbol`'s stored splits, oldest first (`store.splits.share_splits`): what a client
    reading its bars, served as traded, needs to put their prices on one count."""
    return list(share_splits(conn, [symbol]).get(symbol, ()))


def renamed(conn: Connection, symbol: str) -> Renamed:
    """`symbol`'s ticker changes as its reads name them: what traded under the old ticker
    is served under it, pointing at the new one, and the new one's answer names the old."""
    changes = ticker_changes(conn, [symbol]).get(symbol, TickerChanges())
    return {
        "renamed_to": TickerChangeRow(**asdict(changes.renamed_to)) if changes.renamed_to else None,
        "renamed_from": [TickerChangeRow(**asdict(c)) for c in changes.renamed_from],
    }


class ZScore(TypedDict):
    value: float | None
    mean: float | None
    std: float | None
    z: float | None
    observations: int


class WindowVariance(TypedDict):
    """A window's sample variance of daily log returns and its annualised volatility; a
    day without trades is a return of 0 (its close is the last close), so `traded_returns`
    counts the window's returns that end on a day with trades, and with none the variance
    is null: no price was observed to move or not."""

    variance: float | None
    annualised_volatility: float | None
    observations: int
    traded_returns: int


class LatestReasons(TypedDict):
    prediction_date: date | None
    reasons: ServedReasons | None


class Statistics(TypedDict):
    """A symbol's variance of daily log returns per window and the latest value of the
    day's statistics as z-scores against its own earlier history."""

    symbol: str
    as_of: date
    observations: int
    variance: dict[str, WindowVariance]
    normalised: dict[str, ZScore]


class SymbolStatistics(Statistics, LatestReasons, Renamed):
    """`statistics` with the latest served live prediction's reasons and the symbol's
    ticker changes."""


def data_version(conn: Connection) -> tuple:
    """Changes whenever a price or prediction is appended (append-only ids only grow)."""
    return newest_ids(conn, tables.eod_prices, tables.predictions)


def latest_priced_day(conn: Connection, on_or_before: date | None = None) -> date | None:
    query = select(func.max(tables.eod_prices.c.trading_date))
    if on_or_before is not None:
        query = query.where(tables.eod_prices.c.trading_date <= on_or_before)
    return conn.execute(query).scalar()


def valuation_day(conn: Connection, calendar: TradingCalendar, now: datetime) -> date:
    """The day portfolios are valued at: the latest priced trading day (or, on an empty
    store, the latest trading day on the exchange clock at `now`)."""
    return latest_priced_day(conn) or calendar.session_of(now)


@dataclass(frozen=True)
class ValuedAt:
    """Where a portfolio is valued at a moment: at `day`'s closes (`valuation_day`), on the
    share count of `session`, the current session (`TradingCalendar.session_of`: a split
    whose ex-date it is applies; a trade booked for a later one is pending)."""

    day: date
    session: date


def valued_at(conn: Connection, calendar: TradingCalendar, now: datetime) -> ValuedAt:
    """The one rule every reader of a portfolio at `now` values it by (the desk's REST,
    GraphQL and CLI reads, the reports): views/valuation.py `portfolio_view(conn, id,
    at.day, at.session)`. It depends only on the stored prices and the exchange date of `now`."""
    return ValuedAt(valuation_day(conn, calendar, now), calendar.session_of(now))


def check_closed_session(calendar: TradingCalendar, requested: date, closed_through: date) -> None:
    """A requested day that is no trading day (a weekend, a public holiday) or whose session
    has not closed yet (after `closed_through`) is bad input (InvalidInputError): every
    read of a day (the market, the day's analysis) answers it alike, before its store."""
    reason = calendar.closed_reason(requested)
    if reason:
        raise InvalidInputError(f"{requested.isoformat()} is not a trading day ({reason})")
    if requested > closed_through:
        raise InvalidInputError(
            f"{requested.isoformat()} has not closed yet; the latest closed trading day is {closed_through.isoformat()}"
        )


def market_day(conn: Connection, calendar: TradingCalendar, requested: date | None, closed_through: date) -> date:
    """The trading date to serve: the latest priced one, or the requested one once delivered.

    A requested date after `closed_through` (the latest session that has closed) is in the
    future (InvalidInputError); one whose session closed but is newer than anything
    delivered is not ready yet (NotReadyError: T0 is still running or late); an older one
    with no prices is a gap in the history (NotFoundError).
    """
    if requested is not None:
        check_closed_session(calendar, requested, closed_through)
        latest = latest_priced_day(conn)
        if latest is None or requested > latest:
            raise NotReadyError(
                f"prices for {requested.isoformat()} are not delivered yet (T0 runs at 16:00 "
                "exchange time); ask again later or omit `date` for the latest delivered day"
            )
        if latest_priced_day(conn, requested) != requested:
            raise NotFoundError(f"the store has no prices for {requested.isoformat()}")
        return requested
    day = latest_priced_day(conn)
    if day is None:
        raise NotReadyError("no trading day has been delivered yet; run T0 (`marketintel scrape`) first")
    return day


def _bars(conn: Connection, start: date, end: date, symbols: list[str] | None = None) -> pd.DataFrame:
    c = tables.eod_prices.c
    where = [c.trading_date >= start, c.trading_date <= end]
    if symbols is not None:
        where.append(c.symbol.in_(symbols))
    frame = current_frame(conn, tables.eod_prices, PRICE_ROW_COLUMNS, where=where)
    return frame.sort_values(["symbol", "trading_date"], kind="stable").reset_index(drop=True)


Columns = dict[str, np.ndarray]  # computed columns, one value per bar


def with_indicators(bars: pd.DataFrame, splits: Sequence[Split] = ()) -> pd.DataFrame:
    """`bars` of one symbol, oldest first, or of many sorted by symbol, then date, with
    every indicator column added (each symbol's from its own bars: models/features.py),
    each bar's read on its own day's share count (`on_own_count`: `splits`, the stored
    ones of these symbols, point in time). The prices stay as traded."""
    return bars.assign(**on_own_count(bars, splits, _indicators))


def _indicators(bars: pd.DataFrame) -> Columns:
    panel = bars.astype({"close": float, "volume": float, "bid": float, "ask": float, "high": float, "low": float})
    return {name: compute(panel).to_numpy() for name, compute in INDICATORS.items()}


def on_own_count(bars: pd.DataFrame, splits: Sequence[Split], compute: Callable[[pd.DataFrame], Columns]) -> Columns:
    """`compute` over `bars` (sorted by symbol, then date), each bar's values read from the
    bars up to it put on that bar's share count: `store.splits.on_count` through the bar's
    date, so an earlier bar is divided by the splits with an ex-date after it and on or
    before the bar's day, and by no later one (point in time). A split's ex-date then reads
    the move net of the split (a 2-for-1 split of a flat price: a return of 0, not -50%),
    and a bar before a split reads what it read before the split was known, bit for bit.

    One pass over every bar as traded (the bars before any split), then one over every
    split's span at once: for each split after a symbol's first bar with a bar on or after
    it, the symbol's bars up to its next split on the ex-date's count, as a run of its own,
    whose values are kept from the ex-date on."""
    values = {name: np.array(column, dtype=float) for name, column in compute(bars).items()}
    if not splits or bars.empty:
        return values
    dates = bars["trading_date"].to_numpy()
    pieces, targets, kept = [], [], []
    for symbol, rows in bars.groupby("symbol", sort=False).indices.items():
        ex_dates = sorted({s.ex_date for s in splits if s.symbol == symbol and dates[rows[0]] < s.ex_date})
        for ex_date, until in zip(ex_dates, [*ex_dates[1:], date.max]):
            history = rows[dates[rows] < until]  # the bars a bar from the ex-date to the next split reads
            on_new_count = dates[history] >= ex_date
            if on_new_count.any():
                # each span its own run (models/features.py computes each run on its own)
                span = on_count(bars.iloc[history], splits, ex_date).assign(symbol=f"{symbol} {ex_date}")
                pieces.append(span)
                targets.append(history[on_new_count])
                kept.append(on_new_count)
    if pieces:
        counted = compute(pd.concat(pieces, ignore_index=True))
        target, keep = np.concatenate(targets), np.concatenate(kept)
        for name, column in counted.items():
            values[name][target] = np.asarray(column, dtype=float)[keep]
    return values


def _number(value: Any, digits: int = 6) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), digits)


def _served(conn: Connection, table: Table, day: date) -> tuple[dict[str, ServedPrediction], dict[str, str]]:
    """The day's served predictions of `table` (the live or the validation record), by
    symbol, and the symbols only a model the day no longer serves scored (a retrain
    re-scored the day without them), with that model's id."""
    rows = current_rows(conn, table, where=[table.c.trading_date == day])
    record = "validation" if table is tables.validation_predictions else "live"
    served = {s: ServedPrediction.from_row(r, record) for s, r in served_predictions(rows).get(day, {}).items()}
    return served, {r["symbol"]: r["model_id"] for r in rows if r["symbol"] not in served}


def quoted(prediction: ServedPrediction) -> QuotedPrediction:
    """The prediction fields of a latest quote (`QUOTED`), from a served prediction."""
    values = {}
    for name, digits in QUOTED.items():
        value = getattr(prediction, name)
        values[name] = value if digits is None else _number(value, digits)
    return values


@dataclass(frozen=True)
class DayScores:
    """Which record a day's prediction fields come from, and what they say (`day_scores`).

    `record` is "live" or "validation"; `model_id` the record's one served model for the
    day, None when neither record scored it; `predictions` the served predictions by
    symbol; `unscored` what every quote says when `model_id` is None; `superseded` the
    symbols only an earlier model scored on the day (a retrain re-scored the day without
    them: models/scoring.py `served_model`), with that model's id."""

    day: date
    record: str
    model_id: str | None
    predictions: dict[str, ServedPrediction]
    unscored: str
    superseded: Mapping[str, str] = field(default_factory=dict)

    def reason(self, symbol: str, last_bar: date | None = None) -> str | None:
        """A quote's `reason`: which record a scored quote's fields are from (null for the
        live one), or why the symbol has no prediction for the day: no price delivered for
        it that day (`last_bar`, its latest bar, is older: the model scores the day's priced
        names only), a retrain that re-scored the day without it (`superseded`), else too
        little history."""
        day = self.day.isoformat()
        if symbol in self.predictions:
            if self.record != "validation":
                return None
            return (
                f"validation record: {day} is before the first live day, so these are the "
                f"walk-forward's out-of-sample scores (model {self.model_id}; the record: GET "
                "/api/ai/performance `validation`)"
            )
        if self.model_id is None:
            return self.unscored
        if last_bar is not None and last_bar != self.day:
            return (
                f"{symbol} has no prediction for {day}: no price was delivered for it that day (its latest bar "
                f"is of {last_bar.isoformat()}), and the model scores the names priced on the day"
            )
        if symbol in self.superseded:
            return (
                f"{symbol} has no prediction for {day}: model {self.model_id} re-scored the day without it, and "
                f"the day's predictions are that model's (model {self.superseded[symbol]}'s is not served)"
            )
        if self.record == "validation":
            return (
                f"{symbol} has no prediction for {day} in the validation record (the "
                "walk-forward skipped it: too little history)"
            )
        return f"{symbol} has no prediction for {day} (the model skipped it: too little history)"


def day_scores(conn: Connection, day: date) -> DayScores:
    """The day's scores from one record, never a mix: its live predictions when it has any,
    else the bootstrapped validation record's (docs/model-and-validation.md, "Two records").

    A day before the first live day has no live scores, but the validation record scored it
    out of sample, and over the record's last 60 days those are the very signals the AI
    portfolio's replay traded on (and T2's first suggestions came from the last one's). A
    user asking `?date=` for such a day wants the scores behind those trades; answering "not
    scored yet" (or 404/503) would be false, since the day was scored and will never be
    scored live. So the prediction fields are the validation record's and say so:
    `model_id` is the walk-forward model that made them (`wf-<block start>-h<horizon>-...`,
    a `model_runs` row of kind `validation`) and `reason` names the record. The records stay
    apart where they are measured (GET /api/ai/performance serves them side by side); this
    read only labels which one the day's scores came from."""
    not_yet = f"{day.isoformat()} is not scored yet (T1 step 4, t1_predict, has not run for it)"
    live, superseded = _served(conn, tables.predictions, day)
    if live:
        return DayScores(day, "live", next(iter(live.values())).model_id, live, not_yet, superseded)
    live_first = conn.execute(select(func.min(tables.predictions.c.trading_date))).scalar()
    if live_first is not None and day >= live_first:
        return DayScores(day, "live", None, {}, not_yet)
    validation, superseded = _served(conn, tables.validation_predictions, day)
    if validation:
        model_id = next(iter(validation.values())).model_id
        return DayScores(day, "validation", model_id, validation, not_yet, superseded)
    return DayScores(day, "live", None, {}, _unscored(conn, day, live_first) or not_yet)


def _unscored(conn: Connection, day: date, live_first: date | None) -> str | None:
    """Why neither record scored `day`, a day before the live record (or with no live
    record yet): said instead of "not scored yet" when no live run will ever score it,
    that is when the live record has started, or when `day` is before the validation
    record. None otherwise (a live run may still score it)."""
    v = tables.validation_predictions.c
    first, last = conn.execute(select(func.min(v.trading_date), func.max(v.trading_date))).one()
    if live_first is None and (first is None or day >= first):
        return None
    validation = (
        f"the validation record covers {first.isoformat()} to {last.isoformat()}"
        if first
        else "there is no validation record (`marketintel bootstrap` builds it)"
    )
    live = f"the live record starts {live_first.isoformat()}" if live_first else "there is no live record yet"
    return f"{day.isoformat()} is scored by neither record: {validation}, {live} (GET /api/ai/performance)"


def _with_rsi(bars: pd.DataFrame, splits: Sequence[Split]) -> pd.DataFrame:
    """`bars` of every symbol (sorted by symbol, then date) with `rsi_14` and
    `previous_close` (the close of the bar before, None at a symbol's first) added, each
    bar's on its own share count (`on_own_count`): only RSI and the change are served by
    `latest_market`, so one pass over every symbol, not all indicators."""
    if not bars.empty:
        bars = bars.assign(**on_own_count(bars, splits, _rsi_and_previous))
    return bars


def _rsi_and_previous(bars: pd.DataFrame) -> Columns:
    closes = bars[["symbol", "close"]].astype({"close": float})
    return {
        "rsi_14": f.rsi_14(closes).to_numpy(),
        "previous_close": closes.groupby("symbol", sort=False)["close"].shift(1).to_numpy(),
    }


def _change_pct(close: Any, previous: Any, traded: bool) -> float | None:
    """The day's change of the close in percent: 0.0 when the symbol did not trade on the
    day (its last bar is older), null without an earlier bar. `previous` is on the day's
    share count (`_with_rsi`): a split's ex-date reads the move net of the split."""
    if not previous:
        return None
    return _number((close / previous - 1) * 100, 4) if traded else 0.0


def _quote(
    last: Any, previous: float | None, scores: DayScores, halted: date | None, splits: Sequence[Split]
) -> Quote | None:
    """One symbol's latest quote from its last bar (`last`: symbol, trading_date, close,
    volume, rsi_14), the close of the bar before it (None without one), the day's scores
    and the date of the HALT notice it is under on the day (None while it trades); None
    when its last bar is more than `LATEST_LOOKBACK_DAYS` old (it is not "latest" any more).

    A symbol without a bar on the day is quoted as the day's no-trade row, as the exchange
    states an untraded name and a stored no-trade row reads: the day's date, the last
    close on the day's share count (divided by the splits with an ex-date after the last
    bar, `splits`, as the exchange's reference price is: `store.splits.factor_between`),
    volume 0, change 0.0 (its last bar's date is in `reason` when it is unscored)."""
    day = scores.day
    if last.trading_date < day - timedelta(days=LATEST_LOOKBACK_DAYS):
        return None
    traded = last.trading_date == day
    prediction = scores.predictions.get(last.symbol)
    return {
        "trading_date": day,
        "close": float(last.close) / factor_between(splits, last.symbol, last.trading_date, day),
        "volume": int(last.volume) if traded else 0,
        "halted_since": halted,
        "change_pct": _change_pct(last.close, previous, traded),
        "rsi_14": _number(last.rsi_14, 4),
        **(dict.fromkeys(QUOTED) if prediction is None else quoted(prediction)),
        "reason": scores.reason(last.symbol, last.trading_date),
    }


def signal_order(quote: Mapping[str, object]) -> tuple[float, float, float, str]:
    """The sort key of scored quotes (with `symbol`) best first, as the model ranks them:
    the Score, then between equal Scores the ranking's keys (models/metrics.MODEL_ORDER: the
    expected excess, `held_edge`, then the raw score), the symbol last. The day's analysis
    and the Quant Briefing list their top signals in this order."""
    reasons = quote.get("reasons")
    raw = reasons.get("raw_score") if isinstance(reasons, Mapping) else None
    edge = quote.get("held_edge")
    return (
        -float(quote["score"]),  # type: ignore[arg-type]
        -float(edge) if isinstance(edge, int | float) else math.inf,
        -float(raw) if isinstance(raw, int | float) else math.inf,
        str(quote["symbol"]),
    )


def latest_market(
    conn: Connection, calendar: TradingCalendar, closed_through: date, requested: date | None = None
) -> dict[str, Quote]:
    """Ticker -> the day's close, volume, change and indicators with the prediction, or
    null prediction fields and `reason` when the day is not scored for that ticker; the
    tickers listed on the day only (a delisted one's last bar read "latest" for 60 days,
    counted in breadth and the index).

    The prediction fields come from one record, the live one or else the validation one,
    and `reason` says which (`day_scores`). A name the exchange has halted on the day is
    quoted as any other (its last close, its prediction), with `halted_since` the date of
    the HALT notice it is under (portfolio.market `halts_on`, the rule a trade is refused
    by; every name's in one query), null while it trades."""
    day = market_day(conn, calendar, requested, closed_through)
    splits = stored_splits(conn, day)
    bars = _with_rsi(_bars(conn, day - timedelta(days=INDICATOR_WARMUP_DAYS), day), splits)
    scores = day_scores(conn, day)
    if bars.empty:
        return {}
    # each symbol's last bar with the close before it, read off arrays rather than a group per symbol
    last = bars.groupby("symbol", sort=True).tail(1)
    listed = {r["symbol"] for r in instruments(conn, on=day)}  # a delisted name is not the day's market
    halts = halts_on(conn, day)
    on_day = followed(splits, day)  # a renamed company's earlier splits are its series'
    quotes = {
        bar.symbol: _quote(
            bar,
            None if pd.isna(bar.previous_close) else bar.previous_close,
            scores,
            halts.get(bar.symbol),
            on_day,
        )
        for bar in last.itertuples(index=False)
        if bar.symbol in listed
    }
    return {symbol: quote for symbol, quote in quotes.items() if quote is not None}


def known_symbol(conn: Connection, symbol: str) -> str:
    rows = current_rows(conn, tables.instruments, where=[tables.instruments.c.symbol == symbol.upper()])
    if not rows:
        raise NotFoundError(f"no instrument '{symbol}'")
    return rows[0]["symbol"]


def history(
    conn: Connection, symbol: str, start: date | None, end: date | None, limit: int, after: date | None = None
) -> History:
    """Bars oldest first within [start, end], after the cursor date, at most `limit`."""
    symbol = known_symbol(conn, symbol)
    return histories(conn, [symbol], start, end, limit, after)[symbol]


def histories(
    conn: Connection, symbols: list[str], start: date | None, end: date | None, limit: int, after: date | None = None
) -> dict[str, History]:
    """`history` of many symbols with three SQL statements whatever their number."""
    if start and end and start > end:
        raise InvalidInputError(f"start {start.isoformat()} is after end {end.isoformat()}")
    first = start or EARLIEST
    if after is not None:
        first = max(first, after + timedelta(days=1))
    return _pages(conn, {s: first for s in symbols}, end, limit)


def recent_histories(conn: Connection, symbols: list[str], count: int, end: date | None = None) -> dict[str, History]:
    """The last `count` bars of each symbol up to `end` (default: the latest), oldest first:
    each is `history` from the date of the symbol's count-th last bar, so it equals that
    page of the REST history. Four SQL statements whatever the number of symbols."""
    c = tables.eod_prices.c
    where = [c.symbol.in_(symbols)] + ([c.trading_date <= end] if end else [])
    dates = select(c.symbol, c.trading_date).where(*where).distinct().subquery()
    ranked = select(
        dates.c.symbol,
        dates.c.trading_date,
        func.row_number().over(partition_by=dates.c.symbol, order_by=dates.c.trading_date.desc()).label("n"),
    ).subquery()
    firsts = dict(conn.execute(select(ranked.c.symbol, ranked.c.trading_date).where(ranked.c.n == count)).all())
    return _pages(conn, {s: firsts.get(s, EARLIEST) for s in symbols}, end, count)


def _pages(conn: Connection, firsts: dict[str, date], end: date | None, limit: int) -> dict[str, History]:
    """Per symbol: at most `limit` bars from its first date up to `end`, with indicators
    warmed up on the bars before, and the cursor when more bars follow."""
    last = latest_priced_day(conn, end) if end else latest_priced_day(conn)
    if last is None or not firsts:
        return {s: {"symbol": s, "items": [], "next_cursor": None} for s in firsts}
    c = tables.eod_prices.c
    in_range = (
        or_(*[and_(c.symbol == s, c.trading_date >= first) for s, first in firsts.items()])
        if len(set(firsts.values())) > 1
        else c.trading_date >= next(iter(firsts.values()))
    )
    dates = (
        select(c.symbol, c.trading_date)
        .where(c.symbol.in_(list(firsts)), in_range, c.trading_date <= last)
        .distinct()
        .subquery()
    )
    ranked = select(
        dates.c.symbol,
        dates.c.trading_date,
        func.row_number().over(partition_by=dates.c.symbol, order_by=dates.c.trading_date).label("n"),
    ).subquery()
    beyond = dict(conn.execute(select(ranked.c.symbol, ranked.c.trading_date).where(ranked.c.n == limit + 1)).all())
    page_ends = {s: beyond[s] - timedelta(days=1) if s in beyond else last for s in firsts}
    earliest = max(min(firsts.values()) - timedelta(days=INDICATOR_WARMUP_DAYS), EARLIEST)
    bars = _bars(conn, earliest, max(page_ends.values()), list(firsts))
    splits = stored_splits(conn, max(page_ends.values()), list(firsts))
    by_symbol = dict(iter(bars.groupby("symbol", sort=False))) if not bars.empty else {}
    result: dict[str, History] = {}
    for symbol, first in firsts.items():
        rows = by_symbol.get(symbol)
        items: list[Bar] = []
        if rows is not None:
            # Each symbol warms up from its own first date, exactly as a one-symbol request would.
            warm_from = max(first - timedelta(days=INDICATOR_WARMUP_DAYS), EARLIEST)
            rows = rows[(rows["trading_date"] >= warm_from) & (rows["trading_date"] <= page_ends[symbol])]
            rows = rows.reset_index(drop=True)
            if len(rows):
                enriched = with_indicators(rows, splits)
                items = _items(enriched[(enriched["trading_date"] >= first).to_numpy(bool)])
        result[symbol] = {
            "symbol": symbol,
            "items": items,
            "next_cursor": items[-1]["trading_date"] if symbol in beyond and items else None,
        }
    return result


def _items(page: pd.DataFrame) -> list[Bar]:
    # Column arrays rather than iterrows: a 60-instrument GraphQL screen builds 1,200 bars.
    numeric = [c for c in PRICE_COLUMNS if c not in ("trading_date", "volume")] + list(INDICATORS)
    values = page[numeric].to_numpy(dtype=float)
    return [
        {
            "trading_date": day,
            "volume": int(volume),
            **{name: None if np.isnan(v) else round(float(v), 6) for name, v in zip(numeric, row)},
        }
        for day, volume, row in zip(page["trading_date"], page["volume"], values)
    ]


def _zscore(series: pd.Series) -> ZScore:
    clean = series.dropna()
    if len(clean) < 21:
        return {
            "value": _number(clean.iloc[-1]) if len(clean) else None,
            "mean": None,
            "std": None,
            "z": None,
            "observations": int(len(clean)),
        }
    value, history_part = clean.iloc[-1], clean.iloc[:-1]
    std = history_part.std(ddof=1)
    return {
        "value": _number(value),
        "mean": _number(history_part.mean()),
        "std": _number(std),
        "z": _number((value - history_part.mean()) / std, 4) if std > 0 else None,
        "observations": int(len(clean)),
    }


def symbol_statistics(conn: Connection, symbol: str) -> SymbolStatistics:
    """Variance of daily log returns over several windows, and the latest values of the
    day's statistics as z-scores against the instrument's own earlier history."""
    symbol = known_symbol(conn, symbol)
    bars = _bars(conn, date(1900, 1, 1), date(9999, 12, 31), [symbol])
    if bars.empty:
        raise NotReadyError(f"{symbol} has no prices yet")
    splits = stored_splits(conn, symbols=[symbol])
    return {**statistics(symbol, bars, with_indicators(bars, splits), splits), **latest_reasons(conn, symbol)}


def latest_reasons(conn: Connection, symbol: str) -> LatestReasons:
    """`prediction_date` and `reasons` of the symbol's latest served live prediction (the
    three largest contributions to its raw score and the base value, models/reasons.py);
    nulls when the live record has none for it (or it was stored before migration 0015).
    Its latest day among the days its row is of the served model (`served_models`): a
    retrain that re-scored a later day without it leaves it the earlier served one."""
    c = tables.predictions.c
    days = select(c.trading_date).distinct().where(c.symbol == symbol)
    served_day = tuple_(c.trading_date, c.model_id).in_(served_models(tables.predictions, days))
    day = conn.execute(select(func.max(c.trading_date)).where(c.symbol == symbol, served_day)).scalar()
    if day is None:
        return {"prediction_date": None, "reasons": None}
    # The served model of a day is decided over all its rows (served_predictions), then the symbol is picked.
    served = served_predictions(current_rows(conn, tables.predictions, where=[c.trading_date == day])).get(day, {})
    prediction = ServedPrediction.from_row(served[symbol]) if symbol in served else None
    if prediction is None:
        return {"prediction_date": None, "reasons": None}
    return {"prediction_date": prediction.trading_date, "reasons": prediction.reasons}


def statistics(symbol: str, bars: pd.DataFrame, enriched: pd.DataFrame, splits: Sequence[Split]) -> Statistics:
    """`symbol_statistics` of one symbol's bars (oldest first) and their indicators, computed
    here or read from the stored read model (views/bars.py). The returns, the volumes and
    the ranges are read with the bars on the last bar's share count (`on_count` through
    its day, `splits` the symbol's stored ones): a split is no return, nor a volume jump."""
    as_of = bars["trading_date"].iloc[-1]
    bars = on_count(bars, splits, as_of)
    day_range = 100 * (bars["high"].astype(float) - bars["low"].astype(float)) / bars["close"].astype(float)  # percent
    normalised = {
        "return_1d": _zscore(bars["close"].astype(float).pct_change()),
        "volume": _zscore(bars["volume"].astype(float)),
        "day_range_pct": _zscore(day_range),
        "spread_pct": _zscore(enriched["spread_pct"]),
        "rsi_14": _zscore(enriched["rsi_14"]),
        "volatility_20": _zscore(enriched["volatility_20"]),
    }
    return {
        "symbol": symbol,
        "as_of": as_of,
        "observations": int(len(bars)),
        "variance": _variances(bars),
        "normalised": normalised,
    }


def _variances(bars: pd.DataFrame) -> dict[str, WindowVariance]:
    """`WindowVariance` of each of VARIANCE_WINDOWS over the last returns of `bars` (one
    symbol's, oldest first, on one share count); null where the window is longer than the
    history or holds no return of a traded day."""
    log_returns = np.log(bars["close"].astype(float)).diff().iloc[1:]
    traded = (bars["volume"].astype(float) > 0).iloc[1:]
    variance: dict[str, WindowVariance] = {}
    for window in VARIANCE_WINDOWS:
        part, count = log_returns.iloc[-window:], int(traded.iloc[-window:].sum())
        var = float(part.var(ddof=1)) if len(part) == window and count else None
        variance[f"{window}d"] = {
            "variance": _number(var, 10),
            "annualised_volatility": _number(np.sqrt(var * TRADING_DAYS_PER_YEAR)) if var is not None else None,
            "observations": int(len(part)),
            "traded_returns": count,
        }
    return variance
