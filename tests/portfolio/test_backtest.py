"""The backtest replays the AI book: decisions at a close fill in the next session at the
touch or worse, within the session's volume, with their costs stored per trade and summed
into the statistics; "gross" fills the same decisions at the next session's close for
free, "same_close" at the decision's own close for free; the figures carry the average
exposure and the fills."""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
import pytest

from market.costs import FeeSchedule
from portfolio.backtest import prepare_days, run_backtest
from portfolio.book import Mandate

FEES = FeeSchedule()  # 0.5% a side
BOOK = Mandate(names=2, rebalance_every=3)
START = 1_000_000


def panel(days: int = 40) -> pd.DataFrame:
    """LIQ and ALT are LONG but two days in ten (then AVOID: expected to lose more than a
    round trip costs, about 2%); MID, LOW and LAG are always AVOID; DRY trades every other day, below the ADV gate."""
    rows = []
    start = date(2026, 1, 5)
    for i in range(days):
        flipped = i % 10 >= 8
        for symbol, volume, p_up, edge in (
            ("LIQ", 400_000, 0.70, 0.06),
            ("ALT", 400_000, 0.66, 0.05),
            ("DRY", 0 if i % 2 else 800, 0.80, 0.10),
            ("MID", 100_000, 0.50, -0.04),
            ("LOW", 100_000, 0.30, -0.05),
            ("LAG", 100_000, 0.40, -0.03),
        ):
            close = 10.0 + 0.05 * i if symbol != "DRY" else 20.0 + 0.2 * i
            rows.append(
                {
                    "symbol": symbol,
                    "date": start + timedelta(days=i),
                    "close": close,
                    "volume": volume,
                    "adv_20": float(volume or 400),
                    "bid": close * 0.995,
                    "ask": close * 1.005,
                    "high": close * 1.01,
                    "low": close * 0.99,
                    "p_up": 1 - p_up if flipped and edge > 0 else p_up,
                    "expected_return": -edge if flipped and edge > 0 else edge,
                    "predicted_return": edge,
                    "volatility_20": 0.02,
                }
            )
    return pd.DataFrame(rows)


def run(fills: str = "costed", frame: pd.DataFrame | None = None):
    return run_backtest(panel() if frame is None else frame, START, FEES, fills, BOOK)


def test_no_order_fills_at_a_price_of_the_session_its_decision_read() -> None:
    frame = panel()
    trades = run(frame=frame).trades
    assert set(trades["side"]) == {"BUY", "SELL"} and set(trades["symbol"]) == {"LIQ", "ALT"}
    quotes = frame.set_index(["symbol", "date"])
    sessions = sorted(frame["date"].unique())
    for t in trades.itertuples():
        decided = date.fromisoformat(t.decided_on)
        assert t.date == sessions[sessions.index(decided) + 1]  # the next session
        session = quotes.loc[(t.symbol, t.date)]
        if t.side == "BUY":
            assert t.price >= round(session["ask"], 6) and t.price > quotes.loc[(t.symbol, decided), "ask"]
        else:
            assert t.price <= round(session["bid"], 6)
        assert t.quantity <= 0.25 * session["volume"]


def test_costs_are_stored_per_trade_and_sum_to_what_the_statistics_report() -> None:
    result = run()
    costs = result.figures["costs"]
    for part in ("fees", "spread", "impact"):
        assert result.trades[part].sum() == pytest.approx(costs[part], abs=0.01)
        assert costs[part] > 0
    assert costs["total"] == pytest.approx(result.trades[["fees", "spread", "impact"]].sum().sum(), abs=0.02)


def test_same_close_fills_the_decisions_own_close_for_free() -> None:
    free = run("same_close")
    assert not free.trades.empty
    assert (free.trades["date"].astype(str) == free.trades["decided_on"]).all()
    assert (free.trades["price"] == free.trades["close"]).all() and free.figures["costs"]["total"] == 0


