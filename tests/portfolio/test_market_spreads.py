"""`portfolio.market.market_days` gives every MarketDay the spread estimated from the
stored bars (market.liquidity.estimate_spreads), so a live fill without quotes crosses the
estimate, not half the day's range; quotes still win; splits are put on the new count;
the bars are read in one query for all symbols; no bar after the day is read."""

from __future__ import annotations

import math
from decimal import Decimal

import pandas as pd
import pytest
from sqlalchemy import event

from market.costs import fill
from market.fees import FeeSchedule
from market.settings import Settings
from portfolio.market import market_days, stored_estimates
from store.engine import service_engine
from tests.market.stored_spreads import SESSIONS, last_estimates, rounded_bars, store_bars, store_estimated_and_quoted
from tests.portfolio.clients import announce_action
from tests.portfolio.seed import DAY, days_up_to

NO_FEES = FeeSchedule(Decimal("0"), Decimal("0"))


def test_market_days_carry_the_stored_estimate_and_a_fill_without_quotes_crosses_it(settings: Settings) -> None:
    engine = service_engine(settings)
    expected = last_estimates(store_estimated_and_quoted(engine))
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
    # half the estimate over the close, to the cent against the buyer (up)
    assert bought.touch == math.ceil(round(est.close * (1 + est.spread / 2), 6) * 100) / 100
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
    adjusted = pd.concat([rounded_bars("SPL", 4, days), rounded_bars("OTH", 5, days)], ignore_index=True)
    stored = adjusted.copy()
    before = (stored["symbol"] == "SPL") & (stored["date"] < ex_date)
    stored.loc[before, ["close", "high", "low"]] *= 10  # a 10-for-1 split: the old count's prices
    store_bars(engine, stored)
    announce_action(engine, "SPL", "SPLIT", 10.0, ex_date, "10-for-1 share split")
    expected = last_estimates(adjusted)

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
