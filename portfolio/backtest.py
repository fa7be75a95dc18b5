"""Replay the autonomous executor over history, with and without the liquidity rails.

Input: out-of-sample predictions per instrument and day (the walk-forward's output, so
no day is scored by a model that saw it) with the market columns. Each day the decisions
(`models.decisions.decide`) turn predictions into signals, and the same `plan_day` the
live executor uses plans the orders, which fill at the plan's prices in memory.

Without rails, terciles rank every name, nothing is gated or capped by ADV, and exits sell
the whole position at the close even on a day without a single trade: the fills a naive
backtest assumes and an illiquid market does not give. That gap is what the comparison
shows.

Figures: total and annualised return, maximum drawdown, annual turnover (value traded /
mean equity / years), days trapped (position-days flagged TRAPPED, with rails), and the
share of would-be orders the rails blocked outright or cut in size.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from models.dataset import build_panel
from models.decisions import decide
from models.walkforward import WalkForwardConfig, walk_forward
from portfolio.executor import FeeSchedule, Signal, plan_day
from portfolio.rails import TRAPPED, MarketDay, exit_state, value_positions

TRADING_DAYS_PER_YEAR = 250


@dataclass
class BacktestResult:
    rails: bool
    curve: pd.DataFrame  # date, cash, market_value, equity, liquid_equity
    traded_value: float = 0.0
    orders: int = 0
    days_trapped: int = 0
    would_trade: int = 0
    blocked: int = 0
    cut: int = 0
    figures: dict = field(default_factory=dict)


def _market_day(row) -> MarketDay:  # noqa: ANN001 - a namedtuple row of the panel
    def known(value):  # noqa: ANN001, ANN202
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)

    return MarketDay(row.symbol, float(row.close), int(row.volume), known(row.adv_20), known(getattr(row, "bid", None)),
                     known(getattr(row, "ask", None)), known(getattr(row, "high", None)), known(getattr(row, "low", None)))


def out_of_sample_predictions(prices: pd.DataFrame, min_train_days: int = 250, first_test_date=None) -> pd.DataFrame:  # noqa: ANN001
    """Walk-forward predictions (1-day horizon, empirical layer 1) for a price history."""
    panel = build_panel(prices, horizon=1)
    config = WalkForwardConfig(min_train_days=min_train_days, first_test_date=first_test_date)
    return walk_forward(panel, config).predictions


def run_backtest(predictions: pd.DataFrame, rails: bool, starting_cash: float = 10_000_000,
                 fees: FeeSchedule | None = None, gain: str = "predicted_return") -> BacktestResult:
    """`gain`: the return column the Actions are decided on (models/decisions.decide)."""
    fees = fees or FeeSchedule()
    result = BacktestResult(rails=rails, curve=pd.DataFrame())
    cash, held = Decimal(str(starting_cash)), {}
    last_seen: dict[str, MarketDay] = {}
    rows = []
    if predictions.empty:
        result.figures = {"days": 0}
        return result
    for day, frame in predictions.sort_values(["date", "symbol"]).groupby("date", sort=True):
        decided = decide(frame, liquidity_gates=rails, gain=gain)
        today = {r.symbol: _market_day(r) for r in decided.itertuples(index=False)}
        for symbol, seen in last_seen.items():
            if symbol not in today:  # not priced today: no trades, valued at its last close
                today[symbol] = MarketDay(symbol, seen.close, 0, seen.adv_20)
        last_seen.update(today)
        signals = {r.symbol: Signal(r.symbol, float(r.score), r.action, r.tercile, float(r.weight), float(r.predicted_return))
                   for r in decided.itertuples(index=False)}
        plan = plan_day(cash, held, signals, today, fees, rails=rails)
        for order in plan.orders:
            cash += (order.gross if order.side == "SELL" else -order.gross) - order.fees
            held[order.symbol] = held.get(order.symbol, 0) + (order.quantity if order.side == "BUY" else -order.quantity)
            result.traded_value += float(order.gross)
        held = {s: q for s, q in held.items() if q > 0}
        result.orders += len(plan.orders)
        result.would_trade += plan.would_trade
        result.blocked += plan.blocked_by_rails
        result.cut += plan.cut_by_rails
        result.days_trapped += sum(1 for s, q in held.items() if TRAPPED in exit_state(today[s], q).flags)
        valuation = value_positions(float(cash), held, today)
        rows.append({"date": day, "cash": float(cash), "market_value": valuation.market_value,
                     "equity": valuation.equity, "liquid_equity": valuation.liquid_equity})
    result.curve = pd.DataFrame(rows)
    result.figures = summarise(result, starting_cash)
    return result


def summarise(result: BacktestResult, starting_cash: float) -> dict:
    curve = result.curve
    if curve.empty:
        return {"days": 0}
    equity = curve["equity"].to_numpy()
    years = max(len(equity) / TRADING_DAYS_PER_YEAR, 1e-9)
    total = equity[-1] / starting_cash - 1
    drawdown = float(np.max(1 - equity / np.maximum.accumulate(equity)))
    return {
        "rails": result.rails, "days": int(len(equity)), "total_return": round(float(total), 4),
        "annual_return": round(float((1 + total) ** (1 / years) - 1), 4), "max_drawdown": round(drawdown, 4),
        "annual_turnover": round(result.traded_value / float(np.mean(equity)) / years, 2),
        "orders": result.orders, "days_trapped": result.days_trapped,
        "would_be_orders": result.would_trade,
        "blocked_share": round(result.blocked / result.would_trade, 4) if result.would_trade else 0.0,
        "cut_share": round(result.cut / result.would_trade, 4) if result.would_trade else 0.0,
        "final_liquid_equity": round(float(curve["liquid_equity"].iloc[-1]), 2),
        "final_equity": round(float(equity[-1]), 2),
    }
