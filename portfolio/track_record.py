"""Track-record statistics beside two benchmarks, from empyrical (empyrical-reloaded).

The statistics a quant expects of a book, computed by a well-kept library rather than by
hand: empyrical-reloaded (the maintained fork of Quantopian's empyrical, the library
behind pyfolio's tear sheets; light: numpy, pandas, scipy, bottleneck). quantstats would
have brought matplotlib, seaborn and yfinance along for the same figures.

For a daily equity curve (the AI portfolio live or replayed, the backtest, a client's
ledger valued each day, dividends and cash movements included):

- total and annual return, annual volatility, Sharpe and Sortino ratios (risk-free rate
  0: the figures compare books, not a cash rate), maximum drawdown (a positive fraction)
  and Calmar ratio; annual turnover (value traded / mean equity / years) and the costs
  paid (fees, spread, impact, their total and its share of mean equity a year);
- beside each benchmark over the same days: the benchmark's own total and annual return,
  excess annual return, tracking error (annualised volatility of the daily active
  return), information ratio (mean over standard deviation of the daily active return,
  annualised: empyrical's `excess_sharpe` x sqrt(250); null, with a `note`, where that
  standard deviation is under SAME_RETURN: the books track each other), beta and annual alpha;
- below MIN_BETA_DAYS (20) daily returns the figures that scale a daily mean or deviation to a
  year by sqrt(250) (volatility, Sharpe, Sortino, tracking error, information ratio) and the
  regression's beta and alpha are null, and the notes say why (`too_few_days`): over two days
  a Sharpe of -11 or an information ratio of 128 is noise a reader takes for a figure. The
  rule is `statistics`', so it holds for every span it measures: a whole record, a calendar
  year of `by_year` (a span's partial first or last year with fewer days has none), a
  comparison, the null books;
- under a year of returns (fewer than YEAR_OF_RETURNS daily returns, first and last days under
  YEAR_SPAN_DAYS apart) nothing is annualised
  (GIPS: "returns for periods of less than one year must not be annualized"): the annual
  return, Calmar, annual turnover and costs a year, and each benchmark's annual return,
  excess annual return and alpha are null, and the notes say why and point at the total
  return (`under_a_year`). Volatility, Sharpe, Sortino, tracking error and the information
  ratio compound no return: from MIN_BETA_DAYS returns on they are given under a year too;
- what the book held, so the ratios are read for what they are: `average_exposure` (the
  mean over the days of market value / equity, a fraction: 0 all cash, 1 fully invested;
  from the caller's `exposure` series), `fill_count` (the fills in the span, passed by the
  caller), and `mostly_cash` with a plain `note` when the average exposure is under
  MOSTLY_CASH_EXPOSURE (5%): a book that held cash while the index fell "beats" it, and
  its information ratio describes holding cash, not skill.

A day's return is time-weighted between closes, net of the money moved in or out
(`daily_returns`): the day's deposits (and the shares a statement sync brought in) arrive
at its start, so they are part of the base the day's return is earned on, and its
withdrawals leave at its end, so they earned the day's return before leaving:
r = (equity + withdrawn) / (previous equity + deposited) - 1, the day's flows netted.
A book's first day is measured from nothing before it (its first deposit is the base),
and a day whose base is 0 or less has no return (NaN: a client's record then says why
instead of figures). Years have 250 trading days (this exchange's calendar), passed to
empyrical as the annualisation.

The benchmarks (`equal_weight_liquid`, `index_returns`):
- the equal-weighted liquid universe: at each month's start, every name that passed the
  entry gates (market/liquidity.py) on the last trading day before it, bought in equal
  amounts and held through the month (untraded days at the last close), rebalanced
  monthly; no costs (a benchmark is what the market gave, not a strategy); a total
  return where the caller passes the dividends (`reinvested`: each reinvested at its
  ex-date's close), as the track records do, since a book's equity includes its dividends;
- the market's index: the levels the exchange publishes (or a replayed file carries, the
  NSE's NASI) where the store holds them (`benchmark_index` says which, `index_returns`),
  else the service's capitalisation-weighted index (`cap_weighted_index`, the day's change
  as views/breadth.py defines it, shares on the closes' count, dividends added on their
  ex-dates where passed: a total-return index, while breadth's is a price index), as daily
  returns.

The AI portfolio's record also carries its null books over its own days (`NullRecord`,
portfolio/nulls.py `against_nulls`): books that obey its mandate by chance, replayed by the
backtest's engine beside the model's own book replayed by the same engine.

These dataclasses are the track record's one declaration: REST's schemas and GraphQL's
types are derived from them (api/schemas/derived.py, api/graphql/types/derived.py), every
field in its order with its type (`Money`, `Fraction`: market/money.py) and its
description, written here (market.contract `described`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from market.clock import TRADING_DAYS_PER_YEAR
from market.contract import described
from market.costs import CostBreakdown
from market.liquidity import passes_entry_gates
from market.money import Fraction, Money, to_cents
from store.splits import Split, shares_on_count

MOSTLY_CASH_EXPOSURE = 0.05  # an average exposure under this: the book held cash, the ratios say so
# A hundredth of a basis point a day: below it two books' days are the same (a null book's
# tie with the model's, portfolio/nulls.py), and a daily active return whose standard deviation
# is below it is none: the book tracks its benchmark (e.g. a mean of books that all held the
# same) and its information ratio would be rounding noise (`tracking_note`).
SAME_RETURN = 1e-6
TRACK_EACH_OTHER = (
    "The books track each other: their daily differences vary by under a hundredth of a basis point, so there is "
    "no information ratio."
)
# Beta and alpha are a regression of the book's daily returns on the benchmark's: on fewer days
# than this the slope is noise (a two-day record once showed a beta of -72), and the daily
# intercept compounded over 250 days explodes (an alpha of 5e21). The ratios that scale a daily
# mean or deviation by sqrt(250) are as noisy (a two-day record once showed a Sharpe of -11.18
# and an information ratio of 127.9). 20 days is a trading month, the span of the record's other
# windows (the 20-day average volume of the liquidity gates, the bought-and-held null's first
# month of 21 sessions); below it all of them are null and the notes say why (`too_few_days`).
MIN_BETA_DAYS = 20
# GIPS: "returns for periods of less than one year must not be annualized". 1% in two days
# compounds to +247% a year, and a new book's first purchases (about its equity once) over two
# days read as 125x turnover a year. A figure a year, whether it compounds a return (the annual
# return, Calmar on it, a benchmark's annual return, the excess annual return, alpha: the daily
# intercept compounded over a year) or scales a span's total up to a year (turnover, costs a
# year), needs a year of returns: this many daily returns, the sessions a year counts
# (TRADING_DAYS_PER_YEAR), or returns whose first and last days lie YEAR_SPAN_DAYS or more
# apart. Every calendar year of this exchange's calendar holds 250 to 254 sessions and of the
# NSE files 251 to 255; a market with fewer sessions (more holidays, or whole days without a
# trade missing from its files: 240 a year is common) holds a whole calendar year from its
# first session (by the 4th of January, a holiday and a weekend after New Year) to its last
# (from the 28th of December), 358 days or more apart: so a whole calendar year (`by_year`) has
# its annual figures on any market and a part of one has not. Under both they are null and the
# notes say why.
YEAR_OF_RETURNS = TRADING_DAYS_PER_YEAR
YEAR_SPAN_DAYS = 355
A_YEAR = f"{YEAR_OF_RETURNS} returns or {YEAR_SPAN_DAYS} calendar days"  # how the fields say it
# The benchmarks a record is compared with, by the key both transports use (REST's map
# key, GraphQL's field in camelCase): the equal-weighted liquid universe and the index.
BENCHMARKS = ("equal_weight_liquid", "index")
# The AI portfolio's records, by the same key in both transports: the days replayed on the
# validation record and the live days.
RECORDS = ("validation", "live")
COST_PARTS = ("fees", "spread", "impact")  # a CostBreakdown's parts, as the backtest's frames name their columns


@dataclass(frozen=True)
class CostsPaid:
    """Costs the book paid, in money to the cent (exact Decimal, summed from the trades'
    cost columns before rounding), and their share of mean equity a year (a fraction)."""

    fees: Money
    spread: Money = described("Paid to the spread: what the fills lost against the mid.")
    impact: Money = described("Paid to the square-root impact past the touch.")
    total: Money
    share_of_equity_per_year: Fraction | None = described(
        f"The total over the mean equity, a year (a fraction); null under a year ({A_YEAR}) of "
        "returns, where the total is what was paid.",
        default=None,
    )

    @classmethod
    def of(cls, paid: CostBreakdown, mean_equity: float, years: float | None) -> CostsPaid:
        """`years`: the span's (None under a year of returns: no share a year, `under_a_year`)."""
        share = None if years is None else _round(float(paid.total) / mean_equity / years)
        parts = (paid.fees, paid.spread, paid.impact, paid.total)
        return cls(*(to_cents(part) for part in parts), share_of_equity_per_year=share)


