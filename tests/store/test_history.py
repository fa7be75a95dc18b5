"""Idempotent appends, new versions for changes, and "as known at T" reads."""

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from market.errors import InvalidInputError
from market.settings import Settings
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows

T0 = datetime(2026, 11, 20, 21, 0, tzinfo=UTC)
DAY = date(2026, 11, 20)


def _price(symbol: str, close: float, volume: int = 1000, **extra) -> dict:
    return {"symbol": symbol, "trading_date": DAY, "close": close, "volume": volume, "source": "test", **extra}


def _count(conn, table) -> int:
    return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_same_content_twice_is_stored_once(settings: Settings) -> None:
    engine = service_engine(settings)
    rows = [_price("NCBFG", 101.5, bid=101.0, ask=102.0), _price("GK", 88.0, volume=0)]
    with engine.begin() as conn:
        first = append_history(conn, tables.eod_prices, rows, recorded_at=T0)
    with engine.begin() as conn:
        second = append_history(conn, tables.eod_prices, [dict(r) for r in rows], recorded_at=T0 + timedelta(hours=1))
        assert _count(conn, tables.eod_prices) == 2
    assert (first.inserted, first.unchanged) == (2, 0)
    assert (second.inserted, second.unchanged) == (0, 2)


def test_a_correction_is_a_new_version_and_history_keeps_the_old_one(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [_price("NCBFG", 101.5)], recorded_at=T0)
        result = append_history(conn, tables.eod_prices, [_price("NCBFG", 101.75)], recorded_at=T0 + timedelta(hours=2))
        assert result.inserted == 1
        assert _count(conn, tables.eod_prices) == 2
        (current,) = current_rows(conn, tables.eod_prices)
        assert current["close"] == 101.75


def test_as_known_at_ignores_rows_recorded_later(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [_price("NCBFG", 101.5)], recorded_at=T0)
        append_history(
            conn, tables.eod_prices, [_price("NCBFG", 103.0), _price("GK", 88.0)], recorded_at=T0 + timedelta(days=1)
        )
        before = current_rows(conn, tables.eod_prices, as_of=T0 + timedelta(hours=23))
        exactly = current_rows(conn, tables.eod_prices, as_of=T0)
        too_early = current_rows(conn, tables.eod_prices, as_of=T0 - timedelta(seconds=1))
        latest = current_rows(conn, tables.eod_prices)
    assert [(r["symbol"], r["close"]) for r in before] == [("NCBFG", 101.5)]
    assert [(r["symbol"], r["close"]) for r in exactly] == [("NCBFG", 101.5)]
    assert too_early == []
    assert sorted((r["symbol"], r["close"]) for r in latest) == [("GK", 88.0), ("NCBFG", 103.0)]


def test_as_of_accepts_other_timezones(settings: Settings) -> None:
    from market.clock import EXCHANGE_TZ

    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [_price("NCBFG", 101.5)], recorded_at=T0)
        kingston_same_instant = T0.astimezone(EXCHANGE_TZ)
        assert len(current_rows(conn, tables.eod_prices, as_of=kingston_same_instant)) == 1
        assert current_rows(conn, tables.eod_prices, as_of=kingston_same_instant - timedelta(microseconds=1)) == []


def test_money_is_exact_and_json_compares_by_content(settings: Settings) -> None:
    engine = service_engine(settings)
    trade = {
        "trade_id": "t-1",
        "portfolio_id": "house",
        "trading_date": DAY,
        "executed_at": T0,
        "symbol": "NCBFG",
        "side": "BUY",
        "quantity": 300,
        "price": Decimal("0.1") + Decimal("0.2"),
        "fees": "12.345678",
        "origin": "MANUAL",
        "rationale": {"score": 71, "gates": ["adv", "spread"]},
    }
    with engine.begin() as conn:
        append_history(conn, tables.trades, [trade])
        reordered = {**trade, "rationale": {"gates": ["adv", "spread"], "score": 71}, "fees": Decimal("12.345678")}
        assert append_history(conn, tables.trades, [reordered]).inserted == 0
        (stored,) = current_rows(conn, tables.trades)
    assert stored["price"] == Decimal("0.3")
    assert stored["fees"] == Decimal("12.345678")
    assert stored["executed_at"] == T0


