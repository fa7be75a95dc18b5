"""T0 speed: seconds to scrape and deliver one day over real HTTP (60 and 2,000 simulated
instruments), and seconds and peak memory to import the NSE daily set.

Each measurement runs in its own process so peak RSS belongs to it alone. For the scrape,
the previous day is delivered first (in-process) so the timed day is a typical one: known
instruments, previous closes in the store. Targets: 2,000 instruments in under 30 s; the
NSE import in under 60 s.

    python benchmarks/t0_scrape.py [--nse ../shared/data/nse-kenya/daily]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

DAY = date(2026, 11, 20)
SHARED_DATA = Path(
    os.environ.get("MARKETINTEL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)
DEFAULT_NSE = SHARED_DATA / "nse-kenya" / "daily"


def _settings(workdir: Path, instruments: int):
    from market.settings import Settings

    return Settings(
        _env_file=None,
        database_url=f"sqlite:///{workdir / 'bench.db'}",
        data_dir=workdir / "data",
        simulator_instruments=instruments,
    )


def scrape(instruments: int) -> dict:
    from ingest.exchange.delivery import client_for, deliver_day
    from ingest.markets import simulator_for
    from ingest.simulator.site import SimulatorSite
    from pipeline.backfill import backfill
    from pipeline.serving import serve_in_thread
    from store.engine import build_engine
    from store.migrations import upgrade

    settings = _settings(Path(tempfile.mkdtemp(prefix="bench-t0-")), instruments)
    engine = build_engine(settings.database_url)
    upgrade(engine)
    market = simulator_for(settings)
    started = time.perf_counter()
    backfill(engine, settings, 1, market.calendar.previous_trading_day(DAY), market)
    warmup = time.perf_counter() - started
    site = SimulatorSite(market, published_through=DAY)
    with serve_in_thread(site.asgi_app()) as url:
        started = time.perf_counter()
        with client_for(settings.model_copy(update={"exchange_base_url": url})) as client:
            report = deliver_day(engine, settings, DAY, client)
        seconds = time.perf_counter() - started
    return {
        "instruments": report.row_counts["MAIN"] + report.row_counts["JUNIOR"],
        "seconds": round(seconds, 2),
        "previous_day_in_process_s": round(warmup, 2),
        "peak_rss_mb": _peak_mb(),
    }


def nse_import(path: str) -> dict:
    from ingest.importers import import_path
    from store.engine import build_engine
    from store.migrations import upgrade

    settings = _settings(Path(tempfile.mkdtemp(prefix="bench-nse-")), 60)
    engine = build_engine(settings.database_url)
    upgrade(engine)
    started = time.perf_counter()
    report = import_path(engine, Path(path), currency="KES")
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    again = import_path(engine, Path(path), currency="KES")
    return {
        "rows": report.rows_inserted,
        "instruments": report.instruments,
        "seconds": round(seconds, 2),
        "reimport_seconds": round(time.perf_counter() - started, 2),
        "reimport_inserted": again.rows_inserted,
        "peak_rss_mb": _peak_mb(),
    }


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _isolated(kind: str, argument: str) -> dict:
    """Run one measurement in a fresh interpreter; its last stdout line is its JSON."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, argument], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nse", default=str(DEFAULT_NSE), help="folder of NSE daily files")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, argument = args.child
        print(json.dumps(scrape(int(argument)) if kind == "scrape" else nse_import(argument)))
        return
    figures: dict = {"benchmark": "t0_scrape"}
    for size in (60, 2000):
        result = _isolated("scrape", str(size))
        print(
            f"scrape + deliver one day, {result['instruments']} instruments: {result['seconds']} s "
            f"(peak {result['peak_rss_mb']} MB)"
        )
        figures[f"scrape_{size}"] = result
    if Path(args.nse).is_dir():
        result = _isolated("nse", args.nse)
        print(
            f"NSE import: {result['rows']} rows, {result['instruments']} instruments in {result['seconds']} s; "
            f"re-import {result['reimport_seconds']} s, {result['reimport_inserted']} inserted (peak "
            f"{result['peak_rss_mb']} MB)"
        )
        figures["nse_import"] = result
    else:
        print(f"NSE import skipped: {args.nse} not found")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
