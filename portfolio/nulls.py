"""Null books: books that obey the AI book's mandate by chance, replayed beside it.

Skill is where a book ranks among books that obey the same constraints by chance (random
portfolios as the null: Burns 2006; Dawson and Young). A null book here is the product's
book (portfolio/book.py `plan_book`, the same `Mandate`, universe, entry gates, capacity,
next-session fills, spreads and fees, portfolio/backtest.py) over the same days, with one
thing replaced: the ranking. Each day the model's own outputs (the expected excess with
the P(up), raw score, predicted return and class probabilities that came with it) are
re-assigned to the day's rows by the null's order (`reassign`): the row the null ranks
best gets the model's best tuple, the second the second, and so on, within each pool:

- the book's universe: ordinary shares that pass the entry gates (a tercile) and have an
  expected excess;
- every other row with an expected excess (what a held name that fell out of the universe
  reads when the book decides whether to sell it).

Rows without an expected excess keep theirs (none). `models.decisions.decide` then derives
the Score, Action (LONG, AVOID, HOLD), Tercile, Weight, held_edge and reason from the
re-assigned values, as for the model, so each day's set of expected-excess values is the
model's and every rank threshold (LONG, the terciles) fires as often; AVOID, whose
threshold is a name's own round trip, fires about as often.

Families (`NULL_FAMILIES`), each a key per row (larger is better):
- `daily_random`: a fresh random ranking every day (one book per seed);
- `fixed_random`: one random ranking of the symbols, fixed for the span (one per seed);
- `size`: ranked by traded value, ADV_20 x the close, each day;
- `bought_and_held`: the model's ranking for the first FIRST_MONTH_SESSIONS sessions, then
  the ranking of the last of them frozen, with the names the model's book held after that
  month's orders ranked above every other: the first month's book bought and held;
- `inverted`: the model's ranking reversed.

`null_books` replays them; `family_figures` summarises a family beside the model's book
(mean and range of a figure, the model's percentile among the family's books).
`against_nulls` is the whole comparison over one replay, as the AI portfolio's track record
serves it (portfolio/track_record.py `NullRecord`, views/null_record.py): every family
beside the replayed model book, the model book against the mean of the fixed random books,
and the books' growth by day as a band (`NullBand`) for the Quant Briefing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

import numpy as np
import pandas as pd

from market.costs import FeeSchedule
from models.decisions import BOOK_NAMES, HORIZON, RowFacts, decide, row_facts
from portfolio.backtest import BacktestResult, PreparedDay, book_returns, run_backtest, summarise, with_signals
from portfolio.book import Mandate
from portfolio.delisting import DelistingRule
from portfolio.track_record import (
    FEW_BOOKS,
    NULL_BENCHMARK,
    NULL_FAMILIES,
    SAME_RETURN,
    NullFamily,
    NullRecord,
    NullSpread,
    joined,
    statistics,
    too_few_days,
    under_a_year,
)

DAILY_RANDOM_SEEDS = 10
FIXED_RANDOM_SEEDS = 20
FIRST_MONTH_SESSIONS = 21  # the bought-and-held book's first month, in sessions
# The model's outputs for a row, moved together (those a frame has); `decide` derives the rest.
MODEL_OUTPUTS = (
    "expected_return",
    "p_up",
    "raw_score",
    "predicted_return",
    "predicted_class",
    "p_down3",
    "p_flat3",
    "p_up3",
)
UNIVERSE, OTHER = 1, 2  # the pools re-assigned apart (0: no expected excess, not re-assigned)


def pools(decided: pd.DataFrame) -> np.ndarray:
    """Per row of `decide`'s output: UNIVERSE (an ordinary share that passes the entry
    gates, with an expected excess), OTHER (any other row with one) or 0 (none)."""
    has_edge = decided["expected_return"].notna().to_numpy()
    liquid = (decided["tercile"] != "ILLIQUID").to_numpy()
    ordinary = decided["ordinary"].fillna(True).astype(bool).to_numpy() if "ordinary" in decided else True
    return np.where(has_edge, np.where(liquid & ordinary, UNIVERSE, OTHER), 0)


def _model_order(decided: pd.DataFrame, rows: np.ndarray, days: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """`rows` sorted by day, pool, then the model's ranking (the expected excess, then P(up),
    then the raw score, best first; decide's order)."""
    raw = decided["raw_score"].to_numpy(float) if "raw_score" in decided else np.zeros(len(decided))
    edge, p_up = decided["expected_return"].to_numpy(float), decided["p_up"].to_numpy(float)
    return rows[np.lexsort((-raw[rows], -p_up[rows], -edge[rows], pool[rows], days[rows]))]


