"""A planted market (tests/portfolio/test_nulls.py `planted`) written into a store through
the writers the stages use: its instruments, its bars (with HISTORY quiet sessions before,
so ADV_20 and the spread estimate are known from the first day), its predictions as the
validation record stores them (decided by `models.decisions.decide`) and its days as the
AI portfolio's executed days on that record, so the track record's null books replay it."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date

import pandas as pd
from sqlalchemy import Engine

from market.fees import FeeSchedule
from models.decisions import HORIZON, decide
from portfolio.ledger import AI_PORTFOLIO
from store import tables
from store.engine import build_engine
from store.history import append_history
from tests.conftest import migrated_copy
from tests.portfolio.seed import CALENDAR, DAY, days_up_to, price_row
from tests.portfolio.test_nulls import planted

HISTORY = 25  # quiet sessions before the first predicted day


def planted_world(
    url: str, seed: int, signal: bool, cash: float, fees: FeeSchedule, days: int = 30, names: int = 40
) -> Engine:
    """The store at `url` made a copy of one holding planted market `seed` (`names` names,
    more than the 15 the book holds and its 15 reserve, over `days` days) as the AI
    portfolio's executed days (`seed_planted`), seeded once per process; its engine."""

    def fill(target: str) -> None:
        seed_planted(build_engine(target), planted(seed, signal, names=names, days=days), cash, fees)

    migrated_copy(url, f"planted-{seed}-{signal}-{days}-{names}-{cash}-{fees}", fill)
    return build_engine(url)


def seed_planted(
    engine: Engine,
    frame: pd.DataFrame,
    cash: float,
    fees: FeeSchedule,
    last: date = DAY,
    skipped: Collection[int] = (),
) -> list[date]:
    """`frame` (planted's rows: one per symbol and day) on the trading days up to `last`;
    the executed days, in order: every planted day but the `skipped` (their numbers), the
    sessions the AI book did not run. The executed days' own book is left flat at `cash`
    (their ledger is not what the null books replay)."""
    planted_days = sorted(frame["date"].unique())
    sessions = days_up_to(last, len(planted_days) + HISTORY)
    on = dict(zip(planted_days, sessions[HISTORY:], strict=True))
    frame = frame.assign(date=frame["date"].map(on))
    first = frame[frame["date"] == sessions[HISTORY]]
    bars = [
        price_row(r.symbol, day, r.close, int(r.volume), r.bid, r.ask, cents=False)
        for day in sessions[:HISTORY]
        for r in first.itertuples(index=False)
    ] + [price_row(r.symbol, r.date, r.close, int(r.volume), r.bid, r.ask, cents=False) for r in frame.itertuples()]
    decided = decide(frame.sort_values(["date", "symbol"]).reset_index(drop=True), fee_rate=float(fees.rate))
    with engine.begin() as conn:
        symbols = sorted(frame["symbol"].unique())
        append_history(
            conn,
            tables.instruments,
            [{"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"} for s in symbols],
        )
        append_history(conn, tables.eod_prices, bars)
        append_history(conn, tables.validation_predictions, [_stored(r) for r in decided.itertuples(index=False)])
        executed = [day for number, day in enumerate(sessions[HISTORY:]) if number not in skipped]
        append_history(conn, tables.portfolio_days, [_executed(day, cash) for day in executed])
    return executed


def _stored(r) -> dict:
    return {
        "symbol": r.symbol,
        "trading_date": r.date,
        "model_id": "planted",
        "horizon_days": HORIZON,
        "predicted_return": r.predicted_return,
        "p_up": r.p_up,
        "score": r.score,
        "action": r.action,
        "weight": r.weight,
        "tercile": r.tercile,
        "raw_score": r.raw_score,
        "expected_return": r.expected_return,
        "held_edge": r.held_edge,
        "round_trip_cost": r.round_trip_cost,
        "decision_reason": r.reason,
    }


def _executed(day: date, cash: float) -> dict:
    return {
        "portfolio_id": AI_PORTFOLIO,
        "trading_date": day,
        "model_id": "planted",
        "cash": cash,
        "market_value": 0,
        "liquid_equity": cash,
        "summary": {"record": "validation"},
    }


__all__ = ["CALENDAR", "planted_world", "seed_planted"]
