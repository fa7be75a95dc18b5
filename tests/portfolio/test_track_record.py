"""Track-record statistics on hand-made curves: the figures a hand computation gives, and
the ones only the library defines equal to empyrical's own."""

from __future__ import annotations

import math
from datetime import date, timedelta
from decimal import Decimal

import empyrical as ep
import numpy as np
import pandas as pd
import pytest

from market.clock import TRADING_DAYS_PER_YEAR
from market.costs import CostBreakdown
from portfolio.track_record import MIN_BETA_DAYS, daily_returns, equal_weight_liquid, statistics

DAYS = [date(2026, 1, 5) + timedelta(days=i) for i in range(6)]


def test_statistics_by_hand_and_by_the_library() -> None:
    equity = pd.Series([100.0, 110.0, 99.0, 99.0, 108.9, 119.79], index=DAYS)
    returns = daily_returns(equity)
    assert returns.tolist() == pytest.approx([0.10, -0.10, 0.0, 0.10, 0.10])
    bench = pd.Series([0.05, -0.05, 0.01, 0.02, 0.0], index=DAYS[1:])
    stats = statistics(
        returns,
        {"b": bench},
        traded_value=500.0,
        mean_equity=100.0,
        costs=CostBreakdown(fees=Decimal("1.0"), spread=Decimal("2.0"), impact=Decimal("0.5")),
    ).as_dict()
    assert stats["total_return"] == pytest.approx(0.1979, abs=1e-4)  # 119.79 / 100 - 1
    assert stats["max_drawdown"] == pytest.approx(0.10)  # 110 -> 99
    # five days are under a year: nothing a year is extrapolated from them (the next test)
    assert stats["annual_turnover"] is None and stats["costs"]["share_of_equity_per_year"] is None
    assert stats["costs"]["total"] == 3.5
    assert stats["annual_return"] is None and stats["calmar"] is None
    # five days: too few to scale to a year or regress on (the test below)
    assert (stats["sharpe"], stats["sortino"], stats["annual_volatility"]) == (None, None, None)
    few = stats["benchmarks"]["b"]
    assert (few["tracking_error"], few["information_ratio"], few["beta"], few["alpha"]) == (None, None, None, None)
    # the same five days four times over: enough days, the ratios by hand
    month = pd.bdate_range("2026-01-05", periods=4 * len(returns))
    returns, bench = (pd.Series(np.tile(x.to_numpy(), 4), index=month) for x in (returns, bench))
    stats = statistics(returns, {"b": bench}).as_dict()
    mean, sd = np.mean(returns), np.std(returns, ddof=1)
    assert stats["sharpe"] == pytest.approx(mean / sd * math.sqrt(250), abs=1e-3)
    assert stats["sortino"] == pytest.approx(ep.sortino_ratio(returns, annualization=250), abs=1e-3)
    assert stats["annual_volatility"] == pytest.approx(sd * math.sqrt(250), abs=1e-4)
    against = stats["benchmarks"]["b"]
    active = returns - bench
    assert against["information_ratio"] == pytest.approx(active.mean() / active.std(ddof=1) * math.sqrt(250), abs=1e-3)
    assert against["tracking_error"] == pytest.approx(active.std(ddof=1) * math.sqrt(250), abs=1e-4)


def _year_of(days: int, daily: float = 0.001) -> tuple[pd.Series, pd.Series]:
    """`days` daily returns of a book and of its benchmark, varied around `daily` and 0.0004."""
    rng = np.random.default_rng(11)
    index = pd.bdate_range("2025-01-06", periods=days)
    bench = pd.Series(rng.normal(0.0004, 0.008, days), index=index)
    return 0.8 * bench + pd.Series(rng.normal(daily, 0.004, days), index=index), bench