def model_rank(decided: pd.DataFrame) -> np.ndarray:
    """Each row's rank (1 = best) by the model's ranking within its day and pool; a large
    number for rows without an expected excess."""
    pool, days = pools(decided), pd.factorize(decided["date"], sort=True)[0]
    ordered = _model_order(decided, np.flatnonzero(pool > 0), days, pool)
    rank = np.full(len(decided), np.iinfo(np.int32).max, dtype=np.int64)
    groups = pd.Series(days[ordered] * 3 + pool[ordered])
    rank[ordered] = groups.groupby(groups.to_numpy()).cumcount().to_numpy() + 1
    return rank


def reassign(
    decided: pd.DataFrame,
    key: np.ndarray,
    fee_rate: float,
    horizon: int = HORIZON,
    book_names: int = BOOK_NAMES,
    facts: RowFacts | None = None,
    explain: bool = True,
) -> pd.DataFrame:
    """`decided` (decide's output over one or many days) with the model's outputs moved
    to the rows in the null's order (`key`, one value per row, larger is better; NaN is
    worst; ties by symbol) within each day and pool, and decided again (module docstring).
    Each day's multiset of every output, per pool, is unchanged. No ranking moves a row's
    spread, round trip or gates: `facts`, `decided`'s `row_facts` read once for every
    null, else read here. `explain=False`: no reasons written (`null_books`: nobody reads
    a null book's)."""
    pool, days = pools(decided), pd.factorize(decided["date"], sort=True)[0]
    rows = np.flatnonzero(pool > 0)
    symbols = pd.factorize(decided["symbol"], sort=True)[0]
    order = np.nan_to_num(np.asarray(key, dtype=float), nan=-np.inf)
    by_model = _model_order(decided, rows, days, pool)
    by_null = rows[np.lexsort((symbols[rows], -order[rows], pool[rows], days[rows]))]
    out = decided.copy()
    for column in (c for c in MODEL_OUTPUTS if c in decided):
        values = decided[column].to_numpy()
        moved = values.copy()
        moved[by_null] = values[by_model]
        out[column] = moved
    facts = facts if facts is not None else row_facts(decided, fee_rate)
    return decide(out, fee_rate=fee_rate, horizon=horizon, book_names=book_names, facts=facts, explain=explain)


def daily_random_key(decided: pd.DataFrame, seed: int) -> np.ndarray:
    """A fresh random ranking each day."""
    return np.random.default_rng(seed).random(len(decided))


def fixed_random_key(decided: pd.DataFrame, seed: int) -> np.ndarray:
    """One random ranking of the symbols, the same every day."""
    symbols = sorted(decided["symbol"].unique())
    draws = dict(zip(symbols, np.random.default_rng(seed).random(len(symbols)), strict=True))
    return decided["symbol"].map(draws).to_numpy(float)


def size_key(decided: pd.DataFrame) -> np.ndarray:
    """Traded value: ADV_20 (shares) x the close, each day."""
    return (decided["adv_20"].astype(float) * decided["close"].astype(float)).to_numpy()


def inverted_key(decided: pd.DataFrame) -> np.ndarray:
    """The model's ranking, reversed."""
    return model_rank(decided).astype(float)


