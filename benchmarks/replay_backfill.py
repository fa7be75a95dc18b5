"""Replay speed: seconds per day to deliver the last N days of a replay (default: the NSE
daily set) through `backfill()` (the exchange pages in-process, T0's parsers, validation
and delivery into a fresh SQLite store), without and with T1's text steps (the simulated
feed, which a replay serves empty, and the day's sentiment composite). Wall and CPU time
per day: on a shared machine wall time also counts waiting for the other processes and
for the disk (each day commits its own transaction). Last line: one JSON object.

    python benchmarks/replay_backfill.py [--path ../shared/data/nse-kenya/daily] [--days 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("MARKETINTEL_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def measure(market, days: int, with_text: bool) -> dict:
    from market.settings import Settings
    from pipeline.backfill import backfill
    from store.engine import build_engine
    from store.migrations import upgrade

    workdir = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    settings = Settings(_env_file=None, database_url=f"sqlite:///{workdir / 'bench.db'}", data_dir=workdir / "data")
    engine = build_engine(settings.database_url)
    upgrade(engine)
    wall, cpu = time.perf_counter(), time.process_time()
    reports = backfill(engine, settings, days, market.days[-1], market, with_text=with_text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "days": len(reports),
        "complete": sum(r.status == "COMPLETE" for r in reports),
        "s_per_day_wall": round(wall / len(reports), 4),
        "s_per_day_cpu": round(cpu / len(reports), 4),
        "total_s": round(wall, 1),
    }


def main() -> None:
    from ingest.replay import ReplayMarket

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=str(SHARED_DATA / "nse-kenya" / "daily"))
    parser.add_argument("--days", type=int, default=1000)
    args = parser.parse_args()
    if not Path(args.path).exists():
        raise SystemExit(f"error: no replay files at {args.path}")
    os.environ.setdefault("TQDM_DISABLE", "1")
    started = time.perf_counter()
    market = ReplayMarket(args.path)
    figures = {"benchmark": "replay_backfill", "path": args.path, "build_s": round(time.perf_counter() - started, 2)}
    for with_text in (False, True):
        name = "with_text" if with_text else "without_text"
        figures[name] = measure(market, args.days, with_text)
        result = figures[name]
        print(
            f"{result['days']} replayed days {name.replace('_', ' ')}: {result['s_per_day_wall']} s/day wall, "
            f"{result['s_per_day_cpu']} s/day CPU ({result['complete']} COMPLETE, {result['total_s']} s)"
        )
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