def test_under_a_year_no_return_is_annualised_and_the_note_says_why() -> None:
    """GIPS: a return over less than a year is not annualised. 1% in two days compounded to
    a year reads as +247%; under TRADING_DAYS_PER_YEAR daily returns the annual return, Calmar,
    turnover and costs a year, and each benchmark's annual and excess annual return and alpha
    are null, the note says why and points at the total return; from a year on they are
    empyrical's. Volatility, Sharpe, Sortino, tracking error and IR are not compounded: kept
    under a year from MIN_BETA_DAYS on."""
    two = statistics(pd.Series([0.005, 0.00498], index=DAYS[:2]), {"b": pd.Series([0.0, 0.0], index=DAYS[:2])})
    assert two.total_return == pytest.approx(0.01, abs=1e-4) and two.annual_return is None and two.calmar is None
    assert two.note == (
        f"Volatility, Sharpe and Sortino need at least {MIN_BETA_DAYS} days of returns; 2 here: a daily mean or "
        "deviation over fewer, scaled to a year, or a regression on them, is noise. "
        "2 days of returns, under a year (250): a return over less than a year is not annualised (GIPS), so no "
        "annual return, Calmar, annual turnover or yearly cost share is given, nor any benchmark's annual return, "
        "excess annual return or alpha; the total return is the return over these days."
    )
    assert two.benchmarks["b"].excess_annual_return is None and two.benchmarks["b"].annual_return is None
    assert two.benchmarks["b"].total_return == 0.0
    short, bench = _year_of(TRADING_DAYS_PER_YEAR)
    costs = CostBreakdown(fees=Decimal("10"), spread=Decimal("20"), impact=Decimal("5"))
    within = statistics(short.iloc[1:], {"b": bench}, traded_value=50.0, mean_equity=100.0, costs=costs)
    assert within.days == TRADING_DAYS_PER_YEAR - 1 and within.annual_return is None and within.calmar is None
    assert within.annual_turnover is None and within.costs.share_of_equity_per_year is None
    assert within.costs.total == Decimal("35.00"), "the costs paid stay, in money"
    against = within.benchmarks["b"]
    assert (against.annual_return, against.excess_annual_return, against.alpha) == (None, None, None)
    assert against.beta is not None and against.tracking_error is not None and against.information_ratio is not None
    assert against.note == (
        "249 days of returns, under a year (250): a return over less than a year is not annualised (GIPS), so no "
        "annual return, excess annual return or alpha is given; the total return is the benchmark's return over "
        "these days, beside the record's."
    )
    assert within.sharpe is not None and within.sortino is not None and within.annual_volatility is not None
    year = statistics(short, {"b": bench}, traded_value=50.0, mean_equity=100.0, costs=costs)
    assert year.note is None and year.benchmarks["b"].note is None
    assert year.annual_return == pytest.approx(ep.annual_return(short, annualization=250), abs=1e-4)
    assert year.calmar == pytest.approx(ep.calmar_ratio(short, annualization=250), abs=1e-3)
    assert year.annual_turnover == 0.5 and year.costs.share_of_equity_per_year == 0.35
    mine, theirs = ep.annual_return(short, annualization=250), ep.annual_return(bench, annualization=250)
    assert year.benchmarks["b"].annual_return == pytest.approx(theirs, abs=1e-4)
    assert year.benchmarks["b"].excess_annual_return == pytest.approx(mine - theirs, abs=1e-4)
    assert year.benchmarks["b"].alpha == pytest.approx(ep.alpha(short, bench, annualization=250), abs=1e-4)