def bought_and_held_key(decided: pd.DataFrame, until: date, held: set[str]) -> np.ndarray:
    """The model's ranking up to `until`; after it, the ranking of `until` frozen (a name
    not ranked that day last), with the `held` names above every other."""
    rank = model_rank(decided).astype(float)
    after = (decided["date"] > until).to_numpy()
    last = decided["date"] == until
    frozen = pd.Series(rank[last.to_numpy()], index=decided.loc[last, "symbol"])
    later = decided.loc[after, "symbol"]
    boost = np.where(later.isin(held).to_numpy(), 1e12, 0.0)
    key = -rank
    key[after] = boost - later.map(frozen).fillna(np.inf).to_numpy(float)
    return key


def held_after(trades: pd.DataFrame, decided_until: date) -> set[str]:
    """The names a replayed book held once the orders decided on or before `decided_until`
    filled (BacktestResult.trades)."""
    if trades.empty:
        return set()
    early = trades[trades["decided_on"].astype(str) <= decided_until.isoformat()]
    signed = np.where(early["side"] == "BUY", early["quantity"], -early["quantity"])
    net = pd.Series(signed, index=early["symbol"].to_numpy()).groupby(level=0).sum()
    return set(net[net > 0].index)


@dataclass(frozen=True)
class NullPlan:
    """Which null books to replay: seeds per random family, the bought-and-held book's
    first month, and the families (NULL_FAMILIES' names)."""

    daily_seeds: int = DAILY_RANDOM_SEEDS
    fixed_seeds: int = FIXED_RANDOM_SEEDS
    first_month: int = FIRST_MONTH_SESSIONS
    families: tuple[str, ...] = NULL_FAMILIES
    first_seed: int = 0  # the random families' seeds run from it (another set: another first seed)


@dataclass(frozen=True)
class NullBook:
    family: str
    seed: int | None  # the random families' seed; None for the others
    result: BacktestResult
    returns: pd.Series  # daily, by date


@dataclass(frozen=True)
class Replay:
    """What every book of a comparison shares: the days (portfolio/backtest.prepare_days),
    the decided rows they were made of (backtest.decided_frame), the fees, the mandate,
    the fill mode, the starting cash, the horizon and the delisting rule."""

    days: list[PreparedDay]
    decided: pd.DataFrame
    fees: FeeSchedule
    mandate: Mandate = Mandate()
    fills: str = "costed"
    starting_cash: float = 10_000_000
    horizon: int = HORIZON
    delisting: DelistingRule = DelistingRule()  # portfolio/delisting.py: every book of a comparison applies one


def null_keys(replay: Replay, plan: NullPlan, model: BacktestResult) -> list[tuple[str, int | None, np.ndarray]]:
    """(family, seed, key) of every null book the plan asks for; `model`: the model's book
    over the same replay (the bought-and-held book starts from its first month)."""
    decided, keys = replay.decided, []
    for family in plan.families:
        if family == "daily_random":
            seeds = range(plan.first_seed, plan.first_seed + plan.daily_seeds)
            keys += [(family, seed, daily_random_key(decided, seed)) for seed in seeds]
        elif family == "fixed_random":
            seeds = range(plan.first_seed, plan.first_seed + plan.fixed_seeds)
            keys += [(family, seed, fixed_random_key(decided, seed)) for seed in seeds]
        elif family == "size":
            keys.append((family, None, size_key(decided)))
        elif family == "inverted":
            keys.append((family, None, inverted_key(decided)))
        elif family == "bought_and_held" and len(replay.days) > plan.first_month:
            until = replay.days[plan.first_month - 1].day
            keys.append((family, None, bought_and_held_key(decided, until, held_after(model.trades, until))))
        elif family not in NULL_FAMILIES:
            raise ValueError(f"unknown null family {family!r}: one of {NULL_FAMILIES}")
    return keys


