"""What a read of current rows costs in each form store/history.py `current_query` can
take: the row_number() window over each key's versions (`_ranked`) and the versions no
later one supersedes (NOT EXISTS on the key's index, `_unsuperseded`), on SQLite and on
Postgres, in paired runs (the two forms alternate, best and median of each).

The store: a fresh migrated SQLite file and a fresh Postgres database on 127.0.0.1:5432
(`MARKETINTEL_BENCH_POSTGRES`, dropped afterwards), each holding `--prices` eod_prices
rows (symbols x days, one in twenty keys corrected once, some corrections recorded at the
same instant as the version they replace, so ties are broken by id) and `--instruments`
instruments (every tenth corrected). The reads: every current price, the prices as known
at a past instant, one symbol's prices, a date range, and every current instrument; each
read's rows are compared between the forms (as sorted lists) before it is timed. Each is
timed twice over: the driver's rows as they come (what the database and the driver take),
and the rows as a reader gets them (SQLAlchemy's conversion of each value, the same work
in both forms, included). Medians of the paired runs.

    python benchmarks/current_read.py [--database sqlite|postgres|both] [--prices 200000] [--repeats 7]

The last line printed is one JSON object with every figure (seconds a read).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from sqlalchemy import Connection, Engine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_load import _postgres_database  # noqa: E402

T0 = datetime(2026, 1, 5, 21, 0, tzinfo=UTC)
FIRST_DAY = date(2024, 1, 1)


def _prices(count: int) -> tuple[list[dict], list[dict]]:
    """`count` price rows: first versions, and one correction of every twentieth key."""
    symbols = max(1, count // 400)
    days = count // symbols
    first, corrections = [], []
    for s in range(symbols):
        for d in range(days):
            row = {
                "symbol": f"S{s:04d}",
                "trading_date": FIRST_DAY + timedelta(days=d),
                "close": 10.0 + s + d / 100,
                "volume": 100 + d,
                "halted": False,
                "source": "bench",
                "recorded_at": T0 + timedelta(days=d),
            }
            first.append(row)
            if (s * days + d) % 20 == 0:
                tie = (s + d) % 2 == 0  # half the corrections share their first version's instant
                later = row["recorded_at"] if tie else row["recorded_at"] + timedelta(hours=3)
                corrections.append({**row, "close": row["close"] + 1, "recorded_at": later})
    room = count - len(first)
    return first, corrections[: max(0, room)]


def _instruments(count: int) -> list[dict]:
    rows = []
    for s in range(count):
        row = {"symbol": f"S{s:04d}", "name": f"Company {s}", "board": "MAIN", "currency": "JMD", "source": "bench"}
        rows.append({**row, "recorded_at": T0})
        if s % 10 == 0:
            rows.append({**row, "name": f"Company {s} Ltd", "recorded_at": T0 + timedelta(days=1)})
    return rows


def seed(engine: Engine, prices: int, instruments: int) -> int:
    from store import tables

    first, corrections = _prices(prices)
    with engine.begin() as conn:
        for start in range(0, len(first), 5000):
            conn.execute(tables.eod_prices.insert(), first[start : start + 5000])
        for start in range(0, len(corrections), 5000):
            conn.execute(tables.eod_prices.insert(), corrections[start : start + 5000])
        conn.execute(tables.instruments.insert(), _instruments(instruments))
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE eod_prices")
            conn.exec_driver_sql("VACUUM ANALYZE instruments")
    else:
        with engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    return len(first) + len(corrections)


def reads() -> dict[str, Callable[[], object]]:
    """Each read as the arguments of `current_query`."""
    from store import tables

    p = tables.eod_prices.c
    return {
        "prices_all": lambda: dict(table=tables.eod_prices),
        "prices_as_of": lambda: dict(table=tables.eod_prices, as_of=T0 + timedelta(days=200, hours=1)),
        "prices_one_symbol": lambda: dict(table=tables.eod_prices, where=[p.symbol == "S0007"]),
        "prices_date_range": lambda: dict(
            table=tables.eod_prices,
            where=[p.trading_date >= FIRST_DAY + timedelta(days=100), p.trading_date < FIRST_DAY + timedelta(days=130)],
        ),
        "instruments_all": lambda: dict(table=tables.instruments),
    }


def _run(conn: Connection, form: bool, args: dict, *, raw: bool = False) -> tuple[float, list]:
    """One read in one form (`form`: NOT EXISTS), its time and its rows: with the rows
    turned into Python values (the same work in both forms) as a reader pays it, or with
    `raw`, the driver's rows as they come (the database's part and the driver's)."""
    from store import history

    args = dict(args)
    table = args.pop("table")
    dialect = next(iter(history.UNSUPERSEDED_ON)) if form else None
    started = time.perf_counter()
    result = conn.execute(history.current_query(table, dialect=dialect, **args))
    rows = result.cursor.fetchall() if raw else result.all()
    return time.perf_counter() - started, rows


