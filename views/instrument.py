"""Instrument-centred reads for many instruments at once: the listing, each one's latest
prediction, predictions over a range, fundamentals, news with sentiment, the daily
sentiment composite and the liquidity gates.

Every function takes a list of symbols and answers for all of them with a fixed number of
SQL statements, so a GraphQL list of N instruments costs the same queries as one (the
DataLoaders in api/graphql/loaders.py call these). Results are keyed by symbol; a symbol
with nothing stored maps to an empty list or is absent.

Which prediction is served for a day: when a day was scored by more than one model (a
retrain re-scored it), the model recorded last wins (models/scoring.served_predictions, the
rule the AI executor, T2 and the live calibration read too). A served prediction is handed
on typed, as a `models.scoring.ServedPrediction`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import TypedDict

from sqlalchemy import Connection, Select, Table, func, select, tuple_
from sqlalchemy.sql import FromClause
from sqlalchemy.sql.elements import ColumnElement

from market.liquidity import entry_gates
from market.money import Fraction
from market.text import masked_urls, web_link
from models.scoring import SERVED_ORDER, ServedPrediction, served_predictions
from models.sentiment.composite import METHOD as SENTIMENT_METHOD
from models.sentiment.scorer import SCORER_ID
from portfolio.market import market_days, stored_estimates
from store import tables
from store.history import current_query, current_rows

NEWS_KINDS = {"NEWS": tables.news_items, "DISCLOSURE": tables.disclosures}


class InstrumentRow(TypedDict):
    """A listed instrument (`instruments`)."""

    id: int
    recorded_at: datetime
    symbol: str
    name: str
    board: str
    sector: str | None
    currency: str
    listed_on: date | None
    delisted_on: date | None
    source: str
    instrument_type: str | None


class FundamentalsRow(TypedDict):
    """A reported set of fundamentals (`fundamentals`)."""

    id: int
    recorded_at: datetime
    symbol: str
    report_date: date
    period_end: date | None
    eps: float | None
    book_value_per_share: float | None
    dividend_yield: float | None
    shares_outstanding: int | None
    market_cap: float | None
    source: str


class NewsItem(TypedDict):
    """A news item or disclosure naming an instrument, with its sentiment (None until
    t1_sentiment scored it)."""

    kind: str  # NEWS or DISCLOSURE
    id: int
    title: str
    link: str | None
    summary: str | None
    published_at: datetime
    sentiment: float | None


class Liquidity(TypedDict):
    """The entry gates' inputs on a day, with whether they pass and the ones that fail."""

    symbol: str
    trading_date: date
    as_of: date  # the name's last session with a row: ADV_20 and the spread are read through it
    adv_20: float | None
    volume: float
    spread: Fraction | None  # of the price (market/liquidity.py)
    spread_source: str
    passes_entry_gates: bool
    failed_gates: list[str]


def instruments(conn: Connection, on: date | None = None) -> list[InstrumentRow]:
    """Instruments listed on `on` (all current ones without it), ordered by symbol."""
    rows = current_rows(conn, tables.instruments)
    if on is not None:
        rows = [
            r
            for r in rows
            if (r["listed_on"] is None or r["listed_on"] <= on) and (r["delisted_on"] is None or r["delisted_on"] > on)
        ]
    return sorted(rows, key=lambda r: r["symbol"])


def latest_scored_day(conn: Connection) -> date | None:
    return conn.execute(select(func.max(tables.predictions.c.trading_date))).scalar()


def scoring_record(conn: Connection) -> tuple[date | None, date | None]:
    """Which record serves which days, the rule of views/market.py `day_scores` for every
    read of predictions: (the live record's first day, the validation record's last day).
    A day on or after the live record's first day is the live record's; a day before it
    (every day, with no live record yet) is the validation record's."""
    live_first = conn.execute(select(func.min(tables.predictions.c.trading_date))).scalar()
    validation_last = conn.execute(select(func.max(tables.validation_predictions.c.trading_date))).scalar()
    return live_first, validation_last


def latest_predictions(conn: Connection, symbols: list[str]) -> dict[str, ServedPrediction]:
    """Each symbol's prediction on the latest scored day (the live record's, else, with no
    live record yet, the validation record's: `scoring_record`); absent when the model
    skipped it."""
    day = latest_scored_day(conn)  # one statement while a live record exists, as before it
    table, record = tables.predictions, "live"
    if day is None:
        table, record = tables.validation_predictions, "validation"
        day = scoring_record(conn)[1]
    if day is None:
        return {}
    rows = current_rows(conn, table, where=[table.c.trading_date == day])
    served = served_predictions(rows).get(day, {})
    return {s: ServedPrediction.from_row(served[s], record) for s in symbols if s in served}