def replay_book(replay: Replay, days: list[PreparedDay] | None = None) -> tuple[BacktestResult, pd.Series]:
    """One book over the replay's days (or `days`, the same days re-decided), with its
    daily returns."""
    result = run_backtest(
        days if days is not None else replay.days,
        replay.starting_cash,
        replay.fees,
        replay.fills,
        replay.mandate,
        replay.horizon,
        replay.delisting,
    )
    return result, book_returns(result.curve, replay.starting_cash)


def null_books(replay: Replay, plan: NullPlan, model: BacktestResult) -> list[NullBook]:
    """Every null book of `plan` replayed over `replay` (module docstring)."""
    fee_rate, books = float(replay.fees.rate), []
    facts = row_facts(replay.decided, fee_rate)
    for family, seed, key in null_keys(replay, plan, model):
        decided = reassign(replay.decided, key, fee_rate, replay.horizon, replay.mandate.names, facts, explain=False)
        result, returns = replay_book(replay, with_signals(replay.days, decided))
        books.append(NullBook(family, seed, result, returns))
    return books


def mean_returns(books: list[NullBook]) -> pd.Series:
    """The mean of the books' daily returns, by date (the return of holding them all in
    equal parts, rebalanced daily)."""
    return pd.concat([b.returns for b in books], axis=1).mean(axis=1)


def percentile(value: float | None, others: list[float | None], tied: list[bool] | None = None) -> float | None:
    """The share of `others` below `value`, ties counting half, in percent (None without
    a value or others). `tied`: beside each of `others`, whether it is a tie whatever its
    figure says (a book that earned what the model's book earned each day, `same_returns`,
    whose ratio may differ from the model's in its last digits)."""
    flags = tied if tied is not None else [False] * len(others)
    known = [(o, t) for o, t in zip(others, flags, strict=True) if o is not None]
    if value is None or not known:
        return None
    below = sum(1.0 if o < value else 0.5 if o == value else 0.0 for o, t in known if not t)
    return round(100 * (below + 0.5 * sum(1 for _, t in known if t)) / len(known), 1)


@dataclass(frozen=True)
class Spread:
    """A figure over a family's books: the mean, the lowest and the highest."""

    mean: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: list[float | None]) -> Spread:
        known = [v for v in values if v is not None]
        if not known:
            return cls(None, None, None)
        return cls(round(float(np.mean(known)), 4), min(known), max(known))


@dataclass(frozen=True)
class FamilyFigures:
    """A null family beside the model's book: its books' information ratio, excess a year
    (both against `benchmark`), annual turnover and total return as Spreads, the model's
    percentile among the books by information ratio and how many it beats."""

    family: str
    books: int
    benchmark: str
    information_ratio: Spread
    excess_annual_return: Spread
    annual_turnover: Spread
    total_return: Spread
    model_percentile: float | None
    model_beats: int


def _against(figures: dict, benchmark: str, key: str) -> float | None:
    return (figures.get("benchmarks") or {}).get(benchmark, {}).get(key)


def family_figures(
    family: str, model: dict, books: list[dict], benchmark: str, tied: list[bool] | None = None
) -> FamilyFigures:
    """`model` and `books`: `portfolio.backtest.summarise` figures (with `benchmark` among
    their benchmarks); `tied`: beside each book, whether it earned what the model's book
    earned each day (`same_returns`): a tie in the percentile, and not beaten."""
    ratios = [_against(b, benchmark, "information_ratio") for b in books]
    mine = _against(model, benchmark, "information_ratio")
    flags = tied if tied is not None else [False] * len(books)
    return FamilyFigures(
        family=family,
        books=len(books),
        benchmark=benchmark,
        information_ratio=Spread.of(ratios),
        excess_annual_return=Spread.of([_against(b, benchmark, "excess_annual_return") for b in books]),
        annual_turnover=Spread.of([b.get("annual_turnover") for b in books]),
        total_return=Spread.of([b.get("total_return") for b in books]),
        model_percentile=percentile(mine, ratios, flags),
        model_beats=sum(1 for r, t in zip(ratios, flags, strict=True) if not t and None not in (mine, r) and mine > r),
    )