def test_the_ratios_beta_and_alpha_wait_for_enough_days_then_are_the_library_s() -> None:
    """A slope fitted to a few points is noise, and its daily alpha compounded over 250 days
    explodes (two days once showed a beta of -72 and an alpha of 5e21); a daily mean over its
    deviation scaled by sqrt(250) is as noisy (two days once showed a Sharpe of -11.18 and an
    information ratio of 127.9): below MIN_BETA_DAYS the volatility, Sharpe, Sortino, tracking
    error, information ratio, beta and alpha are null and the notes say why; from it on, they
    are the library's (alpha, a return a year, waits for a year of returns)."""
    rng = np.random.default_rng(7)
    days = pd.bdate_range("2026-01-05", periods=MIN_BETA_DAYS)
    bench = pd.Series(rng.normal(0.0, 0.01, MIN_BETA_DAYS), index=days)
    returns = 0.6 * bench + pd.Series(rng.normal(0.0005, 0.004, MIN_BETA_DAYS), index=days)
    few = statistics(returns.iloc[1:], {"b": bench})
    short = few.benchmarks["b"]
    assert (short.beta, short.alpha, short.tracking_error, short.information_ratio) == (None, None, None, None)
    assert short.note.startswith(
        f"Tracking error, information ratio, beta and alpha need at least {MIN_BETA_DAYS} days of returns; "
        f"{MIN_BETA_DAYS - 1} here: a daily mean or deviation over fewer, scaled to a year, or a regression on them, "
        f"is noise. {MIN_BETA_DAYS - 1} days of returns, under a year"
    )
    assert (few.sharpe, few.sortino, few.annual_volatility) == (None, None, None)
    assert few.note.startswith(f"Volatility, Sharpe and Sortino need at least {MIN_BETA_DAYS} days of returns")
    assert few.total_return is not None and few.max_drawdown is not None, "the figures over the days stay"
    full = statistics(returns, {"b": bench})
    enough = full.benchmarks["b"]
    assert enough.note.startswith(f"{MIN_BETA_DAYS} days of returns, under a year"), "alpha waits for a year"
    assert full.note.startswith(f"{MIN_BETA_DAYS} days of returns, under a year")
    assert enough.beta == pytest.approx(np.cov(returns, bench)[0, 1] / np.var(bench, ddof=1), abs=1e-3)
    assert enough.information_ratio == pytest.approx(ep.excess_sharpe(returns, bench) * math.sqrt(250), abs=1e-3)
    assert full.sharpe == pytest.approx(ep.sharpe_ratio(returns, annualization=250), abs=1e-3)
    assert enough.alpha is None  # a year of returns: the regression's (the test above)


def test_a_partial_year_of_by_year_has_the_ratios_only_from_enough_days() -> None:
    """`by_year` measures each calendar year by `statistics`' one rule: a span's first year
    with a few days (a record from the 20th of December) has no volatility, Sharpe, Sortino,
    tracking error or information ratio, and says why; its whole next year has them."""
    from portfolio.track_record import by_year

    rng = np.random.default_rng(3)
    days = pd.bdate_range("2025-12-22", "2026-12-31")
    bench = pd.Series(rng.normal(0.0004, 0.008, len(days)), index=days)
    returns = 0.8 * bench + pd.Series(rng.normal(0.001, 0.004, len(days)), index=days)
    years = by_year(returns, {"b": bench})
    partial, whole = years["2025"], years["2026"]
    assert partial.days < MIN_BETA_DAYS and (partial.sharpe, partial.annual_volatility) == (None, None)
    assert partial.benchmarks["b"].information_ratio is None and partial.benchmarks["b"].tracking_error is None
    assert partial.note.startswith(f"Volatility, Sharpe and Sortino need at least {MIN_BETA_DAYS} days")
    assert whole.sharpe is not None and whole.benchmarks["b"].information_ratio is not None and whole.note is None


def test_deposits_and_withdrawals_are_not_performance() -> None:
    equity = pd.Series([100.0, 150.0, 165.0], index=DAYS[:3])
    deposits = pd.Series([0.0, 50.0, 0.0], index=DAYS[:3])  # 50 deposited on the second day
    assert daily_returns(equity, deposits).tolist() == pytest.approx([0.0, 0.10])


def test_a_day_with_nothing_to_start_from_has_no_return_not_zero_or_infinite() -> None:
    """From nothing before it: the first day's deposit is its base; a withdrawal leaves at
    the day's end (it earned the day); a day that starts from 0 with equity is undefined
    (NaN), one with nothing before or after earned nothing."""
    days = [date(2026, 1, 5) + timedelta(days=i) for i in range(5)]
    equity = pd.Series([95.0, 0.0, 0.0, 10.0, 11.0], index=days)
    deposits = pd.Series([100.0, 0.0, 0.0, 0.0, 0.0], index=days)
    withdrawals = pd.Series([0.0, 99.75, 0.0, 0.0, 0.0], index=days)  # all 99.75 withdrawn after a +5% day
    returns = daily_returns(equity, deposits, withdrawals, opening=0.0)
    assert returns.iloc[:3].tolist() == pytest.approx([-0.05, 0.05, 0.0])
    assert math.isnan(returns.iloc[3]) and returns.iloc[4] == pytest.approx(0.10)