def test_missing_values_and_nan_read_back_as_none(settings: Settings) -> None:
    engine = service_engine(settings)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [_price("GK", 88.0, bid=float("nan"))])
        assert append_history(conn, tables.eod_prices, [_price("GK", 88.0)]).inserted == 0
        (row,) = current_rows(conn, tables.eod_prices)
    assert row["bid"] is None and row["halted"] is False


@pytest.mark.parametrize(
    "rows, message",
    [
        ([_price("GK", 1.0), _price("GK", 2.0)], "two rows for the same key"),
        ([_price("GK", 1.0, colour="red")], "unknown columns"),
        ([{"symbol": "GK", "trading_date": DAY, "volume": 1, "source": "t"}], "close is required"),
    ],
)
def test_bad_rows_are_refused_before_anything_is_written(settings: Settings, rows: list, message: str) -> None:
    engine = service_engine(settings)
    with pytest.raises(InvalidInputError, match=message):
        with engine.begin() as conn:
            append_history(conn, tables.eod_prices, rows)
    with engine.connect() as conn:
        assert _count(conn, tables.eod_prices) == 0


def test_naive_timestamps_are_refused(settings: Settings) -> None:
    engine = service_engine(settings)
    with pytest.raises(InvalidInputError, match="naive datetime"):
        with engine.begin() as conn:
            append_history(
                conn,
                tables.api_key_events,
                [{"key_id": "k1", "event": "REVOKED", "effective_at": datetime(2026, 11, 20, 12, 0)}],
            )


def test_many_keys_are_compared_in_chunks(settings: Settings) -> None:
    engine = service_engine(settings)
    rows = [_price(f"S{i:04d}", 10.0 + i) for i in range(1500)]
    with engine.begin() as conn:
        assert append_history(conn, tables.eod_prices, rows).inserted == 1500
        changed = [dict(r) for r in rows]
        changed[1234]["close"] = 1.0
        assert append_history(conn, tables.eod_prices, changed).inserted == 1


def test_stored_closes_are_the_current_versions_as_of_an_id(settings: Settings) -> None:
    """store.panels.stored_closes picks what current_rows picks (the latest recorded, then the
    highest id), over a span, and as the table stood at an id."""
    from store.panels import stored_closes

    engine = service_engine(settings)
    before = DAY - timedelta(days=1)
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, [_price("GK", 88.0), _price("NCBFG", 101.5)], recorded_at=T0)
        old = conn.execute(select(func.max(tables.eod_prices.c.id))).scalar_one()
        append_history(conn, tables.eod_prices, [_price("GK", 90.0)], recorded_at=T0 + timedelta(hours=1))
        later = [{**_price("GK", 91.0), "trading_date": DAY + timedelta(days=3)}]
        append_history(
            conn, tables.eod_prices, later, recorded_at=T0 - timedelta(hours=1)
        )  # recorded earlier, id higher
        current = {(r["trading_date"], r["symbol"]): r["close"] for r in current_rows(conn, tables.eod_prices)}
        assert stored_closes(conn, before) == {
            DAY: {"GK": 90.0, "NCBFG": 101.5},
            DAY + timedelta(days=3): {"GK": 91.0},
        }
        assert {(d, s): c for d, row in stored_closes(conn, before).items() for s, c in row.items()} == current
        assert stored_closes(conn, before, through_id=old) == {DAY: {"GK": 88.0, "NCBFG": 101.5}}
        assert stored_closes(conn, before, before=DAY + timedelta(days=1)) == {DAY: {"GK": 90.0, "NCBFG": 101.5}}
        assert stored_closes(conn, DAY) == {DAY + timedelta(days=3): {"GK": 91.0}}


