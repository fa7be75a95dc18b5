"""The persistence the live book and the suggestions weigh a trade's hold with
(portfolio/market.py `known_persistence`) is the backtest's, read point in time from the
store: the same mean rank IC per window as models.metrics computes from the same rows, only
the windows that had closed by the day, and nothing stored after the day changes it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from market.settings import Settings
from models.metrics import persistence, window_excess
from portfolio.book import Outlook
from portfolio.market import known_persistence
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.portfolio.seed import days_up_to, price_row

DAYS = days_up_to(pd.Timestamp("2026-06-30").date(), 140)
SYMBOLS = [f"S{i:02d}" for i in range(12)]


def _market(seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Closes whose drift each name keeps for weeks, and an expected excess that knows it:
    a signal that pays in every window after the fill."""
    rng = np.random.default_rng(seed)
    drift = rng.normal(0, 0.004, len(SYMBOLS))
    rows, scored = [], []
    for i, symbol in enumerate(SYMBOLS):
        closes = 20 * np.exp(np.cumsum(drift[i] + rng.normal(0, 0.01, len(DAYS))))
        for day, close in zip(DAYS, closes, strict=True):
            rows.append(price_row(symbol, day, round(float(close), 2), 500_000, None, None))
            scored.append({"symbol": symbol, "date": day, "expected_return": 5 * drift[i] + rng.normal(0, 0.002)})
    return pd.DataFrame(rows), pd.DataFrame(scored)


def _store(settings: Settings, bars: pd.DataFrame, scored: pd.DataFrame):
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, bars.to_dict("records"))
        append_history(
            conn,
            tables.validation_predictions,
            [
                {
                    "symbol": r.symbol,
                    "trading_date": r.date,
                    "model_id": "m",
                    "horizon_days": 5,
                    "expected_return": r.expected_return,
                    "tercile": "TOP",
                }
                for r in scored.itertuples(index=False)
            ],
        )
    return engine


def test_the_live_books_persistence_is_the_backtests_read_point_in_time(settings: Settings) -> None:
    bars, scored = _market()
    day = DAYS[100]
    stored_before = bars[bars["trading_date"] <= day]
    engine = _store(settings, stored_before, scored[scored["date"] < day])
    with engine.connect() as conn:
        live = known_persistence(conn, day)
        assert known_persistence(conn, DAYS[3]) is None  # no window had closed yet
    prices = stored_before.rename(columns={"trading_date": "date"})
    expected = persistence(scored[scored["date"] < day], window_excess(prices)).means_known_by([day])[day]
    assert live == pytest.approx(expected)
    assert live["1-5"] > 0.3 and live["41-60"] is not None and live["41-60"] > 0.1  # a lasting signal
    assert Outlook.of(live, 60).multiplier > 2

    with engine.begin() as conn:  # the closes after the day arrive: what the day knew does not move
        append_history(conn, tables.eod_prices, bars[bars["trading_date"] > day].to_dict("records"))
    with engine.connect() as conn:
        assert known_persistence(conn, day) == pytest.approx(live)