def test_the_equal_weighted_liquid_benchmark_holds_last_months_liquid_names_for_the_month() -> None:
    rows = []
    for d, a, b, c in (
        (date(2026, 1, 30), 10.0, 20.0, 5.0),
        (date(2026, 2, 2), 11.0, 20.0, 50.0),
        (date(2026, 2, 3), 12.1, 22.0, 5.0),
    ):
        for symbol, close, volume in (("A", a, 10_000), ("B", b, 10_000), ("C", c, 0)):
            rows.append(
                {
                    "symbol": symbol,
                    "date": d,
                    "close": close,
                    "volume": volume,
                    "adv_20": 10_000.0,
                    "bid": close * 0.99,
                    "ask": close * 1.01,
                    "high": close,
                    "low": close,
                }
            )
    ew = equal_weight_liquid(pd.DataFrame(rows))
    # C did not trade on 30 January: not in February's basket, whatever it does
    assert ew.loc[date(2026, 2, 2)] == pytest.approx((1.1 + 1.0) / 2 - 1)
    assert ew.loc[date(2026, 2, 3)] == pytest.approx(((1.21 + 1.1) / 2) / ((1.1 + 1.0) / 2) - 1)


def test_the_cap_weighted_index_moves_with_capitalisation_and_ignores_untraded_days() -> None:
    from portfolio.track_record import cap_weighted_index

    closes = pd.DataFrame({"A": [10.0, 11.0, None], "B": [5.0, 5.0, 4.0]}, index=DAYS[:3])
    shares = pd.DataFrame(
        {"symbol": ["A", "B", "B"], "report_date": [DAYS[0], DAYS[0], DAYS[2]], "shares_outstanding": [100, 200, 300]}
    )
    index = cap_weighted_index(closes, shares)
    assert index.loc[DAYS[1]] == pytest.approx((1100 + 1000) / (1000 + 1000) - 1)
    # A did not trade on the third day (its last close stands); B's new share count counts from its report
    assert index.loc[DAYS[2]] == pytest.approx((1100 + 4.0 * 300) / (1100 + 5.0 * 300) - 1)


def _day_by_day(closes: pd.DataFrame, shares: pd.DataFrame) -> pd.Series:
    """The index's definition read one day at a time (the shares known on each day)."""
    closes = closes.sort_index().ffill()
    known = shares.dropna(subset=["shares_outstanding"]).sort_values("report_date")
    out = {}
    for previous, day in zip(closes.index[:-1], closes.index[1:], strict=True):
        held = known[known["report_date"] <= day].groupby("symbol")["shares_outstanding"].last()
        held = held[[s for s in held.index if s in closes.columns]]
        before, now = closes.loc[previous, held.index], closes.loc[day, held.index]
        usable = before.notna() & now.notna() & (before > 0)
        cap = float((before[usable] * held[usable]).sum())
        out[day] = float((now[usable] * held[usable]).sum()) / cap - 1 if cap > 0 else 0.0
    return pd.Series(out, dtype=float)


@pytest.mark.parametrize("seed", range(12))
def test_the_cap_weighted_index_is_its_definition_day_by_day(seed: int) -> None:
    """Untraded days, zero closes, reports before, inside and after the span, a report of a
    name never priced, a share count not known: the one pass gives each day's change."""
    from portfolio.track_record import cap_weighted_index

    rng = np.random.default_rng(seed)
    days = sorted(date(2024, 1, 1) + timedelta(days=int(d)) for d in rng.choice(200, rng.integers(2, 40), False))
    symbols = [f"S{i}" for i in range(rng.integers(1, 10))]
    closes = pd.DataFrame(rng.uniform(1, 100, (len(days), len(symbols))), index=days, columns=symbols)
    closes[rng.random(closes.shape) < 0.3] = np.nan
    closes[rng.random(closes.shape) < 0.03] = 0.0
    reports = int(rng.integers(0, 25))
    shares = pd.DataFrame(
        {
            "symbol": rng.choice([*symbols, "NEVER_PRICED"], reports),
            "report_date": [date(2023, 12, 1) + timedelta(days=int(d)) for d in rng.integers(0, 250, reports)],
            "shares_outstanding": rng.uniform(1e5, 1e7, reports),
        }
    ).drop_duplicates(["symbol", "report_date"])
    shares.loc[rng.random(len(shares)) < 0.1, "shares_outstanding"] = np.nan
    expected, found = _day_by_day(closes, shares), cap_weighted_index(closes, shares)
    assert list(found.index) == list(expected.index)
    np.testing.assert_allclose(found.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-12)