@dataclass(frozen=True)
class BenchmarkComparison:
    """The book beside one benchmark over the same days (fractions; 250 trading days a year)."""

    total_return: Fraction | None = described("The benchmark's return over the record's days.", default=None)
    annual_return: Fraction | None = described(
        f"The benchmark's return compounded to a year; null under a year ({A_YEAR}) of returns (`note` says why).",
        default=None,
    )
    excess_annual_return: Fraction | None = described(
        f"The book's annual return less the benchmark's; null under a year ({A_YEAR}) of returns.",
        default=None,
    )
    tracking_error: Fraction | None = described(
        f"The annualised volatility of the daily active return; null below {MIN_BETA_DAYS} days of returns "
        "(`note` says why).",
        default=None,
    )
    information_ratio: float | None = described(
        "The daily active return's mean over its standard deviation, x sqrt(250); null below "
        f"{MIN_BETA_DAYS} days of returns (`note` says why) or where the book is its benchmark.",
        default=None,
    )
    beta: float | None = described(
        "The slope of the book's daily returns on the benchmark's; null below "
        f"{MIN_BETA_DAYS} days of returns (`note` says why).",
        default=None,
    )
    alpha: Fraction | None = described(
        "The regression's daily intercept compounded over 250 days; null below "
        f"{MIN_BETA_DAYS} days of returns and under a year ({A_YEAR}) of them (`note` says why).",
        default=None,
    )
    note: str | None = described(
        f"Why figures are null: tracking error, information ratio, beta and alpha below {MIN_BETA_DAYS} days, too "
        "few to scale to a year or regress on; the annual "
        f"return, excess annual return and alpha under a year ({A_YEAR}) of returns, which are not "
        "annualised; the information ratio where the book tracks the benchmark (its daily differences vary by "
        "under a hundredth of a basis point); else null.",
        default=None,
    )