def predictions_between(
    conn: Connection,
    symbols: list[str],
    start: date | None,
    end: date | None,
    limit: int | None = None,
    after: date | None = None,
) -> dict[str, list[ServedPrediction]]:
    """Served predictions within [start, end], oldest first, per symbol: the first `limit`
    of each symbol (all without it) after the day `after` (a page's cursor), if given. Each
    day from the record that serves it (`scoring_record`): the validation record's days
    before the live record's first, then the live record's, each prediction saying which."""
    live_first, _ = scoring_record(conn)
    earlier = end if live_first is None else min(end or live_first, live_first - timedelta(days=1))
    found = _served_between(tables.validation_predictions, conn, symbols, start, earlier, limit, after)
    if live_first is not None and (end is None or end >= live_first):
        later = _served_between(
            tables.predictions, conn, symbols, max(start or live_first, live_first), end, limit, after
        )
        found = {s: (found[s] + later[s])[:limit] for s in found}
    return found


def _served_between(
    table: Table,
    conn: Connection,
    symbols: list[str],
    start: date | None,
    end: date | None,
    limit: int | None,
    after: date | None,
) -> dict[str, list[ServedPrediction]]:
    """`predictions_between` over one record's `table`. One statement that reads the current
    rows (`current_query`) of the asked symbols only, of each day's served model only
    (`served_models`, which decides it over every symbol's rows of the day without reading
    them whole). Reading every symbol's rows whole and keeping the asked ones after
    `served_predictions` took 2.6-3.6 s for one symbol of 40 over 1,500 days, about 0.1 s
    so (tests/views/test_instrument_predictions.py)."""
    if not symbols or (start is not None and end is not None and start > end):
        return {s: [] for s in symbols}
    record = "validation" if table is tables.validation_predictions else "live"

    def asked(rows: FromClause) -> list[ColumnElement[bool]]:
        clauses = [rows.c.symbol.in_(symbols)]
        if start is not None:
            clauses.append(rows.c.trading_date >= start)
        if end is not None:
            clauses.append(rows.c.trading_date <= end)
        if after is not None:
            clauses.append(rows.c.trading_date > after)
        return clauses

    of_asked = table.alias("asked")
    days = select(of_asked.c.trading_date).distinct().where(*asked(of_asked))
    served = tuple_(table.c.trading_date, table.c.model_id).in_(served_models(table, days))
    # Every condition is on the natural key (a day's served model is a key column), so a
    # key's versions are kept or left out together and the current one is current_rows'.
    query = current_query(table, where=[*asked(table), served], dialect=conn.dialect.name)
    if limit is not None:
        page = query.subquery()
        place = func.row_number().over(partition_by=page.c.symbol, order_by=page.c.trading_date).label("place")
        ranked = select(page, place).subquery()
        query = select(*[ranked.c[name] for name in page.c.keys()]).where(ranked.c.place <= limit)
    result: dict[str, list[ServedPrediction]] = {s: [] for s in symbols}
    found = conn.execute(query)
    names = list(found.keys())
    for row in sorted((dict(zip(names, r, strict=True)) for r in found), key=lambda r: r["trading_date"]):
        result[row["symbol"]].append(ServedPrediction.from_row(row, record))
    return result


def served_models(table: Table, days: Select) -> Select:
    """SELECT trading_date, model_id: the served model of each day that `days` (a SELECT of
    one column of trading dates) names, `models.scoring.served_model` as the database
    answers it: the model of the day's row largest by `SERVED_ORDER`, among every symbol's
    rows of the day (by the trading_date index, reading no document). Over every stored
    version, not the current ones only: the largest row of a day is the current version of
    its key (`served_model` says why), so the two agree."""
    day = days.subquery("served_day")
    rows = table.alias("day_rows")
    model = (
        select(rows.c.model_id)
        .where(rows.c.trading_date == day.c[0])
        .order_by(*[rows.c[name].desc() for name in SERVED_ORDER])
        .limit(1)
        .scalar_subquery()
    )
    return select(day.c[0].label("trading_date"), model.label("model_id"))


def latest_fundamentals(conn: Connection, symbols: list[str]) -> dict[str, FundamentalsRow]:
    """The latest reported fundamentals of each symbol (by report date)."""
    c = tables.fundamentals.c
    latest: dict[str, FundamentalsRow] = {}
    for row in current_rows(conn, tables.fundamentals, where=[c.symbol.in_(symbols)]):
        held = latest.get(row["symbol"])
        if held is None or row["report_date"] > held["report_date"]:
            latest[row["symbol"]] = row
    return latest