ONE_BOOK, FEW, READABLE = "one book", "few books", "readable"  # `standing`'s answers


def standing(books: int) -> str:
    """How the model's percentile among a family of `books` books reads: ONE_BOOK (a
    percentile among one is 0, 50 or 100: whether the model beats it says all), FEW (under
    FEW_BOOKS: one book moves it by tens of points, too coarse to read) or READABLE. The one
    rule of every surface that words a percentile (`percentile_words`, the reports)."""
    return ONE_BOOK if books == 1 else FEW if books < FEW_BOOKS else READABLE


def percentile_figure(model_percentile: float) -> str:
    """How every surface prints a percentile: the figure as served (`percentile`: one
    decimal), its trailing ".0" dropped, never rounded further: 87.5, 95, 33.3. The one rule
    of the tables' figure (`percentile_words`) and the sentences' ordinal
    (`percentile_ordinal`), so a paragraph cannot say the 88th where its table prints 87.5."""
    return f"{model_percentile:g}"


def percentile_ordinal(model_percentile: float) -> str:
    """The percentile as an ordinal in a sentence, of the figure `percentile_figure` prints:
    "95th", "11th", "87.5th", "33.3rd" (after a decimal point the last digit names the suffix)."""
    figure = percentile_figure(model_percentile)
    whole = "." not in figure
    if whole and 10 <= int(figure) % 100 <= 20:
        return f"{figure}th"
    return figure + {"1": "st", "2": "nd", "3": "rd"}.get(figure[-1], "th")


def percentile_words(model_percentile: float | None, beats: int, books: int, missing: str = "n/a") -> str:
    """The model's standing in a family of `books` books as a reader can take it (`standing`):
    a family of one book, whether the model beats it or is level with it (not a percentile of
    0, 50 or 100); fewer
    than FEW_BOOKS, the percentile with the caveat; else the percentile. `missing` without a
    percentile (no books, or no ratios: never "beats: no" for a book not measured)."""
    if model_percentile is None:
        return missing
    reading = standing(books)
    if reading == ONE_BOOK:  # a tie is half a book below: level, as the reports' sentences say
        return "level" if model_percentile == 50 else f"beats: {'yes' if beats else 'no'}"
    if reading == FEW:
        return f"{percentile_figure(model_percentile)} (of {books} books: too few to read)"
    return percentile_figure(model_percentile)


def served(figures: FamilyFigures, note: str | None = None) -> NullFamily:
    """A family's figures as the track record serves them (portfolio/track_record.py),
    with `note` (`family_ties` where every book of the family tied)."""

    def spread(values: Spread) -> NullSpread:
        return NullSpread(values.mean, values.low, values.high)

    return NullFamily(
        figures.family,
        figures.books,
        spread(figures.information_ratio),
        spread(figures.excess_annual_return),
        figures.model_percentile,
        figures.model_beats,
        note,
    )


def no_books(family: str, why: str) -> NullFamily:
    """A family without books (too few days for it), saying why."""
    empty = NullSpread(None, None, None)
    return NullFamily(family, 0, empty, empty, None, 0, why)


def why_no_books(family: str, days: int, plan: NullPlan) -> str:
    """Why `family` has no books over `days` days (the track record's nulls and the backtest's)."""
    if family == "bought_and_held":
        return (
            f"the first month's book, bought and held, needs more than {plan.first_month} days (its first month, then "
            f"held): {days} so far"
        )
    return f"no {family} books were asked for"


BAND_PERCENTILES = (10, 90)  # the band of a random family's books, by day