def test_an_all_cash_book_says_its_ratios_describe_cash_not_skill() -> None:
    """Issue 55: a book that held only cash while the index fell showed a positive
    information ratio and nothing said why."""
    from portfolio.track_record import MOSTLY_CASH_EXPOSURE, by_year

    month = pd.bdate_range("2026-01-05", periods=MIN_BETA_DAYS).date
    returns = pd.Series(0.0, index=month)
    falling = pd.Series(np.tile([-0.01, -0.02, 0.005, -0.015, -0.01], MIN_BETA_DAYS // 5), index=month)
    cash = pd.Series(0.0, index=month)
    stats = statistics(returns, {"index": falling}, exposure=cash, fill_count=0).as_dict()
    assert stats["benchmarks"]["index"]["information_ratio"] > 0  # "beats" a falling index by holding cash
    assert stats["average_exposure"] == 0.0 and stats["fill_count"] == 0
    assert stats["mostly_cash"] is True
    assert "holding cash, not skill" in stats["note"] and f"{MOSTLY_CASH_EXPOSURE:.0%}" in stats["note"]

    yearly = by_year(returns, {"index": falling}, exposure=cash, fills_per_day=pd.Series(dtype=float))
    assert yearly["2026"].mostly_cash is True and yearly["2026"].fill_count == 0


@pytest.mark.parametrize(
    ("days", "said"),
    [
        (MIN_BETA_DAYS - 8, "so its return beside the benchmarks' describes holding cash"),
        (MIN_BETA_DAYS + 10, "so its information ratio and beta against the benchmarks describe holding cash"),
        (TRADING_DAYS_PER_YEAR + 5, "so its excess return, information ratio, beta and alpha against the benchmarks"),
    ],
)
def test_a_cash_books_note_names_only_the_figures_it_is_given(days: int, said: str) -> None:
    """Under 20 days of returns the cash note said the book's "excess return, information
    ratio, beta and alpha against the benchmarks describe holding cash", figures null for
    another reason (too few days, under a year), which the note goes on to give: it names
    the figures against the benchmarks the record gives, and the reason for the others is
    said once, by its own rule."""
    span = pd.bdate_range("2025-01-06", periods=days).date
    returns = pd.Series(np.tile([0.001, -0.0005], days // 2 + 1)[:days], index=span)
    falling = pd.Series(np.tile([-0.01, 0.004, -0.006], days // 3 + 1)[:days], index=span)
    stats = statistics(returns, {"index": falling}, exposure=pd.Series(0.0, index=span)).as_dict()
    assert said in stats["note"], stats["note"]
    given = {
        k
        for k in ("excess_annual_return", "information_ratio", "beta", "alpha")
        if stats["benchmarks"]["index"][k] is not None
    }
    named = {
        "excess_annual_return": "excess return",
        "information_ratio": "information ratio",
        "beta": "beta",
        "alpha": "alpha",
    }
    cash_note = stats["note"].split("holding cash, not skill.")[0]
    assert {k for k, word in named.items() if word in cash_note} == given


def test_an_invested_book_is_not_flagged_and_its_exposure_is_the_mean_over_its_days() -> None:
    returns = pd.Series([0.01, -0.02, 0.005, 0.01, 0.0], index=DAYS[1:])
    exposure = pd.Series([0.5, 0.9, 1.0, 1.0, 0.95, 0.9], index=DAYS)  # the first day is before the returns
    stats = statistics(returns, {"index": returns * 0.5}, exposure=exposure, fill_count=7).as_dict()
    assert stats["average_exposure"] == pytest.approx((0.9 + 1.0 + 1.0 + 0.95 + 0.9) / 5, abs=1e-4)
    assert stats["mostly_cash"] is False and stats["fill_count"] == 7
    assert "cash" not in stats["note"] and "5 days of returns, under a year" in stats["note"], "only the short span"
    # nearly all cash: under the threshold on average is flagged too
    nearly = statistics(returns, {}, exposure=pd.Series(0.03, index=DAYS)).as_dict()
    assert nearly["mostly_cash"] is True and nearly["average_exposure"] == pytest.approx(0.03)
    # without the inputs, nothing is claimed of what the book held (the note only says the span is short)
    claimed = statistics(returns, {}).as_dict()
    assert not {k for k in ("average_exposure", "mostly_cash", "fill_count") if claimed[k] is not None}
    assert "cash" not in claimed["note"] and "5 days of returns, under a year" in claimed["note"]


def test_too_few_days_say_why() -> None:
    one = statistics(pd.Series([0.01], index=DAYS[1:2]), {}, fill_count=2).as_dict()
    assert one["days"] == 1 and one["fill_count"] == 2 and "at least two" in one["reason"]
    assert one["first"] == one["last"] == DAYS[1]  # a day alone still says which day it was
    assert statistics(pd.Series([], dtype=float), {}).as_dict()["first"] is None


def test_a_book_with_no_day_yet_has_no_returns_not_an_error() -> None:
    """The Compliance Report of a store whose AI book has not traded read its curve's
    returns: an empty curve with an opening equity raised IndexError."""
    import pandas as pd

    from portfolio.track_record import daily_returns

    assert daily_returns(pd.Series([], dtype=float), opening=1_000_000.0).empty


def test_money_in_and_out_on_one_day_is_no_return() -> None:
    """100,000 deposited, traded for a 1,000 gain and withdrawn on the same day: the day's
    base is the deposit, its return about +1%. Netted (0 in), it read +100% on a later day
    and a day starting from nothing (no statistics ever) on a book's first."""
    days = [date(2026, 1, 5) + timedelta(days=i) for i in range(2)]
    equity = pd.Series([1_000.0, 2_000.0], index=days)
    deposits = pd.Series([1_000.0, 100_000.0], index=days)
    withdrawals = pd.Series([0.0, 100_000.0], index=days)
    returns = daily_returns(equity, deposits, withdrawals, opening=0.0)
    assert returns.tolist() == pytest.approx([0.0, 1_000 / 101_000])
    first = daily_returns(
        pd.Series([1_000.0], index=days[:1]),
        deposits[:1] * 0 + 100_000.0,
        pd.Series([100_000.0], index=days[:1]),
        opening=0.0,
    )
    assert first.tolist() == pytest.approx([0.01])


def test_a_whole_calendar_year_of_a_market_with_fewer_sessions_is_annualised() -> None:
    """A market with more holidays (or whole days missing from its files) holds fewer than
    TRADING_DAYS_PER_YEAR sessions in a calendar year: 240 returns from the year's first
    session to its last are a year (`YEAR_SPAN_DAYS` apart) and have their annual figures,
    as every whole year of a backtest's per-year table must; the same 240 returns over ten
    months are not."""
    year = pd.Series(np.random.default_rng(3).normal(0.0008, 0.01, 240))
    bench = pd.Series(np.random.default_rng(4).normal(0.0004, 0.008, 240))
    whole = pd.date_range("2025-01-03", "2025-12-30", periods=240).normalize()
    months = pd.bdate_range("2025-01-06", periods=240)[:240]
    spread = statistics(year.set_axis(whole), {"b": bench.set_axis(whole)})
    assert spread.annual_return == pytest.approx(ep.annual_return(year, annualization=250), abs=1e-4)
    assert spread.benchmarks["b"].excess_annual_return is not None and spread.note is None
    packed = statistics(year.set_axis(months), {"b": bench.set_axis(months)})
    assert packed.annual_return is None and packed.benchmarks["b"].excess_annual_return is None
    assert packed.note.startswith("240 days of returns, under a year (250)")
