"""Replay the autonomous executor over history: decisions at the close, fills in the next
session through the one cost model, statistics beside two benchmarks.

Input: out-of-sample predictions per instrument and day (the walk-forward's output, so
no day is scored by a model that saw it) with the market columns. Each day:

1. the orders decided the session before fill in today's session (`fill_orders`: the ask
   or the bid, else the close plus or minus half the spread proxy; square-root impact; at
   most 25% of today's volume; fees); what cannot fill lapses;
2. the day's decisions (`models.decisions.decide`, with the held-edge table as the day
   could know it, `edge_tables`) become signals, and the same `plan_day` the live
   executor uses plans tomorrow's orders.

`realistic=False` is the comparison switch: the same decisions filled at their own close,
whole and cost-free (what the backtest claimed before fills had to be possible). Without
rails, terciles rank every name, nothing is gated or capped by ADV, and exits sell the
whole position even on a day without trades (in the cost-free mode).

Figures (`summarise`): the track-record statistics of portfolio/track_record.py overall
(and, with `by_year`, per calendar year) beside the benchmarks given, the costs paid by
part, orders, lapsed orders, days trapped (position-days flagged TRAPPED), and the share
of would-be orders the rails blocked outright or cut in size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

import pandas as pd

from market.costs import FeeSchedule
from models.dataset import build_panel
from models.decisions import HORIZON, decide, edge_rows, edge_tables
from models.walkforward import WalkForwardConfig, walk_forward
from portfolio.executor import Execution, Order, Signal, fill_orders, plan_day
from portfolio.rails import TRAPPED, MarketDay, exit_state, value_positions
from portfolio.track_record import by_year as yearly
from portfolio.track_record import daily_returns, statistics

TRADING_DAYS_PER_YEAR = 250
COST_PARTS = ("fees", "spread", "impact")


@dataclass
class BacktestResult:
    rails: bool
    realistic: bool
    curve: pd.DataFrame  # date, cash, market_value, equity, liquid_equity, traded, fees, spread, impact
    trades: pd.DataFrame = field(default_factory=pd.DataFrame)  # every fill: decided_on, date, symbol, side, ...
    traded_value: float = 0.0
    orders: int = 0
    lapsed: int = 0
    days_trapped: int = 0
    would_trade: int = 0
    blocked: int = 0
    cut: int = 0
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
    )


def out_of_sample_predictions(prices: pd.DataFrame, min_train_days: int = 250, first_test_date=None) -> pd.DataFrame:  # noqa: ANN001
    """Walk-forward predictions (1-day horizon, empirical layer 1) for a price history."""
    panel = build_panel(prices, horizon=1)
    config = WalkForwardConfig(min_train_days=min_train_days, first_test_date=first_test_date)
    return walk_forward(panel, config).predictions


def run_backtest(
    predictions: pd.DataFrame,
    rails: bool = True,
    starting_cash: float = 10_000_000,
    fees: FeeSchedule | None = None,
    realistic: bool = True,
    horizon: int = HORIZON,
    edges: dict | None = None,
) -> BacktestResult:
    """`edges`: the held-edge tables by day (computed from `predictions` when None)."""
    fees = fees or FeeSchedule()
    result = BacktestResult(rails=rails, realistic=realistic, curve=pd.DataFrame())
    if predictions.empty:
        result.figures = {"days": 0}
        return result
    predictions = predictions.sort_values(["date", "symbol"])
    days = sorted(predictions["date"].unique())
    if edges is None:
        edges = edge_tables(edge_rows(predictions, horizon), days, horizon)
    cash, held = Decimal(str(starting_cash)), {}
    last_seen: dict[str, MarketDay] = {}
    pending: list[Order] = []
    decided_on = None
    rows, trades = [], []
    for day, frame in predictions.groupby("date", sort=True):
        today = {r.symbol: _market_day(r) for r in frame.itertuples(index=False)}
        for symbol, seen in last_seen.items():
            if symbol not in today:  # not priced today: no trades, valued at its last close
                today[symbol] = MarketDay(symbol, seen.close, 0, seen.adv_20)
        last_seen.update(today)
        spent = {part: 0.0 for part in COST_PARTS}
        traded = 0.0
        if realistic and pending:
            cash, traded = _apply(
                fill_orders(pending, today, cash, fees, True, str(decided_on)), held, day, result, trades, spent, traded
            )
        decided = decide(frame, edge=edges.get(day), fee_rate=float(fees.rate), liquidity_gates=rails)
        signals = {
            r.symbol: Signal(
                r.symbol,
                float(r.score),
                r.action,
                r.tercile,
                float(r.weight),
                float(r.predicted_return),
                float(r.held_edge),
                float(r.round_trip_cost),
                r.reason,
            )
            for r in decided.itertuples(index=False)
        }
        plan = plan_day(cash, held, signals, today, fees, rails=rails, realistic=realistic)
        result.would_trade += plan.would_trade
        result.blocked += plan.blocked_by_rails
        result.cut += plan.cut_by_rails
        if realistic:
            pending, decided_on = plan.orders, day
        else:
            cash, traded = _apply(
                fill_orders(plan.orders, today, cash, fees, False, str(day)), held, day, result, trades, spent, traded
            )
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
                **spent,
            }
        )
    result.curve = pd.DataFrame(rows)
    result.trades = pd.DataFrame(trades)
    result.figures = summarise(result, starting_cash)
    return result


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
            spent[part] += float(costs[part])
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
                **{part: float(costs[part]) for part in COST_PARTS},
            }
        )
    result.orders += len(run.filled)
    result.lapsed += len(run.lapsed)
    return run.cash, traded


def summarise(
    result: BacktestResult, starting_cash: float, benchmarks: dict[str, pd.Series] | None = None, by_year: bool = False
) -> dict:
    curve = result.curve
    if curve.empty:
        return {"days": 0}
    # The first day's return is against the starting cash.
    equity = pd.Series([starting_cash, *curve["equity"]], index=range(len(curve) + 1), dtype=float)
    returns = daily_returns(equity)
    returns.index = list(curve["date"])
    costs = {part: float(curve[part].sum()) for part in COST_PARTS}
    figures = statistics(
        returns, benchmarks, traded_value=result.traded_value, mean_equity=float(curve["equity"].mean()), costs=costs
    )
    figures.update(
        {
            "rails": result.rails,
            "fills": "next session, cost model" if result.realistic else "same close, cost-free",
            "orders": result.orders,
            "lapsed_orders": result.lapsed,
            "days_trapped": result.days_trapped,
            "would_be_orders": result.would_trade,
            "blocked_share": round(result.blocked / result.would_trade, 4) if result.would_trade else 0.0,
            "cut_share": round(result.cut / result.would_trade, 4) if result.would_trade else 0.0,
            "final_liquid_equity": round(float(curve["liquid_equity"].iloc[-1]), 2),
            "final_equity": round(float(curve["equity"].iloc[-1]), 2),
        }
    )
    if by_year:
        indexed = curve.set_index("date")
        figures["years"] = yearly(
            returns, benchmarks or {}, indexed["traded"], indexed["equity"], indexed[list(COST_PARTS)]
        )
    return figures