def under_a_year(days: int, first: date | None = None, last: date | None = None) -> str | None:
    """Why nothing is annualised over `days` daily returns from `first` to `last`; None from a
    year on: YEAR_OF_RETURNS returns, or a first and a last day YEAR_SPAN_DAYS apart."""
    if days >= YEAR_OF_RETURNS or (first is not None and last is not None and (last - first).days >= YEAR_SPAN_DAYS):
        return None
    return (
        f"{days} days of returns, under a year ({YEAR_OF_RETURNS}): a return over less than a year is not "
        "annualised (GIPS)"
    )


def _year_of(returns: pd.Series) -> str | None:
    """`under_a_year` of daily `returns` (indexed by date, sorted)."""
    return under_a_year(len(returns), _day(returns.index[0]), _day(returns.index[-1])) if len(returns) else None


def _a_year(value: Any, why: str | None, digits: int = 4) -> float | None:
    """`value` rounded (`_round`) where nothing says why not; None where `why` does (`under_a_year`'s
    or `too_few_days`' reason)."""
    return None if why else _round(value, digits)


def joined(*notes: str | None) -> str | None:
    """The notes given, in order, as one; None without any."""
    return " ".join(n for n in notes if n) or None


def tracking_note(sd: float) -> str | None:
    """Why a comparison has no information ratio: its daily active return's standard
    deviation `sd` is below SAME_RETURN; None otherwise."""
    return TRACK_EACH_OTHER if sd < SAME_RETURN else None


def too_few_days(days: int, figures: str) -> str | None:
    """Why `figures` (named in words: "Volatility, Sharpe and Sortino") are null over `days` days
    of returns: below MIN_BETA_DAYS a daily mean or deviation scaled to a year, or a regression,
    is noise; None when there are enough. The one rule for every figure it names."""
    if days >= MIN_BETA_DAYS:
        return None
    return (
        f"{figures} need at least {MIN_BETA_DAYS} days of returns; {days} here: a daily mean or deviation over "
        "fewer, scaled to a year, or a regression on them, is noise."
    )


RECORD_RATIOS = "Volatility, Sharpe and Sortino"  # the record's figures `too_few_days` nulls
COMPARISON_RATIOS = "Tracking error, information ratio, beta and alpha"  # a comparison's


# What the null books' figures are measured against (a key of BENCHMARKS).
NULL_BENCHMARK = "equal_weight_liquid"
# The null families (portfolio/nulls.py), by the key both transports use, each with what its ranking is.
NULL_FAMILY_RANKINGS = {
    "daily_random": "A fresh random ranking every day, one book per seed.",
    "fixed_random": "One random ranking of the symbols for the whole span, one book per seed.",
    "size": "Ranked by traded value (ADV_20 x the close) each day.",
    "bought_and_held": "The model's ranking for its first month, then that month's book held.",
    "inverted": "The model's ranking reversed.",
}
NULL_FAMILIES = tuple(NULL_FAMILY_RANKINGS)
# A percentile among fewer books than this (the daily random family's default) is too coarse to
# read: over one book it is 0, 50 or 100, and over a handful one book moves it by tens of points
# (portfolio/nulls.py `standing`).
FEW_BOOKS = 10
REPLAYED = (
    "The replayed model book is the AI book's rule (the same Mandate, universe, gates, fills and fee schedule) run "
    "by the backtest's engine over the executed days' stored predictions and bars, the engine the null books run "
    "on: like is ranked with like, not the portfolio's executed record against replays."
)


@dataclass(frozen=True)
class NullSpread:
    """A figure over a null family's books: the mean, the lowest and the highest."""

    mean: float | None = described("The mean over the family's books that have the figure; null without any.")
    lowest: float | None = described("The lowest of the family's books.")
    highest: float | None = described("The highest of the family's books.")


@dataclass(frozen=True)
class NullFamily:
    """A null family beside the replayed model book (portfolio/nulls.py `family_figures`):
    its books' information ratio and excess a year against the equal-weighted liquid
    universe, the model's percentile among the books by information ratio and how many it
    beats."""

    family: str = described(
        "The null family, by its ranking: "
        + "; ".join(f"{name}: {ranking[0].lower()}{ranking[1:-1]}" for name, ranking in NULL_FAMILY_RANKINGS.items())
        + "."
    )
    books: int = described("How many books of the family were replayed (0: too few days for it; note says why).")
    information_ratio: NullSpread = described(
        "The family's books' information ratios against the equal-weighted liquid universe on closes alone."
    )
    excess_annual_return: NullSpread = described(
        "The family's books' excess annual return over the equal-weighted liquid universe on closes alone "
        f"(fractions, 250 trading days a year); null under a year ({A_YEAR}) of returns."
    )
    model_percentile: float | None = described(
        "Where the replayed model book ranks among the family's books by information ratio against the "
        "equal-weighted liquid universe on closes alone: the share of the books below it, ties counting half, in "
        f"percent; null without books or ratios. Over one book it can only be 0, 50 or 100, and over fewer than "
        f"{FEW_BOOKS} books one book moves it by tens of points: read `model_beats` of `books` there. {REPLAYED}"
    )
    model_beats: int = described(
        "How many of the family's books the replayed model book's information ratio beats (a tie is not beaten); "
        "0 where there are no ratios (`model_percentile` null)."
    )
    note: str | None = described(
        "Why the family has no books or no figures, or that every book of it earned what the replayed model book "
        "earned each day (its percentile a tie); else null.",
        default=None,
    )