@dataclass(frozen=True)
class NullBand:
    """The books' cumulative returns by day, for drawing the model's book inside its nulls:
    the replayed model book's, the fixed random books' mean (the cumulative return of their
    daily returns averaged: `mean_returns`, the `fixed_random_mean` benchmark) and their
    BAND_PERCENTILES by day, and the daily random books' BAND_PERCENTILES by day (empty
    lists where the family has no books)."""

    days: list[date]
    model: list[float]
    fixed_random_mean: list[float]
    fixed_random_low: list[float]
    fixed_random_high: list[float]
    daily_random_low: list[float]
    daily_random_high: list[float]

    @classmethod
    def of(cls, model: pd.Series, books: list[NullBook]) -> NullBand:
        def grown(returns: pd.Series) -> list[float]:
            return ((1 + returns.reindex(model.index).fillna(0.0)).cumprod() - 1).round(6).tolist()

        def band(family: str) -> tuple[list[float], list[float]]:
            members = [b.returns for b in books if b.family == family]
            if not members:
                return [], []
            growth = (1 + pd.concat(members, axis=1).reindex(model.index).fillna(0.0)).cumprod() - 1
            low, high = (growth.quantile(q / 100, axis=1).round(6).tolist() for q in BAND_PERCENTILES)
            return low, high

        fixed = [b for b in books if b.family == "fixed_random"]
        return cls(
            list(model.index),
            grown(model),
            grown(mean_returns(fixed)) if fixed else [],
            *band("fixed_random"),
            *band("daily_random"),
        )


@dataclass(frozen=True)
class AgainstNulls:
    """`against_nulls`' answer: the figures served (NullRecord) and the band drawn."""

    record: NullRecord
    band: NullBand


MIN_NULL_DAYS = 2  # days: a book's statistics need two daily returns at least


def against_nulls(replay: Replay, plan: NullPlan, benchmark: pd.Series) -> AgainstNulls:
    """The replayed model book beside every null book of `plan` over `replay`: each
    family's figures against `benchmark` (the equal-weighted liquid universe's daily
    returns over the replay's days) with the model's percentile in it, the model book
    against the mean of the fixed random books, and the band. Fewer than two days: no
    figures, and a note that says so; a family the days cannot give (the bought-and-held
    book within its first month) has no books and says why."""
    days = len(replay.days)
    if days < MIN_NULL_DAYS:
        why = f"{days} {'day' if days == 1 else 'days'} replayed; the statistics need at least two"
        families = {family: no_books(family, why) for family in plan.families}
        return AgainstNulls(NullRecord(days, families=families, note=f"{why}."), NullBand([], [], [], [], [], [], []))
    model, returns = replay_book(replay)
    books = null_books(replay, plan, model)
    compared = {NULL_BENCHMARK: benchmark}
    mine = summarise(model, replay.starting_cash, compared)
    families, few = {}, too_few_days(len(returns), NULL_RATIOS)
    for family in plan.families:
        kin = [b for b in books if b.family == family]
        if not kin:
            families[family] = no_books(family, why_no_books(family, days, plan))
            continue
        tied = [same_returns(returns, b) for b in kin]
        members = [summarise(b.result, replay.starting_cash, compared) for b in kin]
        figures = family_figures(family, mine, members, NULL_BENCHMARK, tied)
        families[family] = served(figures, few or (family_ties(len(kin)) if all(tied) else None))
    fixed = [b for b in books if b.family == "fixed_random"]
    against = statistics(returns, {"fixed_random_mean": mean_returns(fixed)}).benchmarks if fixed else {}
    ours = mine["benchmarks"][NULL_BENCHMARK]
    record = NullRecord(
        days=days,
        model_total_return=mine["total_return"],
        model_excess_annual_return=ours["excess_annual_return"],
        model_information_ratio=ours["information_ratio"],
        families=families,
        fixed_random_mean=against.get("fixed_random_mean"),
        note=joined(SAME_BOOKS.format(days=days) if all_the_same(returns, books) else None, few),
    )
    return AgainstNulls(record, NullBand.of(returns, books))


