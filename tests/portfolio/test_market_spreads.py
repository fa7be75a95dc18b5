"""`portfolio.market.market_days` gives every MarketDay the spread estimated from the
stored bars (market.liquidity.estimate_spreads), so a live fill without quotes crosses the
estimate, not half the day's range; quotes still win; splits are put on the new count;
the bars are read in one query for all symbols; no bar after the day is read."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pytest
from sqlalchemy import event

from market.costs import fill
from market.fees import FeeSchedule
from market.liquidity import estimate_spreads
from market.settings import Settings
from portfolio.market import market_days, stored_estimates
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.market.test_spread_estimator import simulated_bars
from tests.portfolio.seed import CALENDAR, DAY, days_up_to

SESSIONS = 80
NO_FEES = FeeSchedule(Decimal("0"), Decimal("0"))


def _bars(symbol: str, seed: int, days: list, spread: float = 0.02) -> pd.DataFrame:
    bars = simulated_bars(spread, len(days), seed=seed).assign(symbol=symbol, date=days)
    for column in ("close", "high", "low"):
        bars[column] = bars[column].round(2)
    return bars.assign(volume=20_000)


def _store(engine, bars: pd.DataFrame, quoted: dict[str, tuple[float, float]] | None = None) -> None:
    quoted = quoted or {}
    rows = [
        {
            "symbol": r.symbol,
            "trading_date": r.date,
            "close": r.close,
            "open": r.close,
            "high": r.high,
            "low": r.low,
            "volume": int(r.volume),
            "bid": quoted.get(r.symbol, (None, None))[0] if r.date == DAY else None,
            "ask": quoted.get(r.symbol, (None, None))[1] if r.date == DAY else None,
            "source": "test",
        }
        for r in bars.itertuples(index=False)
    ]
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


def _expected(bars: pd.DataFrame) -> pd.DataFrame:
    return bars.join(estimate_spreads(bars)).groupby("symbol").tail(1).set_index("symbol")


def test_market_days_carry_the_stored_estimate_and_a_fill_without_quotes_crosses_it(settings: Settings) -> None:
    engine = service_engine(settings)
    days = days_up_to(DAY, SESSIONS)
    bars = pd.concat([_bars("EST", 1, days), _bars("QTD", 2, days)], ignore_index=True)
    later = CALENDAR.add_trading_days(DAY, 1)
    future = _bars("EST", 3, [later]).assign(close=500.0, high=900.0, low=100.0)
    _store(engine, pd.concat([bars, future], ignore_index=True), quoted={"QTD": (49.0, 51.0)})
    expected = _expected(bars)
    with engine.connect() as conn:
        market = market_days(conn, DAY, ["EST", "QTD"])
        everyone = market_days(conn, DAY)
        estimates = stored_estimates(conn, DAY)

    est = market["EST"]
    assert est.spread_estimate == pytest.approx(expected.loc["EST", "spread_estimate"])
    assert est.spread_estimate_source == expected.loc["EST", "spread_source"] == "abdi_ranaldo"
    assert est.spread_source == "abdi_ranaldo"
    assert est.spread == pytest.approx(expected.loc["EST", "spread_estimate"], abs=1e-6)
    day_range = (est.high - est.low) / est.close
    assert 0.01 < est.spread < 0.03 < day_range  # the bars' spread is 2%; their range is far wider
    # the same reader as the views' and the T0 table's, with or without a symbol list
    assert estimates["EST"] == (est.spread_estimate, est.spread_estimate_source)
    assert everyone["EST"] == est

    bought = fill("BUY", 100, est.session(), NO_FEES)
    assert bought.touch_source == "abdi_ranaldo"
    assert bought.touch == pytest.approx(est.close * (1 + est.spread / 2))
    assert bought.touch < est.close * (1 + day_range / 2)

    # quotes win where the day has them; the estimate is still carried beside them
    qtd = market["QTD"]
    assert qtd.spread_estimate == pytest.approx(expected.loc["QTD", "spread_estimate"])
    assert qtd.spread_source == "quotes" and qtd.spread == pytest.approx(0.04)
    quoted = fill("BUY", 100, qtd.session(), NO_FEES)
    assert quoted.touch_source == "quotes" and quoted.touch == pytest.approx(51.0)


def test_market_days_read_the_estimate_on_the_new_count_after_a_split_in_one_query(settings: Settings) -> None:
    engine = service_engine(settings)
    days = days_up_to(DAY, SESSIONS)
    ex_date = days[50]
    adjusted = pd.concat([_bars("SPL", 4, days), _bars("OTH", 5, days)], ignore_index=True)
    stored = adjusted.copy()
    before = (stored["symbol"] == "SPL") & (stored["date"] < ex_date)
    stored.loc[before, ["close", "high", "low"]] *= 10  # a 10-for-1 split: the old count's prices
    _store(engine, stored)
    with engine.begin() as conn:
        append_history(
            conn,
            tables.corporate_actions,
            [
                {
                    "symbol": "SPL",
                    "action_date": ex_date,
                    "kind": "SPLIT",
                    "amount": 10.0,
                    "detail": {"text": "10-for-1 share split"},
                    "source": "test",
                }
            ],
        )
    expected = _expected(adjusted)

    statements: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:
        if "eod_prices" in statement:
            statements.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        with engine.connect() as conn:
            market = market_days(conn, DAY)
    finally:
        event.remove(engine, "before_cursor_execute", count)

    assert len(statements) == 1  # one read of the bars for every symbol and both uses
    assert market["SPL"].spread_estimate == pytest.approx(expected.loc["SPL", "spread_estimate"])
    assert market["SPL"].spread_estimate_source == expected.loc["SPL", "spread_source"]
    assert market["SPL"].spread < 0.03  # the ex-date's tenfold drop is not read as a spread
    assert market["OTH"].spread_estimate == pytest.approx(expected.loc["OTH", "spread_estimate"])