@dataclass(frozen=True)
class NullRecord:
    """The AI portfolio over its own span against its null books (portfolio/nulls.py): each
    family's figures and the replayed model book's percentile in it, and the replayed model
    book against the mean of the fixed random books. Their universe is on closes alone (no
    dividends: the replay credits none, views.track_record.null_benchmark), not the
    track record's total-return benchmark."""

    days: int = described("The executed days replayed: every day of the record, from its first.")
    model_total_return: Fraction | None = described(
        "The replayed model book's total return over the days (a fraction), beside the record's own total return (the "
        f"AI portfolio's as executed, its replayed and live days alike): the note says how far apart they are and "
        f"why. {REPLAYED}",
        default=None,
    )
    model_excess_annual_return: Fraction | None = described(
        "The replayed model book's excess annual return over the equal-weighted liquid universe on closes alone; "
        f"null under a year ({A_YEAR}) of returns, which is not annualised (the note says so).",
        default=None,
    )
    model_information_ratio: float | None = described(
        "The replayed model book's information ratio against the equal-weighted liquid universe on closes alone: "
        "what its percentile in each family ranks.",
        default=None,
    )
    families: dict[str, NullFamily] = described(
        "Each null family's figures against the equal-weighted liquid universe on closes alone and the replayed "
        "model book's percentile among its books, by family (daily_random, fixed_random, size, bought_and_held, "
        "inverted).",
        default_factory=dict,
    )
    fixed_random_mean: BenchmarkComparison | None = described(
        "The replayed model book against the mean of the fixed random books (their daily returns averaged, a "
        "benchmark like the others): its active return a year (the excess annual return, null under a year of "
        "returns), tracking error and information ratio from the daily differences; null below two days or without "
        "fixed random books.",
        default=None,
    )
    note: str | None = described(
        "How the replayed model book's return compares with the AI portfolio's as executed (its replayed and live "
        "days alike), why a figure is null (too few days; the excess annual returns under a year), whether the null "
        "books were ties (each earned what the model's book earned every day, so they cannot tell skill from the "
        "mandate); a short span says little about skill.",
        default=None,
    )


@dataclass(frozen=True)
class TrackRecord:
    """The track-record statistics, the one shape REST (api/schemas/portfolio.py) and
    GraphQL (api/graphql/types/track_record.py) serve, both derived from it: the same
    fields, snake_case in REST and camelCase in GraphQL (where GraphQL keys `benchmarks` and
    `records` by typed fields instead of a map, tests/api/test_shapes.py).

    `benchmarks` is keyed by BENCHMARKS' names (a benchmark without data is absent);
    `records` (the AI portfolio only) by `validation` and `live`; `nulls` (the AI portfolio's
    whole record only) its null books over the same days. A figure the days cannot give is
    None; `reason` says why when there are no statistics at all. `trades`, `index_source`,
    `records` and `nulls` are the view's (views/track_record.py), not `statistics`'."""

    days: int
    first: date | None = None
    last: date | None = None
    total_return: Fraction | None = described("The book's return over the record's days.", default=None)
    annual_return: Fraction | None = described(
        f"The total return compounded to a year; null under a year ({A_YEAR}) of returns, which is "
        "not annualised (`note` says so).",
        default=None,
    )
    annual_volatility: Fraction | None = described(
        f"The daily returns' standard deviation x sqrt(250); null below {MIN_BETA_DAYS} days of returns (`note` "
        "says why).",
        default=None,
    )
    sharpe: float | None = described(
        f"The daily mean return over its standard deviation, x sqrt(250); null below {MIN_BETA_DAYS} days of returns.",
        default=None,
    )
    sortino: float | None = described(
        f"The daily mean return over its downside deviation, x sqrt(250); null below {MIN_BETA_DAYS} days of returns.",
        default=None,
    )
    max_drawdown: Fraction | None = None
    calmar: float | None = described(
        f"The annual return over the maximum drawdown; null under a year ({A_YEAR}) of returns.",
        default=None,
    )
    annual_turnover: float | None = described(
        f"The value traded over the mean equity, a year; null under a year ({A_YEAR}) of returns, "
        "where a new book's first purchases would read as many times its equity a year.",
        default=None,
    )
    costs: CostsPaid | None = None
    benchmarks: dict[str, BenchmarkComparison] = described(
        "By benchmark, as total returns (stored dividends reinvested at their ex-date's close, splits on one share "
        "count): equal_weight_liquid (the names that passed the entry gates at the month's start, held equally "
        "through the month) and index (see index_source; a published index is as the exchange publishes it); a "
        "benchmark without data is absent.",
        default_factory=dict,
    )
    index_source: str | None = described(
        "What the `index` benchmark is: the symbol of the index the exchange published (stored by T0 or the file "
        "importer, e.g. ^NASI, its levels as published), or cap_weighted (the service's capitalisation-weighted "
        "index with dividends reinvested: breadth's index_change_pct is the same index on price alone); null "
        "without one.",
        default=None,
    )
    trades: int | None = None
    fill_count: int | None = described(
        "Fills in the span: the AI portfolio's trades; a client's trades except the shares a statement sync booked "
        "(no order filled those).",
        default=None,
    )
    average_exposure: Fraction | None = described(
        "What the book held: the mean over the days of market value / equity at the close, a fraction (0 all "
        "cash, 1 fully invested). The benchmarks are fully invested.",
        default=None,
    )
    mostly_cash: bool | None = described(
        f"True when the average exposure is under {MOSTLY_CASH_EXPOSURE:.0%}: the figures against the "
        "benchmarks describe holding cash, not skill (`note` says so in words).",
        default=None,
    )
    note: str | None = described(
        "Plain words, naming no field (the reports print them): that the book held cash when `mostly_cash` is "
        f"true, below {MIN_BETA_DAYS} days of returns why no volatility, Sharpe or Sortino is given, and under a "
        "year of returns why no figure a year is given and that the total return is the return over the days; else "
        "null.",
        default=None,
    )
    reason: str | None = described(
        "Why there are no statistics, when there are none: e.g. no trades or cash movements yet, or too few "
        "market days since the first.",
        default=None,
    )
    records: dict[str, TrackRecord] | None = described(
        "The AI portfolio only: the same statistics over the days replayed on the validation record and over the "
        "live days, apart, keyed validation and live (a record without days is absent).",
        default=None,
    )
    nulls: NullRecord | None = described(
        "The AI portfolio's whole record only: its null books over the same days (books that obey its mandate by "
        "chance, portfolio/nulls.py), each family's figures and the replayed model book's percentile in it, and the "
        "replayed model book against the mean of the fixed random books; null for a client's book and for the "
        "validation and live parts.",
        default=None,
    )

    def with_view(self, **figures: int | str | dict[str, TrackRecord] | NullRecord | None) -> TrackRecord:
        """This record with the view's own fields (trades, index_source, records, reason, nulls)."""
        return replace(self, **figures)

    def as_dict(self) -> dict[str, object]:
        """Every field by name, nested records and figures as dicts (money Decimal, dates
        `date`): the plain form the reports and the CLI read."""
        return asdict(self)


