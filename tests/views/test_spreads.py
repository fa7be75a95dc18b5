"""The one-day readers (the instrument liquidity view) show the spread estimated from the
stored bars where the day has no quotes, the quotes where it has them, and read no bar
after the day."""

from __future__ import annotations

import pandas as pd
import pytest

from market.liquidity import estimate_spreads
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.market.test_spread_estimator import simulated_bars
from tests.portfolio.seed import CALENDAR, DAY, days_up_to
from views.instrument import liquidity
from views.spreads import stored_estimates

SESSIONS = 80


def _store(engine, bars: pd.DataFrame, quoted: dict[str, tuple[float, float]] | None = None) -> None:
    quoted = quoted or {}
    rows = []
    for r in bars.itertuples(index=False):
        bid, ask = quoted.get(r.symbol, (None, None)) if r.date == DAY else (None, None)
        rows.append(
            {
                "symbol": r.symbol,
                "trading_date": r.date,
                "close": round(r.close, 2),
                "open": round(r.close, 2),
                "high": round(r.high, 2),
                "low": round(r.low, 2),
                "volume": 20_000,
                "bid": bid,
                "ask": ask,
                "source": "test",
            }
        )
    with engine.begin() as conn:
        append_history(
            conn,
            tables.instruments,
            [
                {"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "currency": "JMD", "source": "test"}
                for s in sorted(set(bars["symbol"]))
            ],
        )
        append_history(conn, tables.eod_prices, rows)


def _bars(symbol: str, seed: int, days: list) -> pd.DataFrame:
    bars = simulated_bars(0.02, len(days), seed=seed).assign(symbol=symbol, date=days)
    for column in ("close", "high", "low"):
        bars[column] = bars[column].round(2)
    return bars.assign(volume=20_000)


def test_the_liquidity_view_shows_the_stored_estimate_and_quotes_where_they_exist(settings: Settings) -> None:
    engine = service_engine(settings)
    days = days_up_to(DAY, SESSIONS)
    later = CALENDAR.add_trading_days(DAY, 1)
    bars = pd.concat([_bars("EST", 1, days), _bars("QTD", 2, days)], ignore_index=True)
    future = _bars("EST", 3, [later]).assign(close=500.0, high=900.0, low=100.0)
    _store(engine, pd.concat([bars, future], ignore_index=True), quoted={"QTD": (49.0, 51.0)})
    expected = bars.join(estimate_spreads(bars)).groupby("symbol").tail(1).set_index("symbol")
    with engine.connect() as conn:
        estimates = stored_estimates(conn, DAY, ["EST", "QTD"])
        view = liquidity(conn, DAY, ["EST", "QTD"])
    # the estimate from the stored bars up to the day (the bar after it is not read)
    assert estimates["EST"] == (
        pytest.approx(expected.loc["EST", "spread_estimate"]),
        expected.loc["EST", "spread_source"],
    )
    assert view["EST"]["spread"] == pytest.approx(expected.loc["EST", "spread_estimate"], abs=1e-6)
    assert view["EST"]["spread_source"] == "abdi_ranaldo"
    assert 0.01 < view["EST"]["spread"] < 0.03  # the bars' spread is 2%; their range is far wider
    # quotes win
    assert view["QTD"]["spread"] == pytest.approx(0.04) and view["QTD"]["spread_source"] == "quotes"
