"""The end-of-day import's speed and memory: seconds and peak RSS to import synthetic
history files into a fresh store (`ingest.importers.import_path`, what `marketintel import`
runs before it refreshes the bars), then to import the same files again (which inserts
nothing), for the generic OHLCV format (one file) and the NSE daily format (a file a day).

The files are built in a temp folder: `--instruments` names over as many weekdays as make
`--rows` rows, random-walk closes, every column of the format. Each format is measured in
its own process, so its peak RSS is its own. The last line is one JSON object.

`--stored-rows N` imports into a store that already holds N rows of the same names over
the weekdays before the files' first (FIRST_DAY; years of history: what a running store holds), built
once by the same import (not timed) and copied for each format: an import's cost beside
the store's size rather than the file's.

    python benchmarks/import_files.py [--rows 50000] [--instruments 100] [--formats ohlcv nse-daily]
        [--stored-rows 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

FIRST_DAY = date(2015, 1, 5)
OHLCV_HEADER = "symbol,date,open,high,low,close,prev_close,volume,bid,ask,trades,value_traded,name\n"
NSE_HEADER = (
    "Code;Name;Lowest Price of the Day;Highest Price of the Day;Closing Price;Previous Day Closing Price;"
    "Volume Traded\n"
)


def _days(rows: int, instruments: int, step: int = 1) -> list[date]:
    """As many weekdays as make `rows` rows of `instruments` names, in order: from
    FIRST_DAY on, or (`step` -1) those before it."""
    days, day = [], FIRST_DAY if step > 0 else FIRST_DAY - timedelta(days=1)
    while len(days) * instruments < rows:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=step)
    return sorted(days)


def _bars(instruments: int, days: list[date], seed: int = 7):
    """(day, symbol, name, prev, low, high, close, volume) in day order, a random walk each."""
    rng = random.Random(seed)
    closes = [10 + rng.random() * 90 for _ in range(instruments)]
    for day in days:
        for i in range(instruments):
            prev = closes[i]
            close = closes[i] = round(max(0.5, prev * (1 + rng.gauss(0, 0.01))), 2)
            low, high = round(min(prev, close) * 0.995, 2), round(max(prev, close) * 1.005, 2)
            yield day, f"S{i:03d}", f"Company {i} Ltd", prev, low, high, close, rng.randrange(1, 50_000)


def build_files(folder: Path, fmt: str, rows: int, instruments: int, step: int = 1) -> Path:
    """The synthetic files of `fmt` under `folder` (`_days`: from FIRST_DAY on, or with
    `step` -1 the weekdays before it): one OHLCV file, or an NSE daily file a day."""
    days = _days(rows, instruments, step)
    if fmt == "ohlcv":
        path = folder / "prices.csv"
        with path.open("w") as out:
            out.write(OHLCV_HEADER)
            for day, symbol, name, prev, low, high, close, volume in _bars(instruments, days):
                out.write(
                    f"{symbol},{day.isoformat()},{prev:.2f},{high:.2f},{low:.2f},{close:.2f},{prev:.2f},{volume},"
                    f"{close - 0.01:.2f},{close + 0.01:.2f},{volume // 100},{volume * close:.2f},{name}\n"
                )
        return path
    daily = folder / "daily"
    daily.mkdir()
    files: dict[date, list[str]] = {}
    for day, symbol, name, prev, low, high, close, volume in _bars(instruments, days):
        files.setdefault(day, []).append(f"{symbol};{name};{low:.2f};{high:.2f};{close:.2f};{prev:.2f};{volume:,}\n")
    for day, lines in files.items():
        (daily / f"{day:%Y%m%d}.csv").write_text(NSE_HEADER + "".join(lines))
    return daily


def _store(stored: str | None) -> Engine:
    """A fresh SQLite store, or a copy of the store file `stored` (its history)."""
    from store.engine import build_engine
    from store.migrations import upgrade

    database = Path(tempfile.mkdtemp(prefix="bench-import-")) / "bench.db"
    if stored:
        shutil.copyfile(stored, database)
    engine = build_engine(f"sqlite:///{database}")
    upgrade(engine)
    return engine


def measure(fmt: str, path: str, stored: str | None = None) -> dict:
    """Import `path` into a fresh SQLite store (a copy of `stored`, where given), then again;
    seconds, rows and this process's peak RSS."""
    from ingest.importers import import_path

    engine = _store(stored)
    started = time.perf_counter()
    report = import_path(engine, Path(path), fmt)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    again = import_path(engine, Path(path), fmt)
    return {
        "rows_read": report.rows_read,
        "rows_inserted": report.rows_inserted,
        "instruments": report.instruments,
        "seconds": round(seconds, 2),
        "reimport_seconds": round(time.perf_counter() - started, 2),
        "reimport_inserted": again.rows_inserted,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _isolated(fmt: str, path: Path, stored: Path | None) -> dict:
    """`measure` in a fresh interpreter, so the peak RSS is the import's alone."""
    extra = ["--stored", str(stored)] if stored else []
    done = subprocess.run(
        [sys.executable, __file__, "--child", fmt, str(path), *extra], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _history(folder: Path, rows: int, instruments: int) -> Path | None:
    """A store file holding `rows` rows of the names on the weekdays before FIRST_DAY, where
    the measured files start (one OHLCV import, not timed, in a process of its own: a
    child's peak RSS counts its parent's at the fork); None for no rows."""
    if not rows:
        return None
    (folder / "history").mkdir()
    path = build_files(folder / "history", "ohlcv", rows, instruments, step=-1)
    database = folder / "history" / "stored.db"
    subprocess.run([sys.executable, __file__, "--seed", str(path), str(database)], check=True)
    return database


def seed(path: str, database: str) -> None:
    """Import the OHLCV file `path` into a new SQLite store at `database`."""
    from ingest.importers import import_path
    from store.engine import build_engine
    from store.migrations import upgrade

    engine = build_engine(f"sqlite:///{database}")
    upgrade(engine)
    report = import_path(engine, Path(path), "ohlcv")
    print(f"stored: {report.rows_inserted:,} rows of {report.instruments} instruments", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--instruments", type=int, default=100)
    parser.add_argument("--formats", nargs="+", default=["ohlcv", "nse-daily"], choices=["ohlcv", "nse-daily"])
    parser.add_argument("--stored-rows", type=int, default=0, help="rows the store holds before the import")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--stored", help=argparse.SUPPRESS)
    parser.add_argument("--seed", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed:
        seed(*args.seed)
        return
    if args.child:
        print(json.dumps(measure(*args.child, args.stored)))
        return
    figures: dict = {
        "benchmark": "import_files",
        "rows": args.rows,
        "instruments": args.instruments,
        "stored_rows": args.stored_rows,
    }
    folder = Path(tempfile.mkdtemp(prefix="bench-import-files-"))
    stored = _history(folder, args.stored_rows, args.instruments)
    for fmt in args.formats:
        (folder / fmt).mkdir()
        path = build_files(folder / fmt, fmt, args.rows, args.instruments)
        load = os.getloadavg()[0]
        result = _isolated(fmt, path, stored) | {"load_average_before": round(load, 2)}
        print(
            f"{fmt}: {result['rows_inserted']:,} rows of {result['instruments']} instruments in {result['seconds']} s; "
            f"re-import {result['reimport_seconds']} s, {result['reimport_inserted']} inserted; peak RSS "
            f"{result['peak_rss_mb']} MB (load average {load:.2f})"
        )
        figures[fmt.replace("-", "_")] = result
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