def _round(value: Any, digits: int = 4) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if not math.isfinite(value) else round(value, digits)


def daily_returns(
    equity: pd.Series,
    deposits: pd.Series | None = None,
    withdrawals: pd.Series | None = None,
    opening: float | None = None,
) -> pd.Series:
    """Day-on-day returns of an equity curve indexed by date, net of the money from outside:
    a day's deposits (`deposits`, amounts in) arrive at its start and earn its return, its
    withdrawals (`withdrawals`, amounts out, positive) leave at its end and earn it too
    (module docstring), r = (E_t + W_t) / (E_t-1 + D_t) - 1. The two are kept apart, not
    netted: 100,000 deposited, traded and withdrawn on one day is a base of 100,000 and the
    day's gain, where a net of 0 made it +100% or a day starting from nothing. `opening`:
    the equity before the first day (a client's book: 0, so its first day's deposit is the
    base and its first day has a return); None: the first day is the base and has none. A
    day whose base is 0 or less: its return is NaN (undefined, not 0 or infinite: the
    caller refuses or flags it), except a day with nothing before or after (both 0), which
    earned nothing."""
    equity = equity.sort_index().astype(float)
    money_in, money_out = (
        (x.reindex(equity.index).fillna(0.0).astype(float) if x is not None else pd.Series(0.0, index=equity.index))
        for x in (deposits, withdrawals)
    )
    previous = equity.shift(1)
    if opening is not None and len(previous):  # an empty curve (no day yet) has no return
        previous.iloc[0] = float(opening)
    base = previous + money_in
    end = equity + money_out
    returns = (end / base.where(base > 0) - 1).where(~((base == 0) & (end == 0)), 0.0)
    return returns if opening is not None else returns.iloc[1:]


def statistics(
    returns: pd.Series,
    benchmarks: dict[str, pd.Series] | None = None,
    traded_value: float = 0.0,
    mean_equity: float | None = None,
    costs: CostBreakdown | None = None,
    exposure: pd.Series | None = None,
    fill_count: int | None = None,
) -> TrackRecord:
    """Every figure of the module's docstring for daily `returns` (indexed by date).

    `costs`: what the span's trades paid (exact money, market/costs.py); with a
    `mean_equity` they become `costs` (to the cent) and their share of equity a year.
    `exposure`: market value / equity at each day's close, indexed like `returns` (days
    outside `returns` are ignored); with it the figures carry `average_exposure` (its mean
    over the span's days, a fraction), `mostly_cash` (true when that is under
    MOSTLY_CASH_EXPOSURE) and `note` (plain words when it is true, else None).
    `fill_count`: the fills in the span, carried as given. Fewer than two days: only
    `days`, `fill_count`, a `reason` and, for one day, its date as `first` and `last` (a
    day alone has no statistics, but a record of it still says when it was)."""
    returns = returns.sort_index().astype(float)
    n = len(returns)
    counted = None if fill_count is None else int(fill_count)
    if n < 2:
        reason = f"{n} day(s) of returns: the statistics need at least two"
        day = _day(returns.index[0]) if n else None
        return TrackRecord(days=n, first=day, last=day, fill_count=counted, reason=reason)
    figures = cash_figures(n, _year_of(returns))
    held = holding(exposure.reindex(returns.index), figures) if exposure is not None else Holding()
    return TrackRecord(
        days=n,
        first=_day(returns.index[0]),
        last=_day(returns.index[-1]),
        **_figures(returns),
        **_turnover_and_costs(traded_value, mean_equity, costs, n, _year_of(returns)),
        benchmarks={name: _against(returns, series) for name, series in (benchmarks or {}).items()},
        fill_count=counted,
        average_exposure=held.average_exposure,
        mostly_cash=held.mostly_cash,
        note=joined(held.note, too_few_days(n, RECORD_RATIOS), _not_annualised(_year_of(returns))),
    )


def _not_annualised(why: str | None) -> str | None:
    """The record's note under a year of returns (`why`: `under_a_year`'s); None from a year on."""
    if why is None:
        return None
    return (
        f"{why}, so no annual return, Calmar, annual turnover or yearly cost share is given, nor any benchmark's "
        "annual return, excess annual return or alpha; the total return is the return over these days."
    )


def _day(value: Any) -> date:
    """A return's index label as a date (the curves are indexed by date or Timestamp)."""
    return value.date() if isinstance(value, pd.Timestamp) else value


