"""Null books (portfolio/nulls.py): the book replayed with the model's expected-excess values
re-assigned each day by a null's order. The re-assignment keeps each day's set of values;
on a planted market whose scores carry no information the model's book ranks anywhere
among the fixed random books, with a planted signal it beats them all; the first month's
book, bought and held, stops trading once its first month's orders filled."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest

from market.costs import FeeSchedule
from portfolio.backtest import decided_frame, holding_periods, prepare_days, run_backtest, summarise
from portfolio.book import Mandate
from portfolio.nulls import (
    NullPlan,
    Replay,
    family_figures,
    fixed_random_key,
    mean_returns,
    model_rank,
    null_books,
    percentile,
    reassign,
    replay_book,
    size_key,
)
from portfolio.track_record import equal_weight_liquid

FEES = FeeSchedule()  # 0.5% a side
BOOK = Mandate(names=4, rebalance_every=5)
CASH = 1_000_000
START = date(2026, 1, 5)


def planted(seed: int, signal: bool, names: int = 20, days: int = 40, flip: int | None = None) -> pd.DataFrame:
    """A liquid market (spread 0.5%, volume far above any slot) whose names drift apart
    (a persistent daily drift each) and the model's predictions of it: with `signal` the
    expected excess is the name's mean return over the span, standardised, plus a little
    daily noise; without, a fixed random score per name plus the same noise, independent
    of the returns. From day `flip` on the scores are reversed (the ranking moves)."""
    rng = np.random.default_rng(seed)
    returns = rng.normal(0, 0.003, names) + rng.normal(0, 0.015, (days, names))
    realised = returns.mean(axis=0)  # the planted signal knows how each name's span turns out
    score = (realised - realised.mean()) / realised.std() if signal else rng.normal(0, 1, names)
    closes = 20 * np.exp(np.cumsum(returns, axis=0))
    rows = []
    for i in range(days):
        noise = rng.normal(0, 0.1, names)
        for k in range(names):
            edge = 0.01 * (score[k] + noise[k]) * (-1 if flip is not None and i >= flip else 1)
            close = float(closes[i, k])
            rows.append(
                {
                    "symbol": f"N{k:02d}",
                    "date": START + timedelta(days=i),
                    "close": close,
                    "volume": 2_000_000,
                    "adv_20": 2_000_000.0,
                    "bid": close * 0.9975,
                    "ask": close * 1.0025,
                    "high": close * 1.01,
                    "low": close * 0.99,
                    "volatility_20": 0.015,
                    "p_up": float(np.clip(0.5 + 10 * edge, 0.01, 0.99)),
                    "expected_return": edge,
                    "raw_score": edge,
                    "predicted_return": edge,
                }
            )
    return pd.DataFrame(rows)


def replay_of(frame: pd.DataFrame) -> Replay:
    rate = float(FEES.rate)
    return Replay(
        prepare_days(frame, rate, book_names=BOOK.names),
        decided_frame(frame, rate, book_names=BOOK.names),
        FEES,
        BOOK,
        "costed",
        CASH,
    )


def model_percentile(seed: int, signal: bool, fixed: int = 19) -> float:
    """The model's percentile (information ratio against the equal-weighted liquid
    universe) among `fixed` fixed random books on planted market `seed`."""
    frame = planted(seed, signal)
    replay = replay_of(frame)
    benchmarks = {"equal_weight_liquid": equal_weight_liquid(frame)}
    model, _ = replay_book(replay)
    plan = NullPlan(daily_seeds=0, fixed_seeds=fixed, families=("fixed_random",))
    books = null_books(replay, plan, model)
    figures = family_figures(
        "fixed_random",
        summarise(model, CASH, benchmarks),
        [summarise(b.result, CASH, benchmarks) for b in books],
        "equal_weight_liquid",
    )
    return figures.model_percentile


def test_without_information_the_model_ranks_anywhere_among_the_fixed_random_books() -> None:
    """A ranking that carries no information is one more random ranking: its percentile
    is spread over the range, between 10% and 90% for about 80% of markets."""
    found = [model_percentile(seed, signal=False) for seed in range(6)]
    inside = [p for p in found if 10 <= p <= 90]
    assert len(inside) >= len(found) / 2, found
    assert 20 <= np.mean(found) <= 80, found


def test_with_a_planted_signal_the_model_beats_the_fixed_random_books() -> None:
    found = [model_percentile(seed, signal=True) for seed in range(3)]
    assert all(p > 95 for p in found), found


def test_the_reassignment_keeps_each_days_values_and_moves_them_by_the_nulls_order() -> None:
    frame = planted(3, signal=True)
    frame.loc[frame["symbol"] == "N15", "volume"] = 0  # fails the entry gates: another pool
    decided = decided_frame(frame, float(FEES.rate), book_names=BOOK.names)
    key = fixed_random_key(decided, 11)
    moved = reassign(decided, key, float(FEES.rate), book_names=BOOK.names)

    def by_day(f: pd.DataFrame, liquid: bool) -> pd.Series:
        part = f[(f["tercile"] != "ILLIQUID") == liquid]
        return part.groupby("date")["expected_return"].apply(lambda v: tuple(sorted(v)))

    for liquid in (True, False):
        pd.testing.assert_series_equal(by_day(moved, liquid), by_day(decided, liquid))
    assert not np.allclose(moved["expected_return"], decided["expected_return"])
    pairs = lambda f: set(zip(f["expected_return"], f["p_up"], strict=True))  # noqa: E731
    assert pairs(moved) == pairs(decided)  # each value keeps the P(up) it came with
    for _, day in moved.assign(key=key)[moved["tercile"] != "ILLIQUID"].groupby("date"):
        assert day.sort_values("key")["expected_return"].is_monotonic_increasing  # best key, best value
    counts = lambda f: f.groupby("date")["action"].value_counts()  # noqa: E731
    pd.testing.assert_series_equal(counts(moved), counts(decided))  # LONG fires as often
    assert (model_rank(moved)[moved["action"] == "LONG"] <= BOOK.names).all()


def test_the_models_own_order_gives_the_models_book_back() -> None:
    frame = planted(4, signal=True)
    replay = replay_of(frame)
    same = reassign(replay.decided, -model_rank(replay.decided).astype(float), float(FEES.rate), book_names=BOOK.names)
    pd.testing.assert_frame_equal(same, replay.decided)


def test_the_bought_and_held_book_stops_trading_after_its_first_month() -> None:
    frame = planted(5, signal=True, flip=15)  # the model's book sells and swaps after the flip
    replay = replay_of(frame)
    model, _ = replay_book(replay)
    plan = NullPlan(daily_seeds=0, fixed_seeds=0, first_month=10, families=("bought_and_held", "size"))
    held, size = null_books(replay, plan, model)
    assert held.family == "bought_and_held" and size.family == "size"
    month_end = replay.days[9].day
    early = held.result.trades[held.result.trades["decided_on"] <= month_end.isoformat()]
    model_early = model.trades[model.trades["decided_on"] <= month_end.isoformat()]
    # the same orders, fills and costs; a null book's reasons are not written (`reassign`'s explain)
    pd.testing.assert_frame_equal(
        early.reset_index(drop=True).drop(columns="reason"), model_early.reset_index(drop=True).drop(columns="reason")
    )
    assert len(held.result.trades) == len(early) and len(model.trades) > len(model_early)
    biggest = frame.assign(value=size_key(frame)).groupby("date")["value"].idxmax()
    assert set(frame.loc[biggest, "symbol"]) & set(size.result.trades["symbol"])


def test_the_mean_of_books_is_the_mean_of_their_daily_returns() -> None:
    frame = planted(6, signal=False)
    replay = replay_of(frame)
    model, returns = replay_book(replay)
    books = null_books(replay, NullPlan(daily_seeds=2, fixed_seeds=2, families=("daily_random", "fixed_random")), model)
    assert [(b.family, b.seed) for b in books] == [
        ("daily_random", 0),
        ("daily_random", 1),
        ("fixed_random", 0),
        ("fixed_random", 1),
    ]
    mean = mean_returns(books[2:])
    assert mean.iloc[-1] == pytest.approx((books[2].returns.iloc[-1] + books[3].returns.iloc[-1]) / 2)
    assert list(mean.index) == list(returns.index)


def test_percentile_counts_ties_half() -> None:
    assert percentile(1.0, [0.0, 1.0, 2.0, None]) == 50.0
    assert percentile(3.0, [0.0, 1.0]) == 100.0
    assert percentile(None, [1.0]) is None and percentile(1.0, []) is None


def test_holding_periods_run_from_the_opening_fill_to_the_closing_one() -> None:
    sessions = [START + timedelta(days=i) for i in range(10)]
    trades = pd.DataFrame(
        [
            {"date": sessions[1], "symbol": "A", "side": "BUY", "quantity": 10},
            {"date": sessions[2], "symbol": "A", "side": "BUY", "quantity": 5},  # a top-up, not a new holding
            {"date": sessions[3], "symbol": "B", "side": "BUY", "quantity": 10},
            {"date": sessions[5], "symbol": "A", "side": "SELL", "quantity": 15},
            {"date": sessions[6], "symbol": "A", "side": "BUY", "quantity": 1},  # open at the end: to session 9
        ]
    )
    held = holding_periods(trades, sessions)
    assert (held.holdings, held.closed) == (3, 1)
    assert held.mean_sessions == pytest.approx((4 + 6 + 3) / 3, abs=0.05)
    assert held.median_sessions == 4
    assert holding_periods(trades.iloc[0:0], sessions).mean_sessions is None


def test_a_replayed_books_figures_carry_its_holding_periods() -> None:
    result = run_backtest(planted(7, signal=True), CASH, FEES, "costed", BOOK)
    assert result.figures["holding"]["holdings"] >= BOOK.names
    assert result.figures["holding"]["mean_sessions"] > 0