def test_gross_fills_the_next_sessions_close_for_free_and_earns_at_least_the_costed_book() -> None:
    frame = panel()
    closes = frame.set_index(["symbol", "date"])["close"]
    sessions = sorted(frame["date"].unique())
    gross, costed = run("gross", frame), run("costed", frame)
    assert not gross.trades.empty and gross.figures["costs"]["total"] == 0
    for t in gross.trades.itertuples():
        assert t.date == sessions[sessions.index(date.fromisoformat(t.decided_on)) + 1]
        assert t.price == pytest.approx(closes.loc[(t.symbol, t.date)], abs=1e-6)
    assert gross.figures["total_return"] >= costed.figures["total_return"]
    assert gross.figures["days"] == costed.figures["days"] == 40


def test_the_figures_carry_exposure_and_fills_and_the_curve_adds_up() -> None:
    result = run()
    figures, curve = result.figures, result.curve
    assert figures["fill_count"] == figures["orders"] == len(result.trades) == curve["fills"].sum()
    exposure = (curve["market_value"] / curve["equity"]).mean()
    assert figures["average_exposure"] == pytest.approx(exposure, abs=0.01)
    assert 0.5 < figures["average_exposure"] < 1  # the book stays invested: two LONG names, two slots
    assert (curve["cash"] >= 0).all() and (curve["names"] <= BOOK.names).all()
    assert (curve["equity"] - curve["cash"] - curve["market_value"]).abs().max() < 1e-6
    assert "DRY" not in set(result.trades["symbol"])  # fails the entry gates: never LONG
    assert set(figures) >= {"total_return", "sharpe", "max_drawdown", "annual_turnover", "days_trapped"}


def test_prepared_days_replay_the_same_book() -> None:
    frame = panel()
    days = prepare_days(frame, float(FEES.rate))
    assert run_backtest(days, START, FEES, "costed", BOOK).figures == run(frame=frame).figures


def test_an_empty_history_gives_no_days() -> None:
    assert run_backtest(panel().iloc[0:0], START, FEES).figures == {"days": 0}


def test_an_unknown_fill_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        run_backtest(panel(), START, FEES, "free")


@pytest.mark.parametrize("fills", ["costed", "gross", "same_close"])
def test_the_backtest_is_deterministic(fills: str) -> None:
    first, second = run(fills), run(fills)
    assert first.figures == second.figures
    pd.testing.assert_frame_equal(first.trades, second.trades)


def test_the_effective_number_of_names_counts_the_names_held_not_the_cash() -> None:
    """1 / Herfindahl over the invested value: a book of at most two names, partly in cash,
    has at most two effective names (not the 2 / exposure^2 that weights of equity gave);
    its largest position stays a share of equity."""
    result = run()
    curve, figures = result.curve, result.figures["concentration"]
    held = curve[curve["names"] > 0]
    assert (curve["market_value"] / curve["equity"]).mean() < 0.95  # partly in cash
    assert 1 <= figures["effective_names"] <= held["names"].max() == BOOK.names
    largest = curve["largest_weight"]
    assert (largest <= curve["market_value"] / curve["equity"] + 1e-9).all()


def test_a_benchmark_is_compared_only_over_the_days_it_covers_and_per_year_where_it_does() -> None:
    """An index without levels before the new year (NaN there: not a day of no change): the
    year it does not cover has no comparison, and the whole span's is the covered year's."""
    from portfolio.backtest import book_returns, summarise

    frame = panel()
    frame["date"] = frame["date"] - timedelta(days=20)  # 2025-12-16 .. 2026-01-24
    result = run(frame=frame)
    days = list(result.curve["date"])
    index = pd.Series([0.01 if d.year == 2026 else float("nan") for d in days], index=days)
    figures = summarise(result, START, {"index": index}, by_year=True)
    assert figures["years"]["2025"]["benchmarks"]["index"] is None
    covered = figures["years"]["2026"]["benchmarks"]["index"]
    assert figures["benchmarks"]["index"] == covered
    assert covered["total_return"] == pytest.approx(1.01 ** sum(d.year == 2026 for d in days) - 1, abs=1e-4)
    returns = book_returns(result.curve, START)
    assert figures["total_return"] == pytest.approx(float((1 + returns).prod() - 1), abs=1e-4)  # the book's own: whole
