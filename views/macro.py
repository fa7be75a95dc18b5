"""Macro indicators point in time, in the caller's currency.

Point in time works the way ALFRED vintages do: a query `as_of` D sees, for every period,
the value of its latest release dated on or before D, and nothing released after D, even
if the store loaded it long ago; each release as known at the end of D (the exchange's
day): a release counts as known from its release date in the version the store first
recorded, however late it loaded it, and a correction of it (the source re-publishing
the same release with another value) from the day the store recorded it, so what a read
as of a past day serves never changes. Without `as_of` it sees what is known today:
releases dated up to today, each in its latest version. The answer is each indicator's
latest period under that view.

Currency: values in money units (reserves in USD, M2 and GDP in JMD) convert to a target
currency with the central bank's FX rates of the observation's own period (the monthly
average; for a quarter, the mean of its three months), as known `as_of` the same date.
FX rates are JMD per unit of the foreign currency, so X in USD is X x USDJMD in JMD, and
X in JMD is X / GBPJMD in GBP. Each converted value says which rates were used. When a
period's rate is not published yet, the latest earlier month's rate is used and named.
A rate published at 0 or below (a placeholder, a typo) is no rate: a value that needs it
is not converted, and its note names that rate, its month and its value.
Rates, indices and percentages have no currency and are never converted.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from statistics import fmean
from typing import TypedDict

from sqlalchemy import Connection

from market.clock import exchange_day_end_utc
from market.errors import InvalidInputError
from market.macro_catalogue import CATEGORIES, GENERATION, SOURCES, vintage
from store import tables
from store.history import current_rows

HOME = "JMD"
FX_CATEGORY = "fx"


class Observation(TypedDict):
    """A released value of a macro indicator for a period (`macro_observations`)."""

    id: int
    recorded_at: datetime
    source: str
    category: str
    indicator_code: str
    period: str  # 2026-10, 2026-Q3
    frequency: str
    value: float
    unit: str
    currency: str | None
    release_date: date


class Rate(TypedDict):
    """The FX rate a conversion used: the pair, the months it averages, and a note where it
    is an earlier month's or a part of the period's."""

    pair: str
    periods: list[str]
    rate: float
    release_date: date
    source: str
    note: str | None


class Original(TypedDict):
    value: float
    currency: str | None
    unit: str


class Indicator(TypedDict):
    """An indicator's latest period, in the caller's currency where it is money: its value
    before conversion (`original`) and the rates used (`fx`), or a note why it was not
    converted."""

    source: str
    category: str
    indicator_code: str
    period: str
    frequency: str
    value: float
    unit: str
    currency: str | None
    release_date: date
    original: Original | None
    fx: list[Rate]
    note: str | None


class Indicators(TypedDict):
    generation: str
    as_of: date | None
    currency: str | None
    count: int
    indicators: list[Indicator]


FxSeries = dict[str, dict[str, Observation]]  # pair (USDJMD) -> period -> its FX observation


def supported_currencies(conn: Connection) -> list[str]:
    pairs = {r["indicator_code"] for r in _rows(conn, None, source="BOJ", category=FX_CATEGORY)}
    return sorted({HOME} | {p[:3] for p in pairs if p.endswith(HOME)})


def _rows(
    conn: Connection, released_by: date | None, as_of: date | None = None, **equal: str | None
) -> list[Observation]:
    """The stored releases dated on or before `released_by` whose columns have the `equal`
    values given (None: any); each as known at the end of `as_of` (the exchange's day) when
    given: a release counts as known from its release date in the version the store first
    recorded, a correction of it from the day the store recorded that (store/history.py
    `backdate_first`). Without `as_of`, the latest version."""
    c = tables.macro_observations.c
    where = [c.release_date <= released_by] if released_by is not None else []
    where += [c[name] == value for name, value in equal.items() if value is not None]
    recorded_by = exchange_day_end_utc(as_of) if as_of is not None else None
    return current_rows(conn, tables.macro_observations, as_of=recorded_by, where=where, backdate_first=True)


ECHOED = 40  # the most of a refused filter an error repeats (GraphQL's arguments have no length cap)


def checked_filters(source: str | None, category: str | None, currency: str | None) -> tuple[str | None, ...]:
    """The filters as the store holds them, or InvalidInputError naming the one refused
    (its first ECHOED characters: a 50 KB argument is not sent back, nor logged, whole)."""
    if source is not None and source.upper() not in SOURCES:
        raise InvalidInputError(f"unknown source '{source[:ECHOED]}'; the sources are {', '.join(SOURCES)}")
    known_categories = sorted(set(CATEGORIES.values()))
    if category is not None and category.lower() not in known_categories:
        raise InvalidInputError(
            f"unknown category '{category[:ECHOED]}'; the categories are {', '.join(known_categories)}"
        )
    if currency is not None and not re.fullmatch(r"[A-Za-z]{3}", currency):
        raise InvalidInputError(f"currency '{currency[:ECHOED]}' is not a three-letter ISO 4217 code")
    return (
        source.upper() if source else None,
        category.lower() if category else None,
        currency.upper() if currency else None,
    )


def indicators(
    conn: Connection,
    source: str | None = None,
    category: str | None = None,
    currency: str | None = None,
    as_of: date | None = None,
    today: date | None = None,
) -> Indicators:
    """The latest value of every indicator (filtered), point in time and converted: as
    known on `as_of`, else on `today` (a release dated after today, which a replay or a
    source's release calendar can store, is not known yet), labelled with `as_of`."""
    source, category, currency = checked_filters(source, category, currency)
    if currency is not None and currency not in (known := supported_currencies(conn)):
        raise InvalidInputError(f"unknown currency code '{currency}'; FX rates exist for {', '.join(known)}")
    known_by = as_of if as_of is not None else today
    latest: dict[tuple[str, str], Observation] = {}
    for (src, code, _), row in vintage(_rows(conn, known_by, as_of, source=source, category=category)).items():
        held = latest.get((src, code))
        if held is None or row["period"] > held["period"]:
            latest[(src, code)] = row
    fx = _fx_series(conn, known_by, as_of) if currency else {}
    items = [_item(row, currency, fx) for _, row in sorted(latest.items())]
    return {"generation": GENERATION, "as_of": as_of, "currency": currency, "count": len(items), "indicators": items}


def _item(row: Observation, target: str | None, fx: FxSeries) -> Indicator:
    item: Indicator = {
        "source": row["source"],
        "category": row["category"],
        "indicator_code": row["indicator_code"],
        "period": row["period"],
        "frequency": row["frequency"],
        "value": row["value"],
        "unit": row["unit"],
        "currency": row["currency"],
        "release_date": row["release_date"],
        "original": None,
        "fx": [],
        "note": None,
    }
    if target is None or row["currency"] is None or row["currency"] == target:
        return item
    used, factor = [], 1.0
    for code, power in ((row["currency"], 1), (target, -1)):
        if code == HOME:
            continue
        rate = _rate(fx.get(code + HOME, {}), code + HOME, row["period"])
        if isinstance(rate, str):
            return {**item, "note": f"{rate}; not converted"}
        used.append(rate)
        factor *= rate["rate"] ** power
    unit = row["unit"].replace(row["currency"], target)
    return {
        **item,
        "value": round(row["value"] * factor, 6),
        "currency": target,
        "unit": unit,
        "original": {"value": row["value"], "currency": row["currency"], "unit": row["unit"]},
        "fx": used,
    }


def _fx_series(conn: Connection, released_by: date | None, as_of: date | None) -> FxSeries:
    series: FxSeries = {}
    for (_, code, period), row in vintage(_rows(conn, released_by, as_of, source="BOJ", category=FX_CATEGORY)).items():
        series.setdefault(code, {})[period] = row
    return series


def period_months(period: str) -> list[str]:
    if "Q" not in period:
        return [period]
    year, quarter = period.split("-Q")
    return [f"{year}-{m:02d}" for m in range(int(quarter) * 3 - 2, int(quarter) * 3 + 1)]


def _rate(months: dict[str, Observation], pair: str, period: str) -> Rate | str:
    """The FX rate of `period` (a quarter: the mean of its months), or the latest earlier
    month's when none of its months is published yet; else why there is none to convert
    with: no rate at all, or one published at 0 or below (a placeholder, a typo), which is
    no rate (dividing by it failed the read, multiplying by it showed a value of 0)."""
    wanted = period_months(period)
    found = [months[m] for m in wanted if m in months]
    note = None
    if not found:
        earlier = sorted(m for m in months if m < wanted[0])
        if not earlier:
            return f"no {pair} rate is published for {period} or earlier"
        found = [months[earlier[-1]]]
        note = f"the {period} rate is not published yet; the {earlier[-1]} rate is used"
    elif len(found) < len(wanted):
        note = f"only {', '.join(r['period'] for r in found)} of {period} are published; their mean is used"
    if bad := next((r for r in found if r["value"] <= 0), None):
        return f"the {pair} rate published for {bad['period']} is {bad['value']}, not a rate"
    return {
        "pair": found[0]["indicator_code"],
        "periods": [r["period"] for r in found],
        "rate": round(fmean(r["value"] for r in found), 6),
        "release_date": max(r["release_date"] for r in found),
        "source": "BOJ",
        "note": note,
    }


def releases(conn: Connection, code: str, as_of: date | None = None) -> list[Observation]:
    """Every stored release of one indicator, by period then release date (revisions show
    as several releases of one period); with `as_of`, those known at the end of that day
    (released on or before it, each as recorded by then: `_rows`), so a notebook run for a
    past date shows nothing from after it."""
    rows = _rows(conn, as_of, as_of, indicator_code=code)
    return sorted(rows, key=lambda r: (r["period"], r["release_date"]))