# What `too_few_days` nulls among the null books' figures (statistics' rule, over the replay's returns).
NULL_RATIOS = "The information ratios, and the percentiles that rank them,"


SAME_BOOKS = (
    "Every null book earned what the model's book earned on each of these {days} days: the ranking did not change "
    "what the book held (as where capacity leaves the slots short and the reserve takes every name the entry gates "
    "pass, or where no swap paid its round trip), so these nulls cannot tell skill from the mandate here and their "
    "percentiles are ties."
)


def family_ties(books: int) -> str:
    """A family's note where each of its `books` books earned what the model's book earned on
    every day (`same_returns`)."""
    which = "The family's one book" if books == 1 else f"Each of the {books} books"
    return (
        f"{which} earned what the model's book earned on every day: the percentile is a tie, not a measure of skill "
        "or its absence."
    )


def same_returns(model: pd.Series, book: NullBook) -> bool:
    """Whether `book`'s daily returns equal the model book's on every day (within
    SAME_RETURN): a book the ranking did not tell apart, a tie whatever the last digits of
    its ratio say."""
    return float((book.returns.reindex(model.index).fillna(0.0) - model).abs().max()) < SAME_RETURN


def all_the_same(model: pd.Series, books: list[NullBook]) -> bool:
    """Whether every null book ties with the model book (`same_returns`)."""
    return bool(books) and all(same_returns(model, b) for b in books)


SHORT_SPAN = 250  # days (a year): over fewer, the nulls' percentiles say little about skill


def short_span(days: int) -> str | None:
    """The caveat of a comparison over `days` days with ratios (`too_few_days` gives none
    under its 20 days, and says so: no percentile or ratio to call weak) but fewer than
    SHORT_SPAN; None otherwise."""
    if too_few_days(days, NULL_RATIOS) is None and days < SHORT_SPAN:
        return f"{days} days is a short span: the percentiles and ratios say little about skill."
    return None


def _pct(value: float) -> str:
    """A total return as a signed percentage to two decimals, zero never "-0.00%"."""
    return f"{round(value, 4) + 0.0:+.2%}"


def beside_live(
    record: NullRecord, live_total_return: float | None, span: tuple[date, date] | None = None
) -> NullRecord:
    """`record` with its note: how the replayed model book's total return compares with the
    AI portfolio's executed record ("...the AI portfolio +2.75%; the replay earned 0.73 points
    less.") over the same days (`live_total_return`: its days
    replayed on the validation record and its live days alike, as the portfolio traded
    them), and, with ratios (20 days of returns) but over fewer than SHORT_SPAN days, that a
    short span says little (under 20 days there are no ratios to call weak: the note already
    says so, `too_few_days`), and under
    a year of returns that no excess annual return is given (`under_a_year` over the record's
    first and last days, `span`: `statistics` annualises nothing over less than a year)."""
    parts = [record.note] if record.note else []
    replayed = record.model_total_return
    if replayed is not None and live_total_return is not None:
        gap = round(replayed - live_total_return, 4)
        apart = "the same" if gap == 0 else f"{abs(gap) * 100:.2f} points {'more' if gap > 0 else 'less'}"
        parts.append(
            f"The replayed model book returned {_pct(replayed)} over these {record.days} days, the AI portfolio "
            f"{_pct(live_total_return)}; the replay earned {apart}. "
            "The replay decides each day's stored predictions again on the day's stored bars at the fee schedule "
            "in force, fills through the same cost model and credits no dividends, so its fills can differ from the "
            "portfolio's."
        )
    if short := short_span(record.days):
        parts.append(short)
    why = under_a_year(record.days, *(span or (None, None)))
    if MIN_NULL_DAYS <= record.days and why:
        parts.append(
            f"{why[0].upper()}{why[1:]}, so no excess annual return is given; the replayed model book's total "
            "return is its return over these days."
        )
    return replace(record, note=" ".join(parts) or None)
