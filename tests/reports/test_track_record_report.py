"""What the reports and the demo say about fills and about a book that held cash (issue
55): the Compliance Report's method text is the cost model's own description, never "at
the close"; an AI portfolio that held only cash says so in the Quant Briefing and in the
demo's printed record instead of presenting its information ratio as skill."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal

from market.clock import default_calendar
from market.costs import IMPACT_Y, MAX_PARTICIPATION, describe
from market.settings import Settings
from portfolio import ai
from portfolio.track_record import MIN_BETA_DAYS
from reports import generate
from store import tables
from store.engine import service_engine
from store.history import append_history
from tests.api.world import seed_prices
from tests.portfolio.seed import DAY, days_up_to, seed_predictions
from tests.reports.pdf import read

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
AT_THE_CLOSE = re.compile(r"\bat (the|its|their) close\b", re.IGNORECASE)  # "that the close rises" is no fill


def flat(pdf: bytes) -> str:
    return " ".join(read(pdf).text.split())


def test_the_compliance_report_describes_fills_with_the_cost_models_own_words(settings: Settings) -> None:
    text = flat(generate("compliance", service_engine(settings), settings, default_calendar(), NOW).pdf)
    method = " ".join(describe(ai.fee_schedule(settings)).split())
    assert method in text
    # the figures come from market/costs.py, not from the report
    assert f"{IMPACT_Y:g} x the name's daily volatility" in method
    assert f"at most {MAX_PARTICIPATION:.0%} of the session's traded volume" in method
    assert f"{float(ai.fee_schedule(settings).rate):.2%} of each fill's value" in method
    assert not AT_THE_CLOSE.search(text)


def test_the_compliance_report_states_the_fee_a_fill_is_charged(settings: Settings) -> None:
    """A rate that does not round to two decimals and a per-fill minimum (MARKETINTEL_BROKERAGE_FEE_RATE,
    MARKETINTEL_BROKERAGE_MIN_FEE) read as charged: 0.725% (JSE levies 0.35% + 0.375%), at least
    50.00 in the market's currency."""
    charged = settings.model_copy(update={"brokerage_fee_rate": 0.00375, "brokerage_min_fee": 50.0})
    fees = ai.fee_schedule(charged)
    small = Decimal("128.85")
    assert fees.rate == Decimal("0.00725") and fees.fee(small) > small * fees.rate  # the minimum applies
    engine = service_engine(charged)
    with engine.begin() as conn:  # a market that trades in shillings: the minimum is in shillings
        listed = {"symbol": "KQ", "name": "Kenya Airways", "board": "MAIN", "currency": "KES", "source": "test"}
        append_history(conn, tables.instruments, [listed])
    text = flat(generate("compliance", engine, charged, default_calendar(), NOW).pdf)
    assert "fees of 0.725% of each fill's value, and at least KES 50.00 a fill (the market's fee schedule)" in text


def test_an_all_cash_ai_portfolio_says_its_ratios_describe_cash_in_the_briefing_and_the_demo(
    settings: Settings,
) -> None:
    from cli.demo import _track_record_line

    engine = service_engine(settings)
    seed_prices(engine)
    hold = {"score": 50.0, "action": "HOLD", "tercile": "MIDDLE"}
    # a month of executed days (the ratios wait for MIN_BETA_DAYS of returns), no order: all cash
    for day in days_up_to(DAY, MIN_BETA_DAYS + 1):
        seed_predictions(engine, day, {"LIQ": hold, "MID": hold})
        ai.execute_day(engine, settings, day)
    text = flat(generate("quant-briefing", engine, settings, default_calendar(), NOW).pdf)
    assert "The book held cash: on average 0.0% of its equity was invested (under 5%)" in text, text
    assert "describe holding cash, not skill" in text
    assert "Average exposure (market value / equity) 0.0% fully invested" in text
    assert "Fills 0" in text
    assert "(cash)" in text, "the information ratios are marked as cash, not shown as skill"
    assert not AT_THE_CLOSE.search(text)

    line = _track_record_line(settings)
    assert "0 fills" in line and "average exposure 0.0% of equity" in line
    assert "information ratio" not in line.split(". The book held cash")[0]
    assert "describe holding cash, not skill." in line and "turnover a year n/a (under a year of returns)" in line
    assert line.endswith("the total return is the return over these days.")  # a month: nothing annualised
