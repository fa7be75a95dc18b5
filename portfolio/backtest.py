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
from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal

import pandas as pd

from market.costs import FeeSchedule
from models.dataset import build_panel
from models.decisions import BOOK_NAMES, HORIZON, decide
from models.walkforward import WalkForwardConfig, walk_forward
from portfolio.book import Mandate, Outlook, plan_book
from portfolio.executor import Execution, Order, Signal, fill_orders
from portfolio.rails import TRAPPED, MarketDay, exit_state, value_positions
from portfolio.track_record import COST_PARTS, TrackRecord, breakdown, daily_returns, statistics
from portfolio.track_record import by_year as yearly

TRADING_DAYS_PER_YEAR = 250
FILL_DESCRIPTIONS = {
    "costed": "next session, cost model",
    "gross": "next session's close, cost-free",
    "same_close": "same close, cost-free",
}


@dataclass
class BacktestResult:
    fills: str
    curve: pd.DataFrame  # date, cash, market_value, equity, liquid_equity, traded, fees, spread, impact
    trades: pd.DataFrame = field(default_factory=pd.DataFrame)  # every fill: decided_on, date, symbol, side, ...
    traded_value: float = 0.0
    orders: int = 0
    lapsed: int = 0
    days_trapped: int = 0
    figures: dict = field(default_factory=dict)


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


def signals_of(decided: pd.DataFrame) -> dict[str, Signal]:
    return {r.symbol: _signal(r) for r in decided.itertuples(index=False)}


def _signal(r) -> Signal:  # noqa: ANN001 - a namedtuple row of `decide`'s output
    return Signal(
        r.symbol,
        float(r.score),
        r.action,
        r.tercile,
        float(r.weight),
        float(r.predicted_return),
        float(r.held_edge),
        float(r.round_trip_cost),
        r.reason,
        ordinary=bool(getattr(r, "ordinary", True)),
    )


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
    columns = ["date", *(c for c in SIGNAL_COLUMNS if c in decided)]
    signals: dict[date, dict[str, Signal]] = {}
    for r in decided[columns].itertuples(index=False):
        signals.setdefault(r.date, {})[r.symbol] = _signal(r)
    return [PreparedDay(d.day, d.market, signals.get(d.day, {}), d.persistence) for d in days]


def prepare_days(
    predictions: pd.DataFrame,
    fee_rate: float,
    horizon: int = HORIZON,
    book_names: int = BOOK_NAMES,
    persistence: dict[date, dict[str, float | None]] | None = None,
) -> list[PreparedDay]:
    """The day-by-day market (a name not priced on a day carries its last close with no
    trades) and decisions (LONG: the day's `book_names` best), in date order, each with the
    signal's `persistence` known on it (`persistence_by_day`; None: none known)."""
    known = persistence or {}
    decided = decided_frame(predictions, fee_rate, horizon, book_names)
    last_seen: dict[str, MarketDay] = {}
    out = []
    for day, frame in decided.groupby("date", sort=True):
        today = {r.symbol: _market_day(r) for r in frame.itertuples(index=False)}
        for symbol, seen in last_seen.items():
            if symbol not in today:
                today[symbol] = MarketDay(symbol, seen.close, 0, seen.adv_20)
        last_seen.update(today)
        out.append(PreparedDay(day, today, signals_of(frame), known.get(day)))
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
) -> BacktestResult:
    """The book replayed under one of FILL_MODES, over `predictions` or the days
    `prepare_days` made of them at the same fee rate and number of names (a grid of books
    reuses them)."""
    if fills not in FILL_MODES:
        raise ValueError(f"fills must be one of {FILL_MODES}, not {fills!r}")
    fees, mandate = fees or FeeSchedule(), mandate or Mandate()
    if isinstance(predictions, list):
        days = predictions
    else:
        days = prepare_days(predictions, float(fees.rate), horizon, mandate.names)
    result = BacktestResult(fills=fills, curve=pd.DataFrame())
    if not days:
        result.figures = {"days": 0}
        return result
    cash, held = Decimal(str(starting_cash)), {}
    pending: list[Order] = []
    decided_on = None
    rows, trades = [], []
    for number, prepared in enumerate(days):
        day, today = prepared.day, prepared.market
        filled_before = len(trades)
        spent = {part: 0.0 for part in COST_PARTS}
        traded = 0.0
        if fills != "same_close" and pending:
            run = fill_orders(pending, today, cash, fees, fills == "costed", str(decided_on))
            cash, traded = _apply(run, held, day, result, trades, spent, traded)
        rebalance = number % mandate.rebalance_every == 0
        outlook = Outlook.of(prepared.persistence, mandate.hold)
        plan = plan_book(cash, held, prepared.signals, today, fees, mandate, rebalance, fills == "costed", outlook)
        if fills == "same_close":
            run = fill_orders(plan.orders, today, cash, fees, False, str(day))
            cash, traded = _apply(run, held, day, result, trades, spent, traded)
        else:
            pending, decided_on = plan.orders, day
        result.days_trapped += sum(1 for s, q in held.items() if TRAPPED in exit_state(today[s], q).flags)
        valuation = value_positions(float(cash), held, today)
        rows.append(
            {
                "date": day,
                "cash": float(cash),
                "market_value": valuation.market_value,
                "equity": valuation.equity,
                "liquid_equity": valuation.liquid_equity,
                "traded": traded,
                "fills": len(trades) - filled_before,
                "names": len(held),
                **_concentration(held, today, valuation.equity),
                **spent,
            }
        )
    result.curve = pd.DataFrame(rows)
    result.trades = pd.DataFrame(trades)
    result.figures = summarise(result, starting_cash)
    return result


def _concentration(held: dict[str, int], today: dict[str, MarketDay], equity: float) -> dict[str, float]:
    """The day's largest position and the sum of the squared position weights (a
    Herfindahl index: 1 / it is the book's effective number of names), as shares of equity."""
    weights = [q * today[s].close / equity for s, q in held.items()] if equity > 0 else []
    return {"largest_weight": max(weights, default=0.0), "herfindahl": sum(w * w for w in weights)}


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
    return figures


def concentration(curve: pd.DataFrame) -> dict[str, float | None]:
    """The book's concentration over `curve`'s days: the mean and the largest of its
    largest position's weight, and the mean effective number of names (1 / Herfindahl,
    over the days it held any)."""
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
