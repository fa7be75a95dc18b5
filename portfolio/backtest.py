"""Replay the AI book over history: decisions after each close, fills in the next session
through the one cost model, statistics beside two benchmarks.

Input: out-of-sample predictions per instrument and day (the walk-forward's output on the
product's label, so no day is scored by a model that saw it) with the market columns. Each
day:

1. the orders decided the session before fill in today's session (`fill_orders`: the ask
   or the bid, else the close plus or minus half the estimated spread; square-root
   impact; at most 25% of today's volume; fees); what cannot fill lapses;
2. the day's decisions (`models.decisions.decide`: Score, expected excess, Action) become
   signals, and the same `plan_book` the AI portfolio runs (portfolio/book.py) plans the
   next session's orders, rebalancing every `mandate.rebalance_every` days.

Fill modes (`fills`): "costed" (the product's: next session, touch, impact, fees), "gross"
(the same decisions filled at the next session's close, whole and free: what the book
earns before costs) and "same_close" (filled at the decision's own close for free: what a
backtest that ignores when an order can fill would claim).

Figures (`summarise`): the track-record statistics of portfolio/track_record.py overall
(and, with `by_year`, per calendar year) beside the benchmarks given, average exposure
and fills, the costs paid by part, orders, lapsed orders, days trapped and how long a name
was held (`holding`: `holding_periods`, in sessions, from the fills).

Null books (portfolio/nulls.py) replay the same days with the ranking replaced: they
re-decide `decided_frame`'s rows and read them back with `with_signals`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from market.costs import FeeSchedule
from market.labels import with_labels
from market.liquidity import GATE_INPUTS
from models.dataset import build_panel
from models.decisions import BOOK_NAMES, HORIZON, decide
from models.walkforward import WalkForwardConfig, walk_forward
from portfolio.book import BookDay, Mandate, Outlook, plan_book
from portfolio.delisting import READINGS, Absence, BookView, DelistingRule, absence, book_view
from portfolio.executor import Execution, Order, Signal, fill_orders, split_adjusted
from portfolio.ledger import split_quantity
from portfolio.rails import TRAPPED, MarketDay, exit_state
from portfolio.track_record import COST_PARTS, TrackRecord, breakdown, daily_returns, equal_weight_liquid, statistics
from portfolio.track_record import by_year as yearly
from store.splits import Split, factor_between, followed

FILL_DESCRIPTIONS = {
    "costed": "next session, cost model",
    "gross": "next session's close, cost-free",
    "same_close": "same close, cost-free",
}


@dataclass
class BacktestResult:
    fills: str
    curve: pd.DataFrame  # date, cash, market_value, equity, liquid_equity, traded, fees, spread, impact
    trades: pd.DataFrame = field(default_factory=pd.DataFrame)  # every fill: decided_on, date, symbol, side, reason...
    traded_value: float = 0.0
    orders: int = 0
    lapsed: int = 0
    days_trapped: int = 0
    delisting: DelistingRule = DelistingRule()  # the rule the replay applied (portfolio/delisting.py)
    # Each delisting: symbol, quantity, last_row, delisted_on, last_close, days (position-days),
    # value_nothing and value_last_close on its last day, returned_on (None: delisted to the end).
    delistings: list[dict] = field(default_factory=list)
    starting_cash: float = 10_000_000
    _figures: dict | None = field(default=None, repr=False, compare=False)

    @property
    def figures(self) -> dict:
        """The replay's figures (`summarise` against no benchmark), computed when first read:
        a comparison that summarises its books against benchmarks (the null books,
        portfolio/nulls.py) never pays for these."""
        if self._figures is None:
            self._figures = summarise(self, self.starting_cash) if not self.curve.empty else {"days": 0}
        return self._figures

    @figures.setter
    def figures(self, figures: dict) -> None:
        """Figures summarised by the caller (against its benchmarks, by year)."""
        self._figures = figures


def _known(value):  # noqa: ANN001, ANN202
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _market_day(row) -> MarketDay:  # noqa: ANN001 - a namedtuple row of the panel
    return MarketDay(
        row.symbol,
        float(row.close),
        int(row.volume),
        _known(row.adv_20),
        _known(getattr(row, "bid", None)),
        _known(getattr(row, "ask", None)),
        _known(getattr(row, "high", None)),
        _known(getattr(row, "low", None)),
        _known(getattr(row, "volatility_20", None)),
        _known(getattr(row, "spread_estimate", None)),
        str(getattr(row, "spread_estimate_source", "estimate")),
    )


FILL_MODES = ("costed", "gross", "same_close")


def out_of_sample_predictions(
    prices: pd.DataFrame,
    min_train_days: int = 250,
    first_test_date=None,  # noqa: ANN001
    horizon: int = HORIZON,
    label: str = "excess",
) -> pd.DataFrame:
    """Walk-forward predictions (empirical layer 1 over the same horizon) for a price history."""
    panel = build_panel(prices, horizon=horizon, label=label)
    config = WalkForwardConfig(min_train_days=min_train_days, first_test_date=first_test_date, horizon=horizon + 1)
    return walk_forward(panel, config).predictions


# What `equal_weight_liquid` reads of a row: its close and the entry gates' inputs.
BENCHMARK_COLUMNS = ("symbol", "date", *GATE_INPUTS, "ordinary")


def span_benchmark(predictions: pd.DataFrame, prices: pd.DataFrame) -> pd.Series:
    """The equal-weighted liquid universe's daily returns over the days of `predictions`
    (portfolio/track_record.py `equal_weight_liquid`) by the live record's rule: each
    month's members are the names that passed the entry gates on the last session before
    it, measured from its close. The span's first month starts before the span: its
    sessions before the span (from the last one before the month) are read from `prices`
    (every instrument, the history the predictions were made from), with the gate inputs
    the panel gives each row (ADV_20 and the spread estimate over the name's own earlier
    rows, market/labels.py `with_labels`), as views/track_record.py reads the 60 days
    before a record. Each span day's return, the first's from the close before it; 0 on a
    day of a month with no session before it in `prices`."""
    span = sorted(predictions["date"].unique())
    if not span:
        return pd.Series(dtype=float)
    start = pd.Timestamp(span[0])
    earlier = prices[pd.to_datetime(prices["date"]) < start]
    dates = pd.to_datetime(earlier["date"])
    before = dates[dates < start.replace(day=1)]
    if len(before):  # the month's first session's members are chosen on `before.max()`'s gates
        earlier = with_labels(earlier, 1, "next_day")
        earlier = earlier[pd.to_datetime(earlier["date"]) >= before.max()]
        lead = earlier[[c for c in BENCHMARK_COLUMNS if c in earlier]]
        predictions = pd.concat([lead, predictions[[c for c in BENCHMARK_COLUMNS if c in predictions]]])
    return equal_weight_liquid(predictions).reindex(span).fillna(0.0)


def signals_of(decided: pd.DataFrame) -> dict[str, Signal]:
    return {signal.symbol: signal for _, signal in _signals(decided)}


def _signals(decided: pd.DataFrame) -> Iterator[tuple[Any, Signal]]:
    """(the row's date, or None without a `date` column; its Signal) for each row of
    `decide`'s output, read column by column (a row at a time through pandas costs a
    null-book replay more than its decisions)."""
    n = len(decided)

    def column(name: str, default: object = None) -> list:
        return decided[name].tolist() if name in decided else [default] * n

    rows = zip(
        column("date"),
        *(column(c) for c in SIGNAL_COLUMNS[:-1]),
        column("ordinary", True),
        strict=True,
    )
    for day, symbol, score, action, tercile, weight, predicted, held, round_trip, reason, ordinary in rows:
        signal = Signal(
            symbol,
            float(score),
            action,
            tercile,
            float(weight),
            float(predicted),
            float(held),
            float(round_trip),
            reason,
            ordinary=bool(ordinary),
        )
        yield day, signal


@dataclass(frozen=True)
class PreparedDay:
    """One day's market and decisions: what every book replayed over the same predictions
    and fee rate reads (the decisions do not depend on what a book holds)."""

    day: date
    market: dict[str, MarketDay]
    signals: dict[str, Signal]
    # The signal's persistence known on the day (models.metrics.Persistence.means_known_by:
    # the mean rank IC per window after the fill); None before any is known. The book
    # weighs its trades over its mandate's hold with it (portfolio/book.py `Outlook`).
    persistence: dict[str, float | None] | None = None
    # The date of the last row of each name carried without one on the day (its close and
    # no trades): what the delisting rule counts from (portfolio/delisting.py).
    last_rows: dict[str, date] = field(default_factory=dict)
    # The splits with an ex-date after the day before and on or before this one, where each
    # day's market is on its own share count (the null record's replay of stored bars,
    # views/null_record.py): a replay puts what it holds and has pending on this day's
    # count (`_Replay.on_count`). Empty where the prices are split-adjusted (`prepare_days`).
    splits: tuple[Split, ...] = ()
    # The market's sessions after the day before and on or before this one (the first day: every
    # one up to it), what the delisting rule counts a gap in (portfolio/delisting.py `absence`),
    # where the days are not every session (the null record's replay of the AI book's executed
    # days, views/null_record.py); empty: the day alone is one (`prepare_days`: every session).
    sessions: tuple[date, ...] = ()


def decided_frame(
    predictions: pd.DataFrame, fee_rate: float, horizon: int = HORIZON, book_names: int = BOOK_NAMES
) -> pd.DataFrame:
    """`decide` over every day of `predictions`, sorted by date and symbol (index 0..n-1):
    the rows `prepare_days` groups into days, and what a null book re-assigns
    (portfolio/nulls.py)."""
    predictions = predictions.sort_values(["date", "symbol"])
    predictions.attrs = {}  # a loader's notes: pandas deep-copies attrs into every derived frame
    return decide(predictions.reset_index(drop=True), fee_rate=fee_rate, horizon=horizon, book_names=book_names)


SIGNAL_COLUMNS = (
    "symbol",
    "score",
    "action",
    "tercile",
    "weight",
    "predicted_return",
    "held_edge",
    "round_trip_cost",
    "reason",
    "ordinary",
)


def with_signals(days: list[PreparedDay], decided: pd.DataFrame) -> list[PreparedDay]:
    """`days` with each day's signals read from `decided` (rows of the same days decided
    again, e.g. on a null's ranking): the same market, other decisions; a day without
    rows in `decided` has no signals."""
    signals: dict[date, dict[str, Signal]] = {}
    for day, signal in _signals(decided):
        signals.setdefault(day, {})[signal.symbol] = signal
    return [replace(d, signals=signals.get(d.day, {})) for d in days]


def prepare_days(
    predictions: pd.DataFrame,
    fee_rate: float,
    horizon: int = HORIZON,
    book_names: int = BOOK_NAMES,
    persistence: dict[date, dict[str, float | None]] | None = None,
) -> list[PreparedDay]:
    """The day-by-day market (a name not priced on a day carries its last close with no
    trades, and the date of that last row) and decisions (LONG: the day's `book_names`
    best), in date order, each with the signal's `persistence` known on it
    (`persistence_by_day`; None: none known)."""
    known = persistence or {}
    decided = decided_frame(predictions, fee_rate, horizon, book_names)
    groups = list(decided.groupby("date", sort=True))
    priced = ((day, {r.symbol: _market_day(r) for r in frame.itertuples(index=False)}) for day, frame in groups)
    return [
        PreparedDay(day, market, signals_of(frame), known.get(day), last_rows)
        for (day, frame), (market, last_rows) in zip(groups, carried_forward(priced), strict=True)
    ]


def carried_forward(
    priced: Iterable[tuple[date, dict[str, MarketDay]]], splits: Sequence[Split] = ()
) -> Iterator[tuple[dict[str, MarketDay], dict[str, date]]]:
    """Each day's market of `priced` (days in date order, each with the names priced on it)
    with every name priced on an earlier day and not on this one carried at its last close
    without a row (TRAPPED alone: portfolio/rails.py `exit_state`; on the day's share
    count: divided by `factor_between` the `splits` since its last row; none for prices
    already split-adjusted), and the date of each carried name's last row: what the
    delisting rule counts from (portfolio/delisting.py). A day a market gives for a name
    from an earlier session (`MarketDay.dated` before the day: the store's market days carry
    a name without a row for 60 calendar days, portfolio/market.py) is such a carry too,
    from that session, so the gap counts from the name's last row, as the live book's does
    (`stored_absences`), not from the last day a market still showed it. The one carry of
    the backtest's days (`prepare_days`) and the null record's replay (views/null_record.py
    `replay_of`)."""
    last_seen: dict[str, MarketDay] = {}
    last_row: dict[str, date] = {}
    for day, today in priced:
        market, carried = dict(today), {}
        for symbol, seen in today.items():
            if seen.dated is not None and seen.dated < day:  # the market's stale day: no row on this one
                market[symbol], carried[symbol] = replace(seen, without_row=True), seen.dated
                # kept on its last row's count, as a row is
                last_seen[symbol] = replace(seen, close=seen.close * factor_between(splits, symbol, seen.dated, day))
                last_row[symbol] = seen.dated
            else:
                last_seen[symbol], last_row[symbol] = seen, day
        for symbol, seen in last_seen.items():
            if symbol not in today:
                close = seen.close / factor_between(splits, symbol, last_row[symbol], day)
                market[symbol] = MarketDay(symbol, close, 0, seen.adv_20, without_row=True)
                carried[symbol] = last_row[symbol]
        yield market, carried


def smoothed(predictions: pd.DataFrame, sessions: int, column: str = "expected_return") -> pd.DataFrame:
    """`predictions` with `column` (the expected excess the book ranks by) replaced by its
    trailing mean over each symbol's last `sessions` rows, that day's included (point in
    time: only that day and earlier rows; the mean of the known values among them, so a
    name's first rows average what there is). A row without a value keeps none: smoothing
    never gives a name an expected excess the model did not give it that day, so the
    universe each day (decide's pools, the null books' too) is the model's. The other
    outputs (P(up), the raw score, the predicted return) are left as they are: the raw
    scores of models retrained every block are on no common scale, while the expected
    excess is calibrated to the label in return units every block, so its mean is the
    one average of the model's forecasts that means the same thing from block to block
    (Grinold and Kahn: averaging a signal over time raises its persistence and lowers
    the turnover it asks for). `sessions` 1: the predictions as they are."""
    if sessions < 1:
        raise ValueError(f"sessions must be 1 or more, not {sessions}")
    if sessions == 1 or predictions.empty:
        return predictions
    order = np.lexsort((pd.to_datetime(predictions["date"]).to_numpy(), predictions["symbol"].to_numpy()))
    values = predictions[column].to_numpy(float)[order]
    symbols = predictions["symbol"].to_numpy()[order]
    means = pd.Series(values).groupby(symbols).transform(lambda s: s.rolling(sessions, min_periods=1).mean())
    rolled = np.where(np.isnan(values), np.nan, means.to_numpy(float))
    out = predictions.copy()
    out[column] = rolled[np.argsort(order)]
    return out


def persistence_by_day(predictions: pd.DataFrame, prices: pd.DataFrame) -> dict[date, dict[str, float | None]]:
    """The out-of-sample expected excess's persistence on the book's universe (ordinary
    shares that pass the entry gates), as known on each day of `predictions`: the mean rank
    IC per window after the fill over the days whose windows had closed by then
    (models.metrics `persistence`, `means_known_by`), from `prices` (every instrument)."""
    from market.liquidity import passes_entry_gates
    from models.metrics import persistence, window_excess

    liquid = passes_entry_gates(predictions).to_numpy(bool).copy()
    if "ordinary" in predictions:
        liquid &= predictions["ordinary"].fillna(True).astype(bool).to_numpy()
    measured = persistence(predictions[liquid], window_excess(prices))
    return measured.means_known_by(sorted(predictions["date"].unique()))


def run_backtest(
    predictions: pd.DataFrame | list[PreparedDay],
    starting_cash: float = 10_000_000,
    fees: FeeSchedule | None = None,
    fills: str = "costed",
    mandate: Mandate | None = None,
    horizon: int = HORIZON,
    delisting: DelistingRule | None = None,
) -> BacktestResult:
    """The book replayed under one of FILL_MODES, over `predictions` or the days
    `prepare_days` made of them at the same fee rate and number of names (a grid of books
    reuses them). A held name without a row for `delisting.after_sessions` sessions is
    delisted (portfolio/delisting.py; default: DelistingRule()): out of the book's names,
    valued by the rule's reading, listed in `delistings`; the sessions counted are the days'
    (a PreparedDay's `sessions`, else the day itself). On a day with `splits` (a
    PreparedDay's) the holdings and pending orders go onto its share count first
    (`_Replay.on_count`)."""
    if fills not in FILL_MODES:
        raise ValueError(f"fills must be one of {FILL_MODES}, not {fills!r}")
    fees, mandate = fees or FeeSchedule(), mandate or Mandate()
    if isinstance(predictions, list):
        days = predictions
    else:
        days = prepare_days(predictions, float(fees.rate), horizon, mandate.names)
    result = BacktestResult(
        fills=fills, curve=pd.DataFrame(), delisting=delisting or DelistingRule(), starting_cash=starting_cash
    )
    if not days:
        return result
    dates, sessions = [d.day for d in days], [s for d in days for s in (d.sessions or (d.day,))]
    replay = _Replay(days, fees, mandate, fills, result, Decimal(str(starting_cash)), dates, sessions=sessions)
    rows = [replay.day(number) for number in range(len(days))]
    result.curve = pd.DataFrame(rows)
    result.trades = pd.DataFrame(replay.trades)
    result.delistings = replay.delistings.closed(days[-1].day)
    return result


@dataclass
class _Replay:
    """The state `run_backtest` carries from day to day: cash, holdings, the orders pending
    for the next session, the fills so far and the delisting episodes."""

    days: list[PreparedDay]
    fees: FeeSchedule
    mandate: Mandate
    fills: str
    result: BacktestResult
    cash: Decimal
    dates: list[date] = field(default_factory=list)  # each day's date, by its number
    # the market's sessions the delisting rule counts (`_absences`, in date order: the days'
    # `sessions`); empty: the replay's days
    sessions: Sequence[date] = ()
    held: dict[str, int] = field(default_factory=dict)
    pending: list[Order] = field(default_factory=list)
    decided_on: date | None = None
    trades: list[dict] = field(default_factory=list)
    delistings: _Episodes = field(default_factory=lambda: _Episodes())

    def day(self, number: int) -> dict:
        """One day: the holdings and pending orders on its share count, the pending orders
        fill, the book plans on the names it holds (the delisted left out), and the day's
        curve row."""
        prepared, fills, result = self.days[number], self.fills, self.result
        day, today = prepared.day, prepared.market
        if number and prepared.splits:
            self.on_count(self.days[number - 1].day, day, prepared.splits)
        filled_before = len(self.trades)
        spent = {part: 0.0 for part in COST_PARTS}
        traded = 0.0
        if fills != "same_close" and self.pending:
            run = fill_orders(self.pending, today, self.cash, self.fees, fills == "costed", str(self.decided_on))
            self.cash, traded = _apply(run, self.held, day, result, self.trades, spent, traded)
        view = book_view(self.held, self._absences(number), result.delisting, day)
        rebalance = number % self.mandate.rebalance_every == 0
        outlook = Outlook.of(prepared.persistence, self.mandate.hold)
        plan = plan_book(
            BookDay(self.cash, view.names, prepared.signals, today, self.fees),
            self.mandate,
            rebalance,
            fills == "costed",
            outlook,
        )
        if fills == "same_close":
            run = fill_orders(plan.orders, today, self.cash, self.fees, False, str(day))
            self.cash, traded = _apply(run, self.held, day, result, self.trades, spent, traded)
            view = book_view(self.held, self._absences(number), result.delisting, day)
        else:
            self.pending, self.decided_on = plan.orders, day
        result.days_trapped += sum(1 for s, q in view.names.items() if TRAPPED in exit_state(today[s], q).flags)
        self.delistings.see(view, day)
        valuation = view.valuation(float(self.cash), today)
        return {
            "date": day,
            "cash": float(self.cash),
            "market_value": valuation.market_value,
            "equity": valuation.equity,
            "liquid_equity": valuation.liquid_equity,
            "traded": traded,
            "fills": len(self.trades) - filled_before,
            "names": len(view.names),
            **_concentration(view.names, today, valuation.equity),
            **spent,
            "delisted": len(view.delisted),
            **{f"delisted_{reading}": view.value(reading) for reading in READINGS},
        }

    def on_count(self, since: date, day: date, splits: Sequence[Split]) -> None:
        """The holdings and the orders pending since `since` on `day`'s share count, by the
        `splits` with an ex-date after `since` and on or before `day` (store/splits.py
        `factor_between`), as the live book has them: the whole shares the ledger keeps
        (`ledger.split_quantity`) and its pending orders adjusted (`split_adjusted`). A
        rename carries the holding on under the new symbol first, as the ledger does
        (`ledger._apply_rename`): the company's series goes on under it (`store.splits.joined`)."""
        for rename in (s for s in splits if s.new_symbol is not None and since < s.ex_date <= day):
            if rename.symbol in self.held:
                moved = self.held.pop(rename.symbol)
                self.held[str(rename.new_symbol)] = self.held.get(str(rename.new_symbol), 0) + moved
        splits = followed(splits, day)  # a split named under the old symbol follows the holding
        for symbol in {s.symbol for s in splits if s.new_symbol is None} & self.held.keys():
            kept = split_quantity(self.held[symbol], factor_between(splits, symbol, since, day))
            if kept > 0:
                self.held[symbol] = kept
            else:
                del self.held[symbol]
        if self.pending:
            self.pending = split_adjusted(self.pending, splits, since.isoformat(), day)

    def _absences(self, number: int) -> dict[str, Absence]:
        """Each held name without a row on day `number`: its last row and the market's sessions
        since (`sessions`, else the replay's days: `delisting.absence`)."""
        prepared, rule, sessions = self.days[number], self.result.delisting, self.sessions or self.dates
        return {
            symbol: absence(rule, symbol, last_row, prepared.market[symbol].close, sessions, prepared.day)
            for symbol in self.held
            if (last_row := prepared.last_rows.get(symbol)) is not None
        }


@dataclass
class _Episodes:
    """Each time a held position was delisted: opened the first day it shows as delisted,
    closed when it has a row again (`returned_on`) or the replay ends."""

    open: dict[str, dict] = field(default_factory=dict)
    done: list[dict] = field(default_factory=list)

    def see(self, view: BookView, day: date) -> None:
        now = {d.symbol: d for d in view.delisted}
        for symbol in [s for s in self.open if s not in now]:
            self.done.append({**self.open.pop(symbol), "returned_on": day})
        for symbol, position in now.items():
            if symbol not in self.open:
                self.open[symbol] = {
                    "symbol": symbol,
                    "quantity": position.quantity,
                    "last_row": position.last_row,
                    "delisted_on": position.delisted_on,
                    "last_close": position.last_close,
                    "days": 0,
                }
            self.open[symbol].update(
                days=self.open[symbol]["days"] + 1,
                **{f"value_{reading}": round(position.value(reading), 2) for reading in READINGS},
            )

    def closed(self, last_day: date) -> list[dict]:
        """Every episode, those still open at `last_day` with `returned_on` None."""
        return sorted(
            [*self.done, *({**e, "returned_on": None} for e in self.open.values())],
            key=lambda e: (e["delisted_on"], e["symbol"]),
        )


def _concentration(held: dict[str, int], today: dict[str, MarketDay], equity: float) -> dict[str, float]:
    """The day's largest position, a share of equity, and the sum of the squared position
    weights as shares of the invested value (a Herfindahl index: 1 / it is the book's
    effective number of names, which the cash beside them does not raise; 0 holding none)."""
    values = [q * today[s].close for s, q in held.items()]
    invested = sum(values)
    return {
        "largest_weight": max(values, default=0.0) / equity if equity > 0 else 0.0,
        "herfindahl": sum(v * v for v in values) / invested**2 if invested > 0 else 0.0,
    }


def _apply(
    run: Execution,
    held: dict[str, int],
    day: date,
    result: BacktestResult,
    trades: list,
    spent: dict,
    traded: float,
) -> tuple[Decimal, float]:
    for order in run.filled:
        held[order.symbol] = held.get(order.symbol, 0) + (order.quantity if order.side == "BUY" else -order.quantity)
        if held[order.symbol] <= 0:
            del held[order.symbol]
        costs = order.costs
        for part in COST_PARTS:
            spent[part] += float(getattr(costs, part))
        traded += float(order.gross)
        result.traded_value += float(order.gross)
        trades.append(
            {
                "decided_on": order.rationale.get("decided_on"),
                "date": day,
                "symbol": order.symbol,
                "side": order.side,
                "quantity": order.quantity,
                "price": float(order.price),
                "close": order.rationale.get("close"),
                "touch": order.rationale["fill"]["touch"],
                "reason": order.rationale.get("reason", ""),  # why the book traded (portfolio/book.py)
                **{part: float(getattr(costs, part)) for part in COST_PARTS},
            }
        )
    result.orders += len(run.filled)
    result.lapsed += len(run.lapsed)
    return run.cash, traded


def book_returns(curve: pd.DataFrame, starting_cash: float) -> pd.Series:
    """A replayed book's daily returns by date (`curve`: BacktestResult.curve); the first
    day's is against the starting cash."""
    equity = pd.Series([starting_cash, *curve["equity"]], index=range(len(curve) + 1), dtype=float)
    returns = daily_returns(equity)
    returns.index = list(curve["date"])
    return returns


def summarise(
    result: BacktestResult, starting_cash: float, benchmarks: dict[str, pd.Series] | None = None, by_year: bool = False
) -> dict:
    curve = result.curve
    if curve.empty:
        return {"days": 0}
    returns = book_returns(curve, starting_cash)
    costs = breakdown({part: float(curve[part].sum()) for part in COST_PARTS})
    indexed = curve.set_index("date")
    exposure = indexed["market_value"] / indexed["equity"]
    record = statistics(
        returns,
        benchmarks,
        traded_value=result.traded_value,
        mean_equity=float(curve["equity"].mean()),
        costs=costs,
        exposure=exposure,
        fill_count=result.orders,
    )
    figures = research_figures(record)
    figures.update(
        {
            "fill_mode": FILL_DESCRIPTIONS[result.fills],
            "orders": result.orders,
            "lapsed_orders": result.lapsed,
            "days_trapped": result.days_trapped,
            "average_names": round(float(curve["names"].mean()), 2),
            "final_liquid_equity": round(float(curve["liquid_equity"].iloc[-1]), 2),
            "final_equity": round(float(curve["equity"].iloc[-1]), 2),
        }
    )
    figures["holding"] = asdict(holding_periods(result.trades, list(curve["date"])))
    figures["concentration"] = concentration(curve)
    figures["delisting"] = delisting_figures(result, starting_cash)
    if by_year:
        years = yearly(
            returns,
            benchmarks or {},
            indexed["traded"],
            indexed["equity"],
            indexed[list(COST_PARTS)],
            exposure,
            indexed["fills"],
        )
        figures["years"] = {year: research_figures(part) for year, part in years.items()}
        dates = pd.to_datetime(curve["date"])
        for year, part in curve.groupby(dates.dt.year):
            figures["years"].setdefault(str(year), {})["concentration"] = concentration(part)
    for name, series in (benchmarks or {}).items():
        _over_covered(figures, returns, name, series)
    return figures


def _over_covered(figures: dict, returns: pd.Series, name: str, benchmark: pd.Series) -> None:
    """The book against `benchmark` over the days it covers, where it is NaN on some of the
    book's days (an index without levels there: not a day of no change), overall and per
    year in `figures`; None where it covers fewer than two days."""
    aligned = benchmark.reindex(returns.index)
    if aligned.notna().all():
        return
    years = pd.to_datetime(pd.Index(returns.index)).year
    parts = [(figures, np.ones(len(returns), bool))]
    parts += [(figures["years"][str(y)], np.asarray(years == y)) for y in sorted(set(years)) if "years" in figures]
    for into, mask in parts:
        days = mask & aligned.notna().to_numpy()
        record = statistics(returns[days], {name: aligned[days]}) if days.sum() >= 2 else None
        into["benchmarks"][name] = asdict(record.benchmarks[name]) if record is not None else None


def delisting_figures(result: BacktestResult, starting_cash: float) -> dict:
    """What the delisting rule (portfolio/delisting.py) did over a replay: the rule, the
    delisted positions (each time a held name was delisted; `names`: how many names) and
    their position-days, and at the last session their value, the book's equity and its
    total return under each reading (`nothing` and `last_close`), the rule's own in the
    curve; `episodes`: each delisting with its dates (BacktestResult.delistings)."""
    curve, rule = result.curve, result.delisting
    if curve.empty or "delisted" not in curve:
        return {"rule": rule.describe(), "positions": 0, "position_days": 0}
    last = curve.iloc[-1]
    equity, own = float(last["equity"]), float(last[f"delisted_{rule.reading}"])
    ends = {r: equity - own + float(last[f"delisted_{r}"]) for r in READINGS}
    return {
        "rule": rule.describe(),
        "after_sessions": rule.after_sessions,
        "reading": rule.reading,
        "positions": len(result.delistings),
        "names": len({e["symbol"] for e in result.delistings}),
        "position_days": int(curve["delisted"].sum()),
        "held_at_end": int(last["delisted"]),
        "value_at_end": {r: round(float(last[f"delisted_{r}"]), 2) for r in READINGS},
        "final_equity": {r: round(v, 2) for r, v in ends.items()},
        "total_return": {r: round(v / starting_cash - 1, 4) for r, v in ends.items()},
        "episodes": result.delistings,
    }


def concentration(curve: pd.DataFrame) -> dict[str, float | None]:
    """The book's concentration over `curve`'s days: the mean and the largest of its
    largest position's weight (of equity), and the mean effective number of names
    (1 / Herfindahl of the invested value's weights, over the days it held any)."""
    if curve.empty or "largest_weight" not in curve:
        return {"largest_weight_mean": None, "largest_weight_max": None, "effective_names": None}
    invested = curve["herfindahl"] > 0
    return {
        "largest_weight_mean": round(float(curve["largest_weight"].mean()), 4),
        "largest_weight_max": round(float(curve["largest_weight"].max()), 4),
        "effective_names": round(float((1 / curve.loc[invested, "herfindahl"]).mean()), 2) if invested.any() else None,
    }


def research_figures(record: TrackRecord) -> dict:
    """A record as the backtest's research figures keep it: a plain dict, the costs as
    floats to the cent (the research tables and the benchmark's JSON print them so; the
    served track record keeps them Decimal)."""
    figures = record.as_dict()
    if figures["costs"] is not None:
        figures["costs"] = {k: None if v is None else float(v) for k, v in figures["costs"].items()}
    return figures


@dataclass(frozen=True)
class HoldingPeriods:
    """How long the book held a name, in sessions, from its fills: a holding runs from the
    fill that opened the position to the fill that closed it; one still open at the last
    session counts to it (so the mean of a book that never sells is a lower bound).
    `by_year`: the mean of the holdings that ended in each calendar year (still open: the
    last session's year)."""

    holdings: int
    closed: int
    mean_sessions: float | None
    median_sessions: float | None
    by_year: dict[str, float]


def holding_periods(trades: pd.DataFrame, sessions: list[date]) -> HoldingPeriods:
    """The HoldingPeriods of a replayed book's `trades` (BacktestResult.trades: date,
    symbol, side, quantity) over its `sessions` (the replayed days, in order)."""
    if trades.empty or not sessions:
        return HoldingPeriods(0, 0, None, None, {})
    position = {day: i for i, day in enumerate(sessions)}
    spans: list[tuple[int, int, bool]] = []  # (opened, ended, closed)
    held: dict[str, int] = {}
    opened: dict[str, int] = {}
    for t in trades.itertuples(index=False):
        before = held.get(t.symbol, 0)
        after = before + (t.quantity if t.side == "BUY" else -t.quantity)
        held[t.symbol] = after
        if before <= 0 < after:
            opened[t.symbol] = position[t.date]
        elif before > 0 >= after:
            spans.append((opened.pop(t.symbol), position[t.date], True))
    spans += [(start, len(sessions) - 1, False) for start in opened.values()]
    lengths = pd.Series([end - start for start, end, _ in spans], dtype=float)
    ended = pd.Series([sessions[end].year for _, end, _ in spans])
    return HoldingPeriods(
        holdings=len(spans),
        closed=sum(1 for *_, closed in spans if closed),
        mean_sessions=round(float(lengths.mean()), 1),
        median_sessions=round(float(lengths.median()), 1),
        by_year={str(year): round(float(part.mean()), 1) for year, part in lengths.groupby(ended)},
    )
