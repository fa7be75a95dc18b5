"""The backtest replays the executor: with rails an illiquid favourite is never bought and
the share blocked is counted; without rails it is bought and sold on days with no trades."""
from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
import pytest

from portfolio.backtest import run_backtest


def panel(days: int = 40) -> pd.DataFrame:
    rows = []
    start = date(2026, 1, 5)
    for i in range(days):
        day = start + timedelta(days=i)
        for symbol, volume, p_up in (("LIQ", 50_000, 0.62), ("DRY", 0 if i % 2 else 800, 0.70),
                                     ("MID", 30_000, 0.50), ("LOW", 30_000, 0.30)):
            close = 10.0 + 0.05 * i if symbol != "DRY" else 20.0 + 0.2 * i
            rows.append({"symbol": symbol, "date": day, "close": close, "volume": volume, "adv_20": float(volume or 400),
                         "bid": close * 0.995, "ask": close * 1.005, "high": close * 1.01, "low": close * 0.99,
                         "p_up": p_up if i % 10 < 8 else 1 - p_up, "predicted_return": 0.01 if p_up > 0.5 else -0.01,
                         "expected_return": 0.01 if p_up > 0.5 else -0.01, "volatility_20": 0.02})
    return pd.DataFrame(rows)


def test_rails_block_the_illiquid_name_that_no_rails_trades() -> None:
    railed, naive = run_backtest(panel(), rails=True), run_backtest(panel(), rails=False)
    for result in (railed, naive):
        curve = result.curve
        assert len(curve) == 40 and (curve["cash"] >= 0).all()
        assert (curve["equity"] - curve["cash"] - curve["market_value"]).abs().max() < 1e-6
    assert railed.figures["blocked_share"] > 0 and naive.figures["blocked_share"] == 0
    assert railed.figures["orders"] > 0 and naive.figures["orders"] > railed.figures["orders"]
    assert railed.figures["days"] == 40 and set(railed.figures) >= {
        "total_return", "max_drawdown", "annual_turnover", "days_trapped", "blocked_share"}
    assert railed.figures["max_drawdown"] >= 0


def test_an_empty_history_gives_no_days() -> None:
    assert run_backtest(panel().iloc[0:0], rails=True).figures == {"days": 0}


@pytest.mark.parametrize("rails", [True, False])
def test_the_backtest_is_deterministic(rails: bool) -> None:
    assert run_backtest(panel(), rails=rails).figures == run_backtest(panel(), rails=rails).figures
