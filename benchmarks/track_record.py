"""What a client's track record costs against the length of its book (issue 57, item 1).

For each book size N (ledger rows: trades, each with its cash entries) it builds a fresh
SQLite store with a synthetic market (20 symbols over 250 market days, a seeded random
walk) and one client book of N trades over those days after a deposit on the first (each
name bought 20 and sold 10 in turn, so every sale is of shares held and cash never goes
below zero), appended in one batch per table with the store's own writer. Then, through
one long-lived `desk.desk.Desk` (as the API keeps one per process; its clock pinned to
the last market day's session), it times `Desk.track_record(conn, portfolio_id)`:

- cold: the first read of the book;
- after a write: `--repeats` times, one write through the desk (a deposit of 0.01, or a
  manual buy of one share, in turn; both dated the last market day, whose closes are
  stored, so the read revalues that day), then a read. It prints the rows the write added
  since the last read (trades plus cash entries);
- after a write in the next session (the clock a session later, before T0 stores its
  closes): the same, the writes dated after the last close, so the read revalues no day.

The claim to check: the read after a write costs what the write changed, not the book's
history. A write of the next session touches no valued day, so its read stays flat from
1,000 to 100,000 rows (`growth_after_next_session_write_1k_to_100k` near 1); a write dated
the last market day revalues that day, reading its rows again, so its read grows with the
rows a day holds (here N / 250), not with the book (`growth_after_write_1k_to_100k`; a
rebuild of the whole record grows with N).

    python benchmarks/track_record.py [--rows 1000 10000 100000] [--repeats 3] [--days 250]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine, func, select

from desk.desk import Desk, ManualTrade
from market.clock import default_calendar
from market.settings import Settings
from portfolio import ledger
from store import tables
from store.engine import build_engine
from store.history import append_history
from store.migrations import upgrade

LAST_DAY = date(2026, 11, 20)  # a Friday and a trading day
SYMBOLS = 20
CLIENT = "bench-client"


def market_days(count: int) -> list[date]:
    calendar = default_calendar()
    return [calendar.add_trading_days(LAST_DAY, -i) for i in range(count - 1, -1, -1)]


def seed_market(engine: Engine, days: list[date], rng: random.Random) -> dict[str, list[float]]:
    """SYMBOLS instruments priced on every one of `days` (a random walk from a random base,
    1% daily volatility, volumes and a quoted spread); the closes by symbol."""
    symbols = [f"B{i:02d}" for i in range(SYMBOLS)]
    closes: dict[str, list[float]] = {}
    rows = []
    for symbol in symbols:
        close, series = rng.uniform(5, 100), []
        for day in days:
            close = round(close * math.exp(rng.gauss(0, 0.01)), 2)
            series.append(close)
            rows.append(
                {
                    "symbol": symbol,
                    "trading_date": day,
                    "open": close,
                    "high": round(close * 1.01, 2),
                    "low": round(close * 0.99, 2),
                    "close": close,
                    "volume": rng.randint(5_000, 50_000),
                    "bid": round(close * 0.995, 2),
                    "ask": round(close * 1.005, 2),
                    "source": "benchmark",
                }
            )
        closes[symbol] = series
    with engine.begin() as conn:
        listed = [{"symbol": s, "name": f"{s} Ltd", "board": "MAIN", "source": "benchmark"} for s in symbols]
        append_history(conn, tables.instruments, listed)
        append_history(conn, tables.eod_prices, rows)
    return closes


def seed_book(engine: Engine, portfolio_id: str, trades: int, days: list[date], closes: dict[str, list[float]]) -> None:
    """The book (module docstring): a deposit, then `trades` trades at the day's close with
    a fee of 1 each, stored as the ledger stores them (ledger.append_book)."""
    symbols = sorted(closes)
    deposit = Decimal(trades * 2_000 + 1_000_000)
    opening = datetime.combine(days[0], clock_time(13, 0), UTC)
    requests, cash = [], deposit
    for j in range(trades):
        i = j * len(days) // trades
        symbol = symbols[j % len(symbols)]
        side = "SELL" if (j // len(symbols)) % 2 else "BUY"
        quantity, price = (10 if side == "SELL" else 20), Decimal(str(closes[symbol][i]))
        executed = datetime.combine(days[i], clock_time(15, 0), UTC) + timedelta(milliseconds=j)
        cash += (price * quantity if side == "SELL" else -price * quantity) - 1
        assert cash >= 0, "the synthetic book would overdraw its cash"
        requests.append(
            ledger.TradeRequest(
                portfolio_id, days[i], executed, symbol, side, quantity, price, Decimal(1), trade_id=f"BENCH-{j:06d}"
            )
        )
    with engine.begin() as conn:
        ledger.append_book(
            conn,
            portfolio_id,
            requests,
            [ledger.cash_entry(portfolio_id, "BENCH-deposit", deposit, "DEPOSIT", opening, None, Decimal(0))],
        )


def book_rows(engine: Engine, portfolio_id: str) -> int:
    """The book's stored rows: its trades and its cash entries."""
    with engine.connect() as conn:
        return sum(
            conn.execute(select(func.count()).where(table.c.portfolio_id == portfolio_id)).scalar_one()
            for table in (tables.trades, tables.cash_entries)
        )