def _figures(returns: pd.Series) -> dict[str, float | None]:
    """Return, risk and their ratios, by empyrical (module docstring): the annual return and
    Calmar compound the return to a year, so need a year of returns (`under_a_year`); the
    volatility, Sharpe and Sortino scale daily figures by sqrt(250), so need MIN_BETA_DAYS of
    them (`too_few_days`)."""
    import empyrical as ep

    ann, why, few = TRADING_DAYS_PER_YEAR, _year_of(returns), too_few_days(len(returns), RECORD_RATIOS)
    return {
        "total_return": _round(ep.cum_returns_final(returns)),
        "annual_return": _a_year(ep.annual_return(returns, annualization=ann), why),
        "annual_volatility": _a_year(ep.annual_volatility(returns, annualization=ann), few),
        "sharpe": _a_year(ep.sharpe_ratio(returns, annualization=ann), few, 3),
        "sortino": _a_year(ep.sortino_ratio(returns, annualization=ann), few, 3),
        "max_drawdown": _round(max(0.0, -float(ep.max_drawdown(returns)))),
        "calmar": _a_year(ep.calmar_ratio(returns, annualization=ann), why, 3),
    }


class TurnoverAndCosts(TypedDict, total=False):
    annual_turnover: float | None  # traded value over the mean equity, a year
    costs: CostsPaid | None


def _turnover_and_costs(
    traded_value: float, mean_equity: float | None, costs: CostBreakdown | None, days: int, why: str | None
) -> TurnoverAndCosts:
    """Annual turnover and the costs paid: both need a mean equity to be measured against,
    and a year of `days` (daily returns) to be a year's (`why`, `under_a_year`'s: else the turnover
    and the costs' share a year are null, the costs paid stay in money)."""
    if not mean_equity:
        return {}
    years = None if why else days / TRADING_DAYS_PER_YEAR
    return {
        "annual_turnover": None if years is None else _round(traded_value / mean_equity / years, 2),
        "costs": CostsPaid.of(costs, mean_equity, years) if costs is not None else None,
    }


@dataclass(frozen=True)
class Holding:
    """How much of its equity a book held invested: the mean of its daily exposures (a
    fraction), whether that is under MOSTLY_CASH_EXPOSURE, and the note saying so (None:
    no exposure known, or not mostly cash)."""

    average_exposure: float | None = None
    mostly_cash: bool | None = None
    note: str | None = None


def cash_figures(days: int, why: str | None) -> str:
    """What a mostly-cash book's note says describes holding cash: the figures against the
    benchmarks a record of `days` daily returns gives (`why`: `under_a_year`'s), never one
    that is null for another reason, which its own note gives (`too_few_days`, `under_a_year`):
    the information ratio and beta from MIN_BETA_DAYS, the excess return and alpha from a year;
    with neither, the return beside the benchmarks'."""
    ratios, year = too_few_days(days, COMPARISON_RATIOS) is None, why is None
    shown = {"excess return": year, "information ratio": ratios, "beta": ratios, "alpha": year and ratios}
    given = [name for name, is_given in shown.items() if is_given]
    if not given:
        return "its return beside the benchmarks' describes"
    listed = ", ".join(given[:-1]) + (" and " if len(given) > 1 else "") + given[-1]
    return f"its {listed} against the benchmarks describe"


def holding(exposure: pd.Series, figures: str) -> Holding:
    """`average_exposure`, `mostly_cash` and `note` for the daily exposures given (market
    value / equity; days without one are left out); `figures`: what the note says describes
    holding cash (`cash_figures`)."""
    known = pd.to_numeric(exposure, errors="coerce").astype(float).replace([np.inf, -np.inf], np.nan).dropna()
    if known.empty:
        return Holding()
    average = float(known.mean())
    mostly_cash = average < MOSTLY_CASH_EXPOSURE
    note = (
        f"The book held cash: on average {average:.1%} of its equity was invested (under "
        f"{MOSTLY_CASH_EXPOSURE:.0%}), so {figures} holding cash, not skill."
        if mostly_cash
        else None
    )
    return Holding(_round(average), mostly_cash, note)


def _against(returns: pd.Series, benchmark: pd.Series) -> BenchmarkComparison:
    """The book beside `benchmark` (module docstring): the annual and excess annual return
    and alpha compound to a year, so need a year of returns (`under_a_year`); the tracking
    error and information ratio scale the daily active return by sqrt(250) and beta and alpha
    are a regression, so all four need MIN_BETA_DAYS of returns (`too_few_days`)."""
    import empyrical as ep

    ann, n, why = TRADING_DAYS_PER_YEAR, len(returns), _year_of(returns)
    aligned = benchmark.reindex(returns.index).fillna(0.0).astype(float)
    active = returns - aligned
    sd = float(active.std(ddof=1))
    tracks = tracking_note(sd)
    own = ep.annual_return(returns, annualization=ann)
    theirs = ep.annual_return(aligned, annualization=ann)
    few = too_few_days(n, COMPARISON_RATIOS)
    alpha, beta = (None, None) if few else ep.alpha_beta(returns, aligned, annualization=ann)
    ratio = ep.excess_sharpe(returns, aligned) * math.sqrt(ann) if sd >= SAME_RETURN else None
    return BenchmarkComparison(
        total_return=_round(ep.cum_returns_final(aligned)),
        annual_return=_a_year(theirs, why),
        excess_annual_return=_a_year(own - theirs, why),
        tracking_error=_a_year(ep.annual_volatility(active, annualization=ann), few),
        information_ratio=_a_year(ratio, few, 3),
        beta=_round(beta, 3),
        alpha=_a_year(alpha, why),
        note=joined(few, _benchmark_not_annualised(why), tracks),
    )