def test_where_a_row_came_from_is_not_what_it_says(settings: Settings) -> None:
    """The same values from another source or delivery (T0's, then an import's) are stored
    once, keeping the first source and delivery; a changed value is a new version."""
    engine = service_engine(settings)
    with engine.begin() as conn:
        delivery = {"trading_date": DAY, "status": "COMPLETE", "source": "http://x", "checksum": "c", "row_count": 1}
        append_history(conn, tables.deliveries, [{**delivery, "manifest": {}}], recorded_at=T0)
        (delivered,) = current_rows(conn, tables.deliveries)
        first = _price("GK", 88.0, source="http://x", delivery_id=delivered["id"])
        append_history(conn, tables.eod_prices, [first], recorded_at=T0)
        again = append_history(conn, tables.eod_prices, [_price("GK", 88.0, source="import:ohlcv", delivery_id=None)])
        (row,) = current_rows(conn, tables.eod_prices)
        assert again.inserted == 0 and (row["source"], row["delivery_id"]) == ("http://x", delivered["id"])
        assert append_history(conn, tables.eod_prices, [_price("GK", 88.5, source="import:ohlcv")]).inserted == 1


def _versions(conn) -> None:
    """Versions with corrections, ties in recorded_at (broken by id), a version recorded
    earlier than the one it follows, and a correction that a non-key filter leaves out."""
    day2 = DAY + timedelta(days=1)
    hour = timedelta(hours=1)
    rows = [
        (_price("A", 1.0), T0),
        (_price("A", 2.0), T0 + hour),
        (_price("A", 3.0), T0 + hour),  # same instant, higher id: the current one
        ({**_price("A", 4.0), "trading_date": day2}, T0 + 2 * hour),
        ({**_price("A", 5.0), "trading_date": day2}, T0),  # recorded earlier, higher id
        (_price("B", 6.0, volume=5), T0),
        (_price("B", 7.0, volume=0), T0 + hour),
        ({**_price("C", 8.0), "trading_date": day2}, T0 + hour),
        ({**_price("C", 9.0), "trading_date": day2}, T0 + hour),
    ]
    for row, recorded_at in rows:
        conn.execute(tables.eod_prices.insert(), [{**row, "recorded_at": recorded_at}])


def test_each_form_of_the_current_versions_reads_the_same_rows(settings: Settings) -> None:
    """The NOT EXISTS form (`current_query` on SQLite) and the row_number() form (elsewhere)
    pick the same versions: with ties, corrections, `as_of` and `where` filters, including a
    filter on a non-key column and one with a subquery over the same table."""
    from store.history import current_query

    engine = service_engine(settings)
    p = tables.eod_prices.c
    other = tables.eod_prices.alias("other")
    cases = [
        {},
        {"as_of": T0 + timedelta(minutes=30)},
        {"as_of": T0 + timedelta(hours=1)},
        {"where": [p.symbol == "A"]},
        {"where": [p.volume > 0]},
        {"where": [p.trading_date > DAY], "as_of": T0 + timedelta(hours=1)},
        {"where": [p.symbol.in_(select(other.c.symbol).where(other.c.close >= 8.0))]},
        {"where": [p.close < 3.0], "columns": ["symbol", "trading_date", "close"]},
    ]
    assert "EXISTS" in str(current_query(tables.eod_prices, dialect="sqlite"))
    assert "row_number" in str(current_query(tables.eod_prices, dialect=None))
    with engine.begin() as conn:
        _versions(conn)
        for case in cases:
            ranked, unsuperseded = (
                sorted(tuple(r) for r in conn.execute(current_query(tables.eod_prices, dialect=dialect, **case)))
                for dialect in (None, "sqlite")
            )
            assert unsuperseded == ranked, case
        latest = {(r["symbol"], r["trading_date"]): r["close"] for r in current_rows(conn, tables.eod_prices)}
        matching = current_rows(conn, tables.eod_prices, where=[p.volume > 0], columns=["symbol", "close"])
    assert latest == {
        ("A", DAY): 3.0,
        ("A", DAY + timedelta(days=1)): 4.0,
        ("B", DAY): 7.0,
        ("C", DAY + timedelta(days=1)): 9.0,
    }
    assert {r["symbol"]: r["close"] for r in matching if r["symbol"] == "B"} == {"B": 6.0}
