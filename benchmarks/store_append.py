"""How fast the append-only store takes a day of prices, re-runs it, and reads it back.

For each simulated trading day it appends one end-of-day row per instrument (the T0
write), then appends the same day again (a re-run, which must insert nothing), then reads
the current rows and the rows "as known at" the previous day. Prints one JSON object last.

    python benchmarks/store_append.py [--instruments 2000] [--days 5] [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from market.clock import default_calendar
from store import tables
from store.engine import build_engine
from store.history import append_history, current_rows
from store.migrations import upgrade


def _day_rows(symbols: list[str], day: date, rng: random.Random) -> list[dict]:
    rows = []
    for symbol in symbols:
        close = round(rng.uniform(1, 500), 2)
        spread = close * rng.uniform(0.002, 0.12)
        rows.append(
            {
                "symbol": symbol,
                "trading_date": day,
                "close": close,
                "open": close,
                "high": close,
                "low": close,
                "volume": rng.choice([0, 0, rng.randint(1, 200_000)]),
                "bid": round(close - spread / 2, 2),
                "ask": round(close + spread / 2, 2),
                "source": "benchmark",
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instruments", type=int, default=2000)
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite file in a temp folder")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-store-"))
    url = args.database_url or f"sqlite:///{workdir / 'bench.db'}"
    engine = build_engine(url)
    upgrade(engine)
    rng = random.Random(7)
    symbols = [f"S{i:05d}" for i in range(args.instruments)]
    calendar = default_calendar()
    day = calendar.previous_trading_day(date(2026, 11, 20))
    first, rerun, reads = [], [], []
    for n in range(args.days):
        day = calendar.next_trading_day(day)
        rows = _day_rows(symbols, day, rng)
        stamp = datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=21)
        started = time.perf_counter()
        with engine.begin() as conn:
            inserted = append_history(conn, tables.eod_prices, rows, recorded_at=stamp).inserted
        first.append(time.perf_counter() - started)
        started = time.perf_counter()
        with engine.begin() as conn:
            again = append_history(conn, tables.eod_prices, rows, recorded_at=stamp + timedelta(minutes=5)).inserted
        rerun.append(time.perf_counter() - started)
        assert inserted == len(rows) and again == 0, "re-run must insert nothing"
        started = time.perf_counter()
        with engine.connect() as conn:
            today = current_rows(conn, tables.eod_prices, where=[tables.eod_prices.c.trading_date == day])
            known_before = current_rows(conn, tables.eod_prices, as_of=stamp - timedelta(seconds=1))
        reads.append(time.perf_counter() - started)
        assert len(today) == len(rows) and len(known_before) == n * len(rows)
        print(f"day {day}: append {first[-1]:.2f}s, re-run {rerun[-1]:.2f}s, reads {reads[-1]:.2f}s")
    engine.dispose()
    figures = {
        "benchmark": "store_append",
        "database": engine.dialect.name,
        "instruments": args.instruments,
        "days": args.days,
        "append_day_s_mean": round(sum(first) / len(first), 3),
        "rerun_day_s_mean": round(sum(rerun) / len(rerun), 3),
        "read_day_and_as_of_s_mean": round(sum(reads) / len(reads), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
