"""An instrument's served predictions over a range (views/instrument.py `predictions_between`,
GraphQL's `instrument { predictions }`) read the asked symbols' rows only, and serve what
the rule over every symbol's rows serves (models/scoring.py `served_predictions`): a day's
model is the one recorded last, so a symbol a retrain did not re-score has no prediction
that day, and a corrected row is served in its current version.

The rows read were every symbol's in the range, whole: one symbol of 40 over 1,500 days
took 2.6-3.6 s (2.45 s as a reviewer measured it through GraphQL), about 0.1 s now."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection, create_engine, insert, select

from market.settings import Settings
from models.scoring import ServedPrediction, served_model, served_predictions
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows
from store.migrations import upgrade
from views.instrument import predictions_between, served_models

DAYS = [date(2026, 3, 2) + timedelta(days=n) for n in range(6)]
AT = datetime(2026, 3, 9, 18, tzinfo=UTC)


def served_over_every_row(
    conn: Connection, symbols: list[str], start: date | None, end: date | None
) -> dict[str, list[ServedPrediction]]:
    """The read as it was: every symbol's current rows in the range, the served rule over
    all of them, then the asked symbols kept. The reference the view is held to."""
    c = tables.predictions.c
    where = []
    if start is not None:
        where.append(c.trading_date >= start)
    if end is not None:
        where.append(c.trading_date <= end)
    served = served_predictions(current_rows(conn, tables.predictions, where=where))
    result: dict[str, list[ServedPrediction]] = {s: [] for s in symbols}
    for day in sorted(served):
        for symbol, row in served[day].items():
            if symbol in result:
                result[symbol].append(ServedPrediction.from_row(row))
    return result


def _row(symbol: str, day: date, model: str, score: float) -> dict:
    reasons = {"base_value": 0.1, "top": [{"feature": "rsi_14", "contribution": score / 1000}]}
    return {"symbol": symbol, "trading_date": day, "model_id": model, "horizon_days": 5, "score": score} | {
        "reasons": reasons
    }


def _store_rescored(conn: Connection) -> None:
    """AAA, BBB and CCC scored by m1 on days 0 to 4; a retrain, m2, re-scored days 1 to 4
    for AAA and BBB only, recorded later; corrections of m1 rows recorded after that (one on
    a day m2 had re-scored, which makes m1 that day's model recorded last again); and a day
    where both models were recorded in one write (the row id decides)."""
    append_history(
        conn,
        tables.predictions,
        [_row(s, d, "m1", 40.0) for d in DAYS[:5] for s in "AAA BBB CCC".split()],
        recorded_at=AT,
    )
    append_history(
        conn,
        tables.predictions,
        [_row(s, d, "m2", 60.0) for d in DAYS[1:5] for s in ("AAA", "BBB")],
        recorded_at=AT + timedelta(hours=1),
    )
    corrected = [_row("AAA", DAYS[0], "m1", 41.0), _row("CCC", DAYS[4], "m1", 42.0)]
    append_history(conn, tables.predictions, corrected, recorded_at=AT + timedelta(hours=2))
    same_write = [_row("AAA", DAYS[5], "m2", 61.0), _row("BBB", DAYS[5], "m2", 62.0), _row("AAA", DAYS[5], "m1", 43.0)]
    append_history(conn, tables.predictions, same_write, recorded_at=AT + timedelta(hours=3))
    append_history(conn, tables.predictions, [_row("ZZZ", DAYS[2], "m2", 50.0)], recorded_at=AT - timedelta(days=1))


def test_the_served_predictions_of_a_symbol_are_the_ones_served_over_every_symbols_rows(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        _store_rescored(conn)
    with engine.connect() as conn:
        spans = [(None, None), (DAYS[1], None), (None, DAYS[3]), (DAYS[2], DAYS[4]), (DAYS[5], DAYS[5])]
        for asked in (["AAA"], ["BBB"], ["CCC"], ["ZZZ"], ["NONE"], ["CCC", "AAA"], ["AAA", "BBB", "CCC", "ZZZ"]):
            for start, end in spans:
                expected = served_over_every_row(conn, asked, start, end)
                assert predictions_between(conn, asked, start, end) == expected, (asked, start, end)
                for limit, after in ((1, None), (2, DAYS[1]), (10, DAYS[4])):  # a page: the range's, sliced
                    page = {
                        s: [p for p in rows if after is None or p.trading_date > after][:limit]
                        for s, rows in expected.items()
                    }
                    assert predictions_between(conn, asked, start, end, limit, after) == page, (asked, limit, after)
        everything = predictions_between(conn, ["AAA", "BBB", "CCC"], None, None)
    served = {s: [(p.trading_date, p.model_id, p.score) for p in rows] for s, rows in everything.items()}
    assert served["AAA"] == [
        (DAYS[0], "m1", 41.0),  # the correction
        (DAYS[1], "m2", 60.0),
        (DAYS[2], "m2", 60.0),  # ZZZ's m2 row, recorded before, does not decide the day
        (DAYS[3], "m2", 60.0),
        (DAYS[4], "m1", 40.0),  # CCC's m1 correction was recorded last that day
        (DAYS[5], "m1", 43.0),  # recorded in one write with m2's: the larger id
    ]
    # m2 re-scored days 1-3 without CCC: CCC has no prediction those days (m1's is not served)
    assert [d for d, *_ in served["CCC"]] == [DAYS[0], DAYS[4]]
    assert [d for d, *_ in served["BBB"]] == DAYS[:5]


def test_the_database_picks_the_model_the_rule_picks_each_day(settings: Settings) -> None:
    """views/instrument.py `served_models` is models/scoring.py `served_model` as SQL: over
    a day's every stored version it names the model the rule names over its current rows."""
    engine = service_engine(settings)
    with engine.begin() as conn:
        _store_rescored(conn)
    with engine.connect() as conn:
        days = select(tables.predictions.c.trading_date).distinct()
        in_sql = {day: model for day, model in conn.execute(served_models(tables.predictions, days))}
        rows = current_rows(conn, tables.predictions)
    by_rule = {day: served_model([r for r in rows if r["trading_date"] == day]) for day in DAYS}
    assert in_sql == by_rule
    assert [by_rule[d] for d in DAYS] == ["m1", "m2", "m2", "m2", "m1", "m1"]


class _CountingCursor(sqlite3.Cursor):
    """Counts the rows the database hands to Python, whichever way they are fetched."""

    fetched = 0

    def _counted(self, rows: list) -> list:
        _CountingCursor.fetched += len(rows)
        return rows

    def fetchone(self) -> tuple | None:
        row = super().fetchone()
        return row if row is None else self._counted([row])[0]

    def fetchmany(self, size: int = 1) -> list:
        return self._counted(super().fetchmany(size))

    def fetchall(self) -> list:
        return self._counted(super().fetchall())

    def __next__(self) -> tuple:
        return self._counted([super().__next__()])[0]


class _CountingConnection(sqlite3.Connection):
    def cursor(self, factory: type = _CountingCursor) -> sqlite3.Cursor:
        return super().cursor(factory)


def test_one_symbols_predictions_read_that_symbols_rows_only(tmp_path: Path) -> None:
    """On a store of 40 symbols scored 300 days, one symbol's predictions hand Python that
    symbol's 300 rows, not the 12,000 of every symbol (the read did: each whole, its reasons
    included), and a page of one its 2. The served model of each day is still decided by
    the database over every symbol's rows of the day, by the trading_date index."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = create_engine(url, connect_args={"factory": _CountingConnection})
    upgrade(engine)
    days = [date(2024, 1, 1) + timedelta(days=n) for n in range(300)]
    symbols = ["LIQ", *(f"S{n:02d}" for n in range(1, 40))]
    reasons = {"base_value": 0.1, "top": [{"feature": f"f{n}", "contribution": 0.01} for n in range(3)]}
    rows = [
        {"symbol": s, "trading_date": d, "model_id": "m1", "horizon_days": 5, "score": 50.0, "reasons": reasons}
        | {"recorded_at": AT + timedelta(minutes=n)}
        for n, d in enumerate(days)
        for s in symbols
    ]
    with engine.begin() as conn:
        conn.execute(insert(tables.predictions), rows)
    with engine.connect() as conn:
        _CountingCursor.fetched = 0
        served = predictions_between(conn, ["LIQ"], None, None)
        whole = _CountingCursor.fetched
        _CountingCursor.fetched = 0
        page = predictions_between(conn, ["LIQ"], None, None, 2)
        paged = _CountingCursor.fetched
    dates = 2  # the two dates that say which record serves which days (views/instrument.py `scoring_record`)
    assert whole == len(days) + dates, f"{whole} rows read for one symbol's {len(days)} (the store holds {len(rows)})"
    assert len(served["LIQ"]) == len(days) and [p.trading_date for p in page["LIQ"]] == days[:2]
    assert paged == 2 + dates
    engine.dispose()
