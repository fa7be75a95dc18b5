"""How numbers read in the reports: money with thousands separators and two decimals,
percentages with their sign where a change is meant (never on a magnitude such as a
volatility or a drawdown), a dash for a missing value, and each metric beside its base
rate and sample size.

A field whose read model declares what it is (market/money.py `Money`, `Price`,
`Fraction`) is printed by that type, as every other surface prints it (market/contract.py):
`by_type(row, shape, name)` reads the declared type of `name` in `shape` (a TypedDict or a
dataclass) and prints `row[name]` by it, so a money column of a table shows money, a
price column a price and a fraction a percentage, whatever the column is called."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from market.contract import declared
from market.money import Fraction, Money, Price, price_display
from portfolio.nulls import FEW, MIN_NULL_DAYS, ONE_BOOK, percentile_ordinal, standing

if TYPE_CHECKING:
    from reports.inputs import NullBooksJson, Staleness
    from views.performance import ModelRecord, Performance

DASH = "-"
METRIC_LABELS = {
    "binary_accuracy": "Binary accuracy (up vs down)",
    "three_class_accuracy": "3-class accuracy (down/flat/up)",
    "movers_accuracy": "Movers accuracy (moves beyond 2%)",
    "average_error": "Average error of predicted return",
    "rank_ic": "Rank IC (expected excess vs label)",
    "tercile_spread": "Tercile spread (TOP minus BOTTOM mean excess)",
}
RATE_METRICS = {"binary_accuracy", "three_class_accuracy", "movers_accuracy"}
# Metrics whose sample is days (a mean of daily figures, models/metrics.py); the others count predictions.
DAILY_METRICS = frozenset({"rank_ic", "tercile_spread"})
# Track-record statistics (portfolio/track_record.py, fractions) that are a change, shown with
# their sign: a return, an excess over a benchmark. The others are magnitudes, shown bare:
# volatility, tracking error and the maximum drawdown (a positive fraction: a loss by its name).
SIGNED_STATISTICS = frozenset({"total_return", "annual_return", "excess_annual_return"})


def fixed(value: Any, digits: int, signed: bool = False, grouping: bool = False) -> str:
    """`value` with `digits` decimals, its sign where `signed`, thousands separators where
    `grouping`: the one rule of every number printer here and in reports/figures.py. It rounds
    to the printed digits before it picks the sign, so a value that rounds to zero (-0.004 at
    two decimals) or an API's -0.0 reads as zero ("0.00", "+0.00"), never "-0.00"."""
    number = round(float(value), digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{number:{'+' if signed else ''}{',' if grouping else ''}.{digits}f}"


def market_day_line(day: str | None, generated: str) -> str:
    """The line under a report's title: the market day it is about (the latest priced day,
    `reports.inputs.priced_day`) or, on a store without prices, that none is delivered yet;
    then when it was generated."""
    return f"Market day {day or 'not delivered yet'}  |  generated {generated}"


def stale_warning(stale: Staleness) -> str:
    """The box under a report's heading when its prices are old (`reports.inputs.staleness`)."""
    return (
        f"Stale data: the latest stored prices are of {stale.day}, {counted(stale.behind, 'session')} before the "
        f"latest closed session ({stale.latest_closed}). Every figure in this report is as of {stale.day} or "
        "earlier; no prices have been stored since (see the health stage and T0's deliveries)."
    )


def counted(n: int, unit: str) -> str:
    """ "1 fill", "2,040 fills": a count with its unit, singular for one."""
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def money(value: Any) -> str:
    return DASH if value is None else fixed(value, 2, grouping=True)


def in_currency(label: str, currency: str) -> str:
    """A money column's heading or a money figure's label with the currency its figures are
    in ("Value (JMD)"), as the exchange's own pages head theirs: a money figure is never
    printed without its currency, either here or beside the number (`money_in`)."""
    return f"{label} ({currency})"


def money_in(value: Any, currency: str) -> str:
    """Money in running text, with its currency before it ("JMD 1,250.00")."""
    return DASH if value is None else f"{currency} {money(value)}"


def price(value: Any) -> str:
    """A booked price per share as every surface shows it (market.money.price_display: the
    cents, or the decimals an older fill was stored with), with thousands separators, so
    the audit trail's price x quantity is its value to the cent."""
    if value is None:
        return DASH
    shown = Decimal(price_display(Decimal(str(value))))
    return f"{shown:,.2f}" if shown == shown.quantize(Decimal("0.01")) else f"{shown:,f}"


def fraction(value: Any, digits: int = 1, signed: bool = False) -> str:
    """A fraction as a percentage with `digits` decimals (0.516 is 51.6%), with its sign
    where `signed` (a change, never a magnitude)."""
    return DASH if value is None else f"{fixed(float(value) * 100, digits, signed)}%"


# How the reports print each declared type (the contract's types, in the reports' style); a
# fraction's printer also takes its decimals and whether it is signed (`statistic_pct`).
PRINTED: dict[object, Callable[..., str]] = {Money: money, Price: price, Fraction: fraction}


def by_type(row: Mapping[str, Any], shape: type, name: str) -> str:
    """`row[name]` printed by the type `shape` declares for `name` (the module docstring;
    `X | None` by X's rule); a field of another type as its text, "-" when missing."""
    value = row.get(name)
    kind = declared(shape).get(name)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        arms = [arm for arm in typing.get_args(kind) if arm is not type(None)]
        kind = arms[0] if len(arms) == 1 else kind
    printed = PRINTED.get(kind)
    if printed is None:
        return DASH if value is None else str(value)
    return printed(value)


def number(value: Any, digits: int = 0) -> str:
    return DASH if value is None else fixed(value, digits, grouping=True)


def pct(value: Any, digits: int = 1) -> str:
    return DASH if value is None else f"{fixed(value, digits)}%"


def signed_pct(value: Any, digits: int = 2) -> str:
    return DASH if value is None else f"{fixed(value, digits, signed=True)}%"


def statistic_pct(name: str, value: Any, digits: int = 2) -> str:
    """A track-record statistic `name` (a `Fraction` in portfolio/track_record.py) printed
    by its type's rule (`PRINTED`) with `digits` decimals: signed when it is a change
    (`SIGNED_STATISTICS`), without a sign when it is a magnitude."""
    return PRINTED[Fraction](value, digits, name in SIGNED_STATISTICS)


def metric_value(name: str, value: Any) -> str:
    """Rates as percentages, the tercile spread as a signed percentage of return, errors and
    the rank IC as plain decimals."""
    if value is None:
        return DASH
    if name == "tercile_spread":
        return fraction(value, 2, signed=True)
    if name in RATE_METRICS:
        return fraction(value, 1)
    return fixed(value, 4)


def metric_rows(record: ModelRecord, names: Iterable[str]) -> list[list[str]]:
    """One row per metric of `record` that has a value: label, value, base rate, sample size
    with its unit ("7,906 predictions", "114 days": the rank IC and the tercile spread are
    means of daily figures, over the days that had one)."""
    rows = []
    for name in names:
        metric = record["metrics"].get(name)
        if metric is None:
            continue
        rows.append(
            [
                METRIC_LABELS[name],
                metric_value(name, metric["value"]),
                metric_value(name, metric["base_rate"]),
                _sample(name, metric["sample_size"]),
            ]
        )
    return rows


def _sample(name: str, size: int | None) -> str:
    if size is None:
        return DASH
    unit = "day" if name in DAILY_METRICS else "prediction"
    return f"{number(size)} {unit}{'' if size == 1 else 's'}"


def record_caption(perf: Performance, shown: ModelRecord) -> str:
    """Which out-of-sample record the metrics table shows, over what (or why it is empty),
    and where the other one stands, each in sentences: the reader must never mistake the
    validation record for live results."""
    line = shown["label"]
    if shown["period_start"]:
        models = f" by {shown['models']} models" if shown["models"] else ""
        line += f": {shown['period_start']} to {shown['period_end']}, {_with_outcome(shown)}{models}."
    else:  # an empty record: its label, then why it is empty, as the other record's reads
        line += f": {shown['reason']}." if shown.get("reason") else "."
    if perf.get("horizon_days"):
        line += (
            f" Measured on the label: the return from the next session's close over {perf['horizon_days']} "
            f"session{'s' if perf['horizon_days'] != 1 else ''}, minus the equal-weighted liquid universe's."
        )
    other = perf["live" if shown["record"] == "validation" else "validation"]
    if other["reason"]:
        line += f" {other['label']}: {other['reason']}."
    elif other["period_start"]:
        line += f" {other['label']}: {other['period_start']} to {other['period_end']} (GET /api/ai/performance)."
    return line


def _with_outcome(shown: ModelRecord) -> str:
    """ "7,906 predictions with a realised outcome (those made through 2026-11-20)": the
    record's sample is its predictions whose outcome is known (the API's `predictions`), not
    every prediction of its period, whose last days' outcomes come later (`evaluated_through`)."""
    count = f"{counted(shown['predictions'], 'prediction')} with a realised outcome"
    through = shown.get("evaluated_through")
    if not through or through == shown["period_end"]:
        return count
    return f"{count} (those made through {through})"


def backend_line(perf: Performance) -> str:
    backend = perf["layer1_backend"]
    if backend is None:
        return "none yet"
    if perf["layer1_is_fallback"]:
        return f"{backend} (FALLBACK: no foundation-model weights; an empirical estimate from the 200-day window)"
    return backend


# The null families (portfolio/track_record.py NULL_FAMILIES) as a report names them: a
# table's label, and the books in a sentence.
NULL_FAMILY_LABELS = {
    "daily_random": "Random, drawn daily",
    "fixed_random": "Random, fixed for the span",
    "size": "By traded value",
    "bought_and_held": "First month's book, held",
    "inverted": "Model's ranking inverted",
}
NULL_FAMILY_BOOKS = {
    "daily_random": "books ranked at random afresh each day",
    "fixed_random": "books ranked at random once for the span",
    "size": "book ranked by traded value",
    "bought_and_held": "book of the first month, bought and held",
    "inverted": "book on the model's ranking inverted",
}


def ratio(value: Any) -> str:
    """A ratio to two decimals with its sign, "-" without one."""
    return DASH if value is None else fixed(value, 2, signed=True)


def null_percentiles(nulls: NullBooksJson) -> str:
    """Where the replayed model book ranks in each null family, in words: "the 95th
    percentile of the 20 books ranked at random once for the span", "above the book ranked
    by traded value" (one book: `portfolio.nulls.standing`, as the backtest words it), with the
    caveat over fewer than FEW_BOOKS; a family whose every book tied says so; a family without
    books says why; the families without an information ratio (under 20 days of returns: the
    record's note says why) are named together, once."""
    parts, unranked = [], []
    for family, figures in nulls["families"].items():
        books, percentile = figures["books"], figures["model_percentile"]
        named = NULL_FAMILY_BOOKS.get(family, family)
        if not books:
            parts.append(f"no {named} ({figures['note']})")
        elif percentile is None:
            unranked.append(f"the {named}")
        elif standing(books) == ONE_BOOK:  # a percentile among one book: whether the model's beats it
            tie = ", day by day (a tie, not skill)" if figures.get("note") else ""  # the same book (family_ties)
            parts.append(
                f"{'above' if percentile > 50 else 'below' if percentile < 50 else 'level with'} the {named}{tie}"
            )
        elif figures.get("note"):  # every book of the family earned what the model's did (portfolio/nulls.py)
            parts.append(f"level with each of the {books} {named}, day by day (a tie, not a percentile)")
        else:
            few = " (too few books to read)" if standing(books) == FEW else ""
            parts.append(f"the {percentile_ordinal(percentile)} percentile of the {books} {named}{few}")
    if unranked:
        listed = ", ".join(unranked[:-1]) + (" or " if len(unranked) > 1 else "") + unranked[-1]
        parts.insert(0, f"not ranked against {listed} (no information ratio)")
    return "; ".join(parts)


def against_null_mean(nulls: NullBooksJson) -> str:
    """The replayed model book against the mean of the fixed random books, in words: its
    tracking error and information ratio are said to be against that mean, as the
    percentiles before them and the Briefing's table read the equal-weighted liquid
    universe."""
    mean = nulls.get("fixed_random_mean")
    if not mean:
        return "no mean of fixed random books to compare with"
    if mean["tracking_error"] is None:  # too few days to scale to a year: the record's note says why
        return f"{_null_mean_return(nulls)}; against that mean, no tracking error or information ratio over so few days"
    error = statistic_pct("tracking_error", mean["tracking_error"])
    earned = f"{_null_mean_return(nulls)}; against that mean, tracking error {error}"
    if mean["information_ratio"] is not None:
        return f"{earned}, information ratio {ratio(mean['information_ratio'])}"
    # no ratio of an excess over a tracking error of nought: said, not printed as "-"
    if not mean["tracking_error"]:
        return f"{earned}, so no information ratio (each day's return was their mean's)"
    return f"{earned}, no information ratio"


def _null_mean_return(nulls: NullBooksJson) -> str:
    """What the replayed model book earned against the fixed random books' mean: its active
    return a year or, under a year of returns (nothing annualised: portfolio/track_record.py
    `under_a_year`), both books' returns over the days, never a dash for a year's."""
    mean = nulls["fixed_random_mean"]
    if mean["excess_annual_return"] is not None:
        excess = statistic_pct("excess_annual_return", mean["excess_annual_return"])
        return f"{excess} a year against the mean of the fixed random books"
    model, books = (statistic_pct("total_return", r) for r in (nulls["model_total_return"], mean["total_return"]))
    return (
        f"{model} over these {nulls['days']} days, the mean of the fixed random books {books} (not annualised "
        "under a year of returns)"
    )


def null_books_summary(nulls: NullBooksJson | None) -> str:
    """What the AI portfolio's null books showed (views/track_record.py `nulls`), in a
    paragraph: the replayed model book's percentile in each family, its figures against the
    fixed-random mean, and the record's note (how the replay compares with the AI portfolio as executed,
    and that a short span says little)."""
    if not nulls:
        return "No null books yet: the AI portfolio has not executed a day."
    if nulls["days"] < MIN_NULL_DAYS:
        return f"No null books yet: {nulls['note']}"
    return (
        f"Over the AI portfolio's {nulls['days']} executed days, its book replayed by the backtest's engine (the "
        "engine the null books run on, so like is ranked with like) ranked, by information ratio against the "
        f"equal-weighted liquid universe: {null_percentiles(nulls)}. It earned {against_null_mean(nulls)}. "
        f"{nulls['note'] or ''}"
    ).strip()