def _benchmark_not_annualised(why: str | None) -> str | None:
    """A comparison's note under a year of returns (`why`: `under_a_year`'s); None from a year on."""
    if why is None:
        return None
    return (
        f"{why}, so no annual return, excess annual return or alpha is given; the total return is the benchmark's "
        "return over these days, beside the record's."
    )


def by_year(
    returns: pd.Series,
    benchmarks: dict[str, pd.Series],
    traded: pd.Series | None = None,
    equity: pd.Series | None = None,
    costs: pd.DataFrame | None = None,
    exposure: pd.Series | None = None,
    fills_per_day: pd.Series | None = None,
) -> dict[str, TrackRecord]:
    """`statistics` per calendar year; `traded` (value traded per day), `equity` (per day)
    and `costs` (per day, one column per part: fees, spread, impact) give each year its
    turnover and costs, `exposure` (market value / equity per day) its average exposure and
    cash flag, and `fills_per_day` (the number of fills each day, days without one may be
    absent) its `fill_count`."""
    index = pd.to_datetime(pd.Index(returns.index))
    out = {}
    for year in sorted(set(index.year)):
        mask = np.asarray(index.year == year)
        days = returns.index[mask]
        out[str(year)] = statistics(
            returns[mask],
            benchmarks,
            traded_value=float(traded.reindex(days).fillna(0.0).sum()) if traded is not None else 0.0,
            mean_equity=float(equity.reindex(days).mean()) if equity is not None else None,
            costs=breakdown(costs.reindex(days).fillna(0.0).sum().to_dict()) if costs is not None else None,
            exposure=exposure,
            fill_count=int(fills_per_day.reindex(days).fillna(0).sum()) if fills_per_day is not None else None,
        )
    return out


def breakdown(parts: dict[str, float]) -> CostBreakdown:
    """A CostBreakdown of float sums by part (the backtest's frames): each to six places,
    the cost model's precision."""
    return CostBreakdown(**{name: Decimal(repr(round(float(parts.get(name, 0.0)), 6))) for name in COST_PARTS})


def carried_ex_dividend(closes: pd.DataFrame, dividends: pd.DataFrame | None) -> pd.DataFrame:
    """`closes` (date x symbol, empty where a name did not trade) carried forward over the
    untraded days, a close carried over an ex-date less the dividend from that ex-date on
    (`dividends`: date x symbol, cash per share on the closes' count), never below 0: the
    exchange's reference price, as the books read a name that did not trade on its ex-date
    (views/valuation.py, portfolio/book_days.py). Reinvested at it (`reinvested`), the
    ex-date returns nothing and the name's next trade its own change, not a gain of the
    dividend on the ex-date given back when it trades ex-dividend."""
    carried = closes.ffill()
    if dividends is None or dividends.empty:
        return carried
    cash = dividends.reindex(index=closes.index, columns=closes.columns).fillna(0.0)
    untraded = cash.where(closes.isna(), 0.0).cumsum()
    since_traded = untraded - untraded.where(closes.notna()).ffill().fillna(0.0)
    return (carried - since_traded).clip(lower=0.0)


def reinvested(closes: pd.DataFrame, dividends: pd.DataFrame | None) -> pd.DataFrame:
    """`closes` (date x symbol, carried forward over untraded days) grown by each dividend
    reinvested at its ex-date's close: a total-return price, whose ratio across an ex-date
    is (close + dividend) / previous close. `dividends`: date x symbol, the cash per share
    on each ex-date, on the closes' share count (None or empty: `closes` as they are)."""
    if dividends is None or dividends.empty:
        return closes
    cash = dividends.reindex(index=closes.index, columns=closes.columns).fillna(0.0)
    growth = (1 + cash / closes.where(closes > 0)).fillna(1.0).cumprod()
    return closes * growth


def dividend_matrix(dividends: pd.DataFrame) -> pd.DataFrame:
    """Stored DIVIDEND notices (symbol, date, amount per share) as date x symbol (summed)."""
    if dividends.empty:
        return pd.DataFrame()
    return dividends.pivot_table(index="date", columns="symbol", values="amount", aggfunc="sum")


def equal_weight_liquid(frame: pd.DataFrame, dividends: pd.DataFrame | None = None) -> pd.Series:
    """Daily returns of the equal-weighted liquid universe (module docstring), from a
    frame with symbol, date, close and the gate inputs (adv_20, volume, bid, ask, high,
    low), its closes on one share count. Ordinary shares only: where the frame has an
    `ordinary` column, a row whose value is False (a preference share, a fund, ...:
    market/instruments.py) is never a member. `dividends` (date x symbol, cash per share on
    the same count): reinvested at the ex-date's close (`reinvested`), a total return.
    A month without a day before it in `frame` has no members: its days return 0, so a
    caller measuring a span gives the frame the days from the last session before the
    span's first month (views/track_record.py reads the 60 days before a record, the
    backtest `portfolio.backtest.span_benchmark`) and reindexes to the span."""
    frame = frame.sort_values(["date", "symbol"])
    stored = frame.pivot_table(index="date", columns="symbol", values="close", aggfunc="last").sort_index()
    traded = stored.ffill()
    closes = reinvested(carried_ex_dividend(stored, dividends), dividends)
    eligible = passes_entry_gates(frame).to_numpy()
    if "ordinary" in frame:
        eligible = eligible & frame["ordinary"].ne(False).fillna(True).astype(bool).to_numpy()
    liquid = (
        frame.assign(liquid=eligible)
        .pivot_table(index="date", columns="symbol", values="liquid", aggfunc="last")
        .reindex(closes.index)
        .fillna(False)
        .astype(bool)
    )
    dates = list(closes.index)
    months = pd.Series([(d.year, d.month) for d in pd.to_datetime(pd.Index(dates))], index=dates)
    out = pd.Series(0.0, index=dates[1:])
    for _, days in months.groupby(months, sort=True):
        first = dates.index(days.index[0])
        if first == 0:
            continue
        before = dates[first - 1]
        members = [s for s in closes.columns if liquid.at[before, s] and traded.at[before, s] > 0]
        if not members:
            continue
        relative = closes.loc[list(days.index), members].div(closes.loc[before, members])
        value = relative.mean(axis=1)
        chained = pd.concat([pd.Series([1.0]), value.reset_index(drop=True)])
        out.loc[list(days.index)] = chained.pct_change().iloc[1:].to_numpy()
    return out


