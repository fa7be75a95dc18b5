"""The model's point-in-time reads of the store: the bars (split-adjusted, with whether
each instrument is an ordinary share), the sentiment composites, the risk models
registered in `model_runs`, and the validation record's bounds, days and latest metrics.
models/ computes on what these return and never opens a connection itself (the stages'
shells in pipeline/ call these and hand models/ the result)."""

from __future__ import annotations

from datetime import date, datetime
from typing import TypedDict

import pandas as pd
from sqlalchemy import Connection, Table, func, select

from market.instruments import is_ordinary
from market.plain import JsonValue
from store import tables
from store.history import current_frame, current_rows
from store.instruments import instrument_types
from store.splits import Split, followed, joined, joined_rows, stored_splits

PRICE_COLUMNS = ("close", "bid", "ask", "high", "low")
BAR_COLUMNS = ("symbol", "trading_date", "close", "volume", "bid", "ask", "high", "low")  # what `price_panel` reads
# A stored price row as the readers of whole rows use it (views/market.py, views/bars.py,
# portfolio/market.py): every column but the version's time, whose conversion is most of
# reading a row and which no such reader uses.
PRICE_ROW_COLUMNS = tuple(c.name for c in tables.eod_prices.c if c.name != "recorded_at")


class _Stored(TypedDict):
    id: int
    recorded_at: datetime


class ModelRun(_Stored):
    """A registered model run (`model_runs`): a risk model, or a walk-forward model of the
    validation record (kind `validation`)."""

    model_id: str
    kind: str
    parent_model_id: str | None
    train_start: date | None
    train_end: date | None
    horizon_days: int
    layer1_backend: str | None
    warm_start: bool
    training_rows: int | None
    feature_names: list[str]
    params: dict[str, JsonValue]
    artifact_path: str | None


class MetricRow(_Stored):
    """A stored metric of a record (`model_metrics`): its value beside its base rate and
    sample size, and the baselines and the record's period in `detail`."""

    model_id: str
    scope: str
    metric: str
    value: float | None
    base_rate: float | None
    sample_size: int | None
    detail: dict[str, JsonValue]


def price_panel(conn: Connection, day: date, since: date | None = None) -> pd.DataFrame:
    """Every stored bar up to `day` (from `since`, when given), adjusted for the splits known
    by then, with `ordinary`: whether the instrument is an ordinary share (store/instruments.py;
    a bar of an instrument the store does not describe counts as one). A company whose ticker
    changed by `day` is one series under the symbol it trades under then
    (`store.splits.joined`); before the rename's ex-date only the old symbol exists."""
    c = tables.eod_prices.c
    where = [c.trading_date <= day] + ([c.trading_date >= since] if since else [])
    frame = current_frame(conn, tables.eod_prices, BAR_COLUMNS, where=where).rename(columns={"trading_date": "date"})
    types = instrument_types(conn)
    other = [symbol for symbol, kind in types.items() if not is_ordinary(kind)]
    frame["ordinary"] = ~frame["symbol"].isin(other)  # undescribed: counts as one
    splits = stored_splits(conn, day)
    return split_adjusted(joined(frame, splits, day, "date"), followed(splits, day))


def on_series(conn: Connection, frame: pd.DataFrame, day: date, date_column: str = "date") -> pd.DataFrame:
    """`frame` (stored rows with `symbol` and `date_column`: predictions, scores, sentiment
    composites) under the symbols `price_panel(conn, day)` reads their bars under
    (`store.splits.joined`), so a row stored under a company's old ticker meets its bars."""
    return joined(frame, stored_splits(conn, day), day, date_column)


def rows_on_series(conn: Connection, rows: list[dict], day: date) -> list[dict]:
    """`on_series` of stored rows as dicts (`symbol`, `trading_date`)."""
    return joined_rows(rows, stored_splits(conn, day), day) if rows else rows


def stored_closes(
    conn: Connection, after: date, before: date | None = None, through_id: int | None = None
) -> dict[date, dict[str, float]]:
    """The current close of every symbol on each day after `after` (and before `before`),
    by day then symbol, as the store stood when its newest price id was `through_id`.

    The same versions `current_rows` picks (the latest recorded, then the highest id, of
    each symbol and day), read through the date index and picked here: the window query
    reads the whole price table by key for a range of dates, and with the id bound in the
    query SQLite reads the table by id; a read model catching up on a few days (views/
    book_record.py) reads those days only."""
    c = tables.eod_prices.c
    query = select(c.id, c.recorded_at, c.symbol, c.trading_date, c.close).where(c.trading_date > after)
    if before is not None:
        query = query.where(c.trading_date < before)
    latest: dict[tuple[str, date], tuple[tuple, float]] = {}
    for row in conn.execute(query):
        if through_id is not None and row.id > through_id:
            continue
        key, rank = (row.symbol, row.trading_date), (row.recorded_at, row.id)
        if key not in latest or rank > latest[key][0]:
            latest[key] = (rank, float(row.close))
    out: dict[date, dict[str, float]] = {}
    for (symbol, day), (_, close) in latest.items():
        out.setdefault(day, {})[symbol] = close
    return out