def news(conn: Connection, symbols: list[str]) -> dict[str, list[NewsItem]]:
    """News items and disclosures that name each symbol, newest first, with the document's
    sentiment score (null until t1_sentiment has scored it)."""
    m = tables.document_mentions.c
    mentions = current_rows(
        conn, tables.document_mentions, where=[m.symbol.in_(symbols), m.doc_kind.in_(list(NEWS_KINDS))]
    )
    ids: dict[str, set[int]] = defaultdict(set)
    for mention in mentions:
        ids[mention["doc_kind"]].add(mention["doc_id"])
    documents: dict[tuple[str, int], NewsItem] = {}
    for kind, table in NEWS_KINDS.items():
        if ids[kind]:
            for row in conn.execute(select(table).where(table.c.id.in_(sorted(ids[kind])))).mappings():
                documents[(kind, row["id"])] = {
                    "kind": kind,
                    "id": row["id"],
                    "title": row["title"] or "",
                    "link": _served_link(row.get("link") or row.get("url")),
                    "summary": row.get("summary"),
                    "published_at": row["published_at"] or row["recorded_at"],
                    "sentiment": None,
                }
    s = tables.sentiment_scores.c
    all_ids = sorted(set().union(*ids.values()))
    scores = (
        {
            (r["doc_kind"], r["doc_id"]): r["score"]
            for r in current_rows(conn, tables.sentiment_scores, where=[s.scorer == SCORER_ID, s.doc_id.in_(all_ids)])
        }
        if all_ids
        else {}
    )
    result: dict[str, list[NewsItem]] = {s_: [] for s_ in symbols}
    for mention in mentions:
        key = (mention["doc_kind"], mention["doc_id"])
        if key in documents:
            result[mention["symbol"]].append({**documents[key], "sentiment": scores.get(key)})
    for items in result.values():
        items.sort(key=lambda d: (d["published_at"], d["kind"], d["id"]), reverse=True)
    return result


def sentiment_between(
    conn: Connection, symbols: list[str], start: date | None, end: date | None
) -> dict[str, list[dict]]:
    """The daily sentiment composite (t1_sentiment) within [start, end], oldest first."""
    c = tables.sentiment_composites.c
    where = [c.symbol.in_(symbols), c.method == SENTIMENT_METHOD]
    if start is not None:
        where.append(c.trading_date >= start)
    if end is not None:
        where.append(c.trading_date <= end)
    result: dict[str, list[dict]] = {s: [] for s in symbols}
    for row in sorted(current_rows(conn, tables.sentiment_composites, where=where), key=lambda r: r["trading_date"]):
        result[row["symbol"]].append(row)
    return result


def liquidity(conn: Connection, day: date, symbols: list[str]) -> dict[str, Liquidity]:
    """The three per-instrument entry gates (market/liquidity.py) on
    `day`: ADV_20, the day's volume and the spread, each with whether it passes, and `as_of`,
    the name's last session with a row, which ADV_20 and the spread are read through: `day`
    while it trades, earlier for a name that stopped trading or was delisted (shown as of
    `day`, its weeks-old figures read as today's).

    The spread shown (and gated) is the closing quotes' where the day has both sides, else
    the estimate from the name's stored bars up to `day` (views/spreads.py: Abdi-Ranaldo,
    else Corwin-Schultz or one tick, else the window's mean range), else the day's range;
    `spread_source` says which."""
    result: dict[str, Liquidity] = {}
    estimates = stored_estimates(conn, day, symbols)
    for symbol, market in market_days(conn, day, symbols).items():
        if symbol in estimates:
            market = replace(market, spread_estimate=estimates[symbol][0], spread_estimate_source=estimates[symbol][1])
        spread = market.spread
        adv = market.adv_20
        gates = entry_gates(adv, market.volume, spread)
        result[symbol] = {
            "symbol": symbol,
            "trading_date": day,
            "as_of": market.dated,
            "adv_20": adv,
            "volume": market.volume,
            "spread": spread,
            "spread_source": market.spread_source,
            "passes_entry_gates": all(gates.values()),
            "failed_gates": [name for name, passed in gates.items() if not passed],
        }
    return result


def _served_link(stored: str | None) -> str | None:
    """A news item's or disclosure's address as it is served: a `web_link` (one stored before
    links were checked too) without credentials (`masked_urls`: a disclosure's address, read
    against a feed's that carries them, carries them too)."""
    link = web_link(stored)
    return masked_urls(link) if link else link