def timed_read(desk: Desk, portfolio_id: str) -> tuple[float, int]:
    """One read of the track record on a connection of its own (as a request has): seconds, days."""
    with desk.engine.connect() as conn:
        started = time.perf_counter()
        record = desk.track_record(conn, portfolio_id).value()
        return time.perf_counter() - started, record.days


def measure(trades: int, days: list[date], repeats: int, seed: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench-track-record-"))
    url = f"sqlite:///{work / 'bench.db'}"
    engine = build_engine(url)
    upgrade(engine)
    settings = Settings(_env_file=None, database_url=url, data_dir=work / "data", models_dir=work / "models")
    session = datetime.combine(days[-1], clock_time(15, 0), UTC)  # 10:00 on the exchange, the last market day
    desk = Desk(engine, settings, default_calendar(), lambda: session)
    started = time.perf_counter()
    closes = seed_market(engine, days, random.Random(seed))
    portfolio_id = desk.open_portfolio(CLIENT)
    seed_book(engine, portfolio_id, trades, days, closes)
    setup_s = time.perf_counter() - started
    cold_s, record_days = timed_read(desk, portfolio_id)
    print(f"{trades:>7,} trades: set-up {setup_s:.1f} s, cold read {cold_s:.3f} s ({record_days} days)")
    symbol = sorted(closes)[0]
    after, added = writes_and_reads(desk, portfolio_id, symbol, closes[symbol][-1], repeats)
    tomorrow = datetime.combine(default_calendar().add_trading_days(days[-1], 1), clock_time(15, 0), UTC)
    print("  in the next session, before its closes are stored:")
    later, _ = writes_and_reads(replace(desk, now=lambda: tomorrow), portfolio_id, symbol, closes[symbol][-1], repeats)
    engine.dispose()
    return {
        "rows": trades,
        "setup_s": round(setup_s, 2),
        "cold_s": round(cold_s, 4),
        "after_write_s": round(statistics.median(after), 4),
        "after_write_each_s": [round(s, 4) for s in after],
        "after_next_session_write_s": round(statistics.median(later), 4),
        "rows_added_since_last_read": added,
        "days": record_days,
    }


def writes_and_reads(desk: Desk, portfolio_id: str, symbol: str, price: float, repeats: int) -> tuple[list, list]:
    """`repeats` times a write through the desk (a deposit of 0.01, or a buy of one share of
    `symbol`, in turn), then a read: each read's seconds and the rows each write added."""
    after, added = [], []
    for r in range(repeats):
        before = book_rows(desk.engine, portfolio_id)
        if r % 2 == 0:
            what = "deposit 0.01"
            desk.move_cash(portfolio_id, "0.01")
        else:
            what = f"buy 1 {symbol}"
            desk.place_trade(portfolio_id, ManualTrade("BUY", symbol, 1, Decimal(str(price))))
        added.append(book_rows(desk.engine, portfolio_id) - before)
        seconds, _ = timed_read(desk, portfolio_id)
        after.append(seconds)
        print(f"  {what}: {added[-1]} row(s) added since the last read, read {seconds:.3f} s")
    return after, added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000, 10_000, 100_000], help="trades in the book")
    parser.add_argument("--repeats", type=int, default=3, help="writes, each followed by a read, per book")
    parser.add_argument("--days", type=int, default=250, help="market days of prices (and of the book)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    days = market_days(args.days)
    results = [measure(n, days, args.repeats, args.seed) for n in args.rows]
    figures = {
        "benchmark": "track_record",
        "database": "sqlite",
        "symbols": SYMBOLS,
        "market_days": args.days,
        "rows": [r["rows"] for r in results],
        "setup_s": [r["setup_s"] for r in results],
        "cold_s": [r["cold_s"] for r in results],
        "after_write_s": [r["after_write_s"] for r in results],
        "after_write_each_s": [r["after_write_each_s"] for r in results],
        "after_next_session_write_s": [r["after_next_session_write_s"] for r in results],
        "rows_added_since_last_read": [r["rows_added_since_last_read"] for r in results],
        "days": [r["days"] for r in results],
    }
    smallest, largest = min(results, key=lambda r: r["rows"]), max(results, key=lambda r: r["rows"])
    if largest["rows"] > smallest["rows"]:
        name = f"growth_after_write_{_short(smallest['rows'])}_to_{_short(largest['rows'])}"
        figures[name] = round(largest["after_write_s"] / smallest["after_write_s"], 2)
        figures[name.replace("after_write", "after_next_session_write")] = round(
            largest["after_next_session_write_s"] / smallest["after_next_session_write_s"], 2
        )
        figures[f"growth_rows_{_short(smallest['rows'])}_to_{_short(largest['rows'])}"] = round(
            largest["rows"] / smallest["rows"], 2
        )
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(figures))


def _short(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


if __name__ == "__main__":
    main()