def split_adjusted(prices: pd.DataFrame, splits: list[Split]) -> pd.DataFrame:
    """The bars before each split's ex-date on the new count: prices divided by the factor,
    volumes multiplied by it, so the ex-date's return, the momentum, RSI, bands and
    volatility read no loss (or gain) where there was only a new share count. The
    stored bars are unchanged (what the API serves is what traded)."""
    if not splits:
        return prices
    adjusted = prices.copy()
    for column in ("volume", *PRICE_COLUMNS):
        if column in adjusted:
            # a missing quote is NaN, not None; volumes as floats: a bonus issue's factor (1.2) makes fractions
            adjusted[column] = pd.to_numeric(adjusted[column], errors="coerce").astype(float)
    for split in splits:
        before = (adjusted["symbol"] == split.symbol) & (adjusted["date"] < split.ex_date)
        for column in PRICE_COLUMNS:
            if column in adjusted:
                adjusted.loc[before, column] = adjusted.loc[before, column] / split.factor
        adjusted.loc[before, "volume"] = adjusted.loc[before, "volume"] * split.factor
    return adjusted


def sentiment_composites(conn: Connection, day: date, method: str) -> pd.DataFrame:
    """Every stored sentiment composite of `method` up to `day`: symbol (a renamed
    company's as `price_panel` reads it, `on_series`), date (the trading date) and score;
    models/scoring.py `sentiment_inputs` splits the market's row from the names'. (Each
    row's inputs are not read: a panel never uses them.)"""
    c = tables.sentiment_composites.c
    where = [c.trading_date <= day, c.method == method]
    columns = ("symbol", "trading_date", "score")
    frame = current_frame(conn, tables.sentiment_composites, columns, where=where)
    return on_series(conn, frame.rename(columns={"trading_date": "date"}), day)


def risk_models(conn: Connection) -> list[ModelRun]:
    """Every registered model run (`model_runs`, current versions), any kind."""
    return current_rows(conn, tables.model_runs)


def latest_model(conn: Connection, through: date | None = None) -> ModelRun | None:
    """The risk model trained last (latest train_end, then the latest recorded), or None;
    with `through`, the last one trained on data up to that day: the model of its time,
    which a day scored again, or late, is scored with (never one trained after it)."""
    where = [tables.model_runs.c.kind == "risk"]
    if through is not None:
        where.append(tables.model_runs.c.train_end <= through)
    runs = current_rows(conn, tables.model_runs, where=where)
    return max(runs, key=lambda r: (r["train_end"], r["recorded_at"])) if runs else None


def first_live_day(conn: Connection) -> date | None:
    """The first day the live record (`predictions`) has a prediction for, or None."""
    return conn.execute(select(func.min(tables.predictions.c.trading_date))).scalar()


def record_end(conn: Connection) -> date | None:
    """The last day the validation record may cover: the day before the first live
    prediction (the live record starts there), else the latest priced day."""
    p = tables.eod_prices.c
    live = first_live_day(conn)
    query = select(func.max(p.trading_date))
    if live is not None:
        query = query.where(p.trading_date < live)
    return conn.execute(query).scalar()


def prediction_days(conn: Connection, table: Table, first: date, last: date) -> list[date]:
    """The trading days from `first` to `last` that `table` (`predictions` or
    `validation_predictions`) has predictions for, oldest first."""
    c = table.c
    query = select(c.trading_date).where(c.trading_date >= first, c.trading_date <= last).distinct()
    return [d for (d,) in conn.execute(query.order_by(c.trading_date))]


def latest_metrics(conn: Connection, model_id: str) -> tuple[str | None, dict[str, MetricRow]]:
    """The metric rows of `model_id` (`model_metrics`) in its latest recorded scope: the
    scope and the rows by metric name (the validation record's, under its model_id)."""
    rows = current_rows(conn, tables.model_metrics, where=[tables.model_metrics.c.model_id == model_id])
    if not rows:
        return None, {}
    latest = max(rows, key=lambda r: (r["recorded_at"], r["id"]))["scope"]
    return latest, {r["metric"]: r for r in rows if r["scope"] == latest}