def _paired(conn: Connection, build: Callable[[], dict], repeats: int, *, raw: bool) -> dict[str, float]:
    """Both forms `repeats` times each, in turn (which goes first alternates): medians and best."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for n in range(repeats):
        for form in (n % 2 == 0, n % 2 == 1):
            times[form].append(_run(conn, form, build(), raw=raw)[0])
    prefix = "driver_" if raw else ""
    ranked, unsuperseded = statistics.median(times[False]), statistics.median(times[True])
    return {
        f"{prefix}row_number_best_s": round(min(times[False]), 4),
        f"{prefix}row_number_median_s": round(ranked, 4),
        f"{prefix}not_exists_best_s": round(min(times[True]), 4),
        f"{prefix}not_exists_median_s": round(unsuperseded, 4),
        f"{prefix}ratio_median": round(unsuperseded / ranked, 3),
    }


def measure(engine: Engine, repeats: int) -> dict[str, dict[str, float]]:
    figures = {}
    with engine.connect() as conn:
        for name, build in reads().items():
            _, ranked = _run(conn, False, build())
            _, unsuperseded = _run(conn, True, build())
            same = sorted(map(tuple, ranked)) == sorted(map(tuple, unsuperseded))
            figures[name] = {"rows": len(ranked), "identical": same}
            figures[name].update(_paired(conn, build, repeats, raw=True))
            figures[name].update(_paired(conn, build, repeats, raw=False))
    return figures


def on_database(url: str, args: argparse.Namespace) -> dict:
    from store import engine as engines
    from store.migrations import upgrade

    engine = engines.build_engine(url)
    try:
        upgrade(engine)
        stored = seed(engine, args.prices, args.instruments)
        return {"price_rows": stored, "reads": measure(engine, args.repeats)}
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--prices", type=int, default=200_000)
    parser.add_argument("--instruments", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    results = {}
    if args.database in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            results["sqlite"] = on_database(f"sqlite:///{folder}/bench.db", args)
    if args.database in ("postgres", "both"):
        url, drop = _postgres_database()
        try:
            results["postgres"] = on_database(url, args)
        finally:
            drop()
    for dialect, result in results.items():
        for name, row in result["reads"].items():
            print(
                f"{dialect:8s} {name:18s} rows {row['rows']:7d} identical {row['identical']!s:5s} "
                f"driver: row_number {row['driver_row_number_median_s']:.4f} s "
                f"not_exists {row['driver_not_exists_median_s']:.4f} s ({row['driver_ratio_median']:.3f}x)  "
                f"read: row_number {row['row_number_median_s']:.4f} s "
                f"not_exists {row['not_exists_median_s']:.4f} s ({row['ratio_median']:.3f}x)"
            )
    print(json.dumps({"benchmark": "current_read", "cpu_count": os.cpu_count(), "results": results}))


if __name__ == "__main__":
    main()