def cap_weighted_index(
    closes: pd.DataFrame,
    shares: pd.DataFrame,
    splits: Iterable[Split] = (),
    through: date | None = None,
    dividends: pd.DataFrame | None = None,
) -> pd.Series:
    """Daily returns of the service's capitalisation-weighted index, as views/breadth.py
    defines a day's change: every instrument with shares outstanding known on the day
    (the latest report on or before it), shares held fixed over the day, a name that did
    not trade at its last close (no change). `closes`: date x symbol on `through`'s share
    count, `shares`: symbol, report_date, shares_outstanding, each put on the same count
    (`store.splits.shares_on_count` with `splits`), so each name weighs its capitalisation.
    `dividends` (date x symbol, cash per share on the closes' count): added to the ex-date's
    close, a total-return index; None: a price index. One pass over the date x symbol
    matrix: the shares known on each day are each symbol's reports carried forward to it.
    A close carried over an ex-date is read less the dividend (`carried_ex_dividend`)."""
    closes = carried_ex_dividend(closes.sort_index(), dividends)
    days = pd.Index(closes.index)
    known = shares.dropna(subset=["shares_outstanding"]).sort_values("report_date")
    known = known[known["symbol"].isin(closes.columns)]
    splits = list(splits)
    if splits and through is not None and not known.empty:
        counted = [
            shares_on_count(splits, r.symbol, r.shares_outstanding, r.report_date, through) for r in known.itertuples()
        ]
        known = known.assign(shares_outstanding=counted)
    if len(days) < 2:
        return pd.Series(dtype=float)
    if known.empty:
        return pd.Series(0.0, index=days[1:], dtype=float)
    reports = known.groupby(["report_date", "symbol"], sort=False)["shares_outstanding"].last().unstack("symbol")
    reports = reports.sort_index().ffill()
    latest = np.searchsorted(reports.index.to_numpy(), days.to_numpy(), side="right")  # reports on or before
    held = reports.iloc[np.maximum(latest - 1, 0)].set_axis(days).reindex(columns=closes.columns)
    held[latest == 0] = np.nan
    before = closes.shift(1)
    usable = before.notna() & closes.notna() & (before > 0) & held.notna()
    cap_before = (before * held).where(usable).sum(axis=1)
    paid = 0.0 if dividends is None or dividends.empty else dividends.reindex_like(closes).fillna(0.0)
    cap_now = ((closes + paid) * held).where(usable).sum(axis=1)
    change = np.where(cap_before > 0, cap_now / cap_before.where(cap_before > 0, 1.0) - 1, 0.0)
    return pd.Series(change[1:], index=days[1:], dtype=float)


def benchmark_index(
    levels: pd.DataFrame, first: date | pd.Timestamp, last: date | pd.Timestamp, preferred: str | None = None
) -> str | None:
    """Which of the stored index series (`levels`: symbol, date, level) is the market's
    benchmark from `first` to `last`: `preferred` where it has levels in that span, else
    the index with levels on the most of the span's days, then the most levels stored,
    then by name. None without any level in the span."""
    inside = levels[(levels["date"] >= first) & (levels["date"] <= last)]
    if inside.empty:
        return None
    if preferred and preferred in set(inside["symbol"]):
        return preferred
    span = inside.groupby("symbol")["date"].nunique()
    overall = levels.groupby("symbol")["date"].nunique()
    return sorted(span.index, key=lambda s: (-span[s], -overall[s], s))[0]


def index_returns(levels: pd.Series, dates: Sequence[date]) -> pd.Series:
    """The index's daily returns over `dates` (the market days a record or a backtest
    measures, in order) from its level series indexed by date: each day's return runs from
    the last level on or before the day before it to the last on or before it, so a move
    dated on a day outside `dates` (a level on a day the price files or the store have no
    session of) counts on the next of `dates`, compounded with that day's own, and a day
    without a level is no change (the last level stands). The first day's return is from
    the level before it where it has one of its own. Dropped, such a move was lost: five
    price-less days in a backtest's span read an index up 0.2% a session as up 21% over
    100 sessions, not 22%."""
    levels = levels.sort_index().astype(float)
    moves = levels.pct_change().iloc[1:].replace([np.inf, -np.inf], np.nan).fillna(0.0)
    days = pd.Index(list(dates))
    if days.empty:
        return pd.Series(dtype=float)
    moves = moves[(moves.index >= days[0]) & (moves.index <= days[-1])]
    on = days[days.searchsorted(list(moves.index))]  # the first of `dates` on or after each move
    return ((1 + moves).groupby(on).prod() - 1).reindex(days).fillna(0.0)
