"""What a read costs the first time its data version is asked, on the settings' store (run
`marketintel demo --no-serve` first, as benchmarks/book_activity.py does):

- the AI track record with its null books (`views.track_record.ai_track_record` on a fresh
  `NullRecords` and fresh benchmarks each time: what the API's first read of a new day,
  or a report's worker process, computes);
- the inputs of each PDF report (`reports.inputs.briefing_inputs`, `compliance_inputs`)
  once the process has read them before (a report worker's second report of a day: its
  null books kept), which is the work a report's worker does before it typesets;
- a client's CLI command from its start to its exit (`marketintel portfolio show AI`), in
  a process of its own.

Each is timed `--repeats` times; it prints the best and the median. The last line is one
JSON object.

    python benchmarks/cold_reads.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from market.clock import default_calendar, utc_now
from market.fees import fee_schedule
from market.settings import get_settings
from store.engine import service_engine


def timed(work: Callable[[], object], repeats: int) -> dict[str, float]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    return {"best_s": round(min(seconds), 3), "median_s": round(statistics.median(seconds), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from reports.inputs import briefing_inputs, compliance_inputs
    from views.null_record import NullRecords
    from views.track_record import ai_track_record

    settings = get_settings()
    engine, calendar, now = service_engine(settings), default_calendar(), utc_now()
    fees = fee_schedule(settings)

    def track_record() -> None:
        with engine.connect() as conn:
            ai_track_record(conn, settings.ai_starting_cash, nulls=NullRecords(), fees=fees)

    def inputs(gather: Callable) -> Callable[[], None]:
        def read() -> None:
            with engine.connect() as conn, conn.begin():
                gather(conn, calendar, now, settings)

        return read

    inputs(briefing_inputs)()  # the process's first read: imports, and the null books kept
    figures = {
        "ai_track_record_with_null_books": timed(track_record, args.repeats),
        "briefing_inputs": timed(inputs(briefing_inputs), args.repeats),
        "compliance_inputs": timed(inputs(compliance_inputs), args.repeats),
        "cli_portfolio_show": timed(
            lambda: subprocess.run(
                [str(Path(sys.executable).with_name("marketintel")), "portfolio", "show", "AI"],
                capture_output=True,
                check=True,
                env=os.environ,
            ),
            args.repeats,
        ),
    }
    for name, figure in figures.items():
        print(f"{name:<34} best {figure['best_s']:.3f} s  median {figure['median_s']:.3f} s")
    print(json.dumps({"benchmark": "cold_reads", "repeats": args.repeats, "store": settings.database_url, **figures}))


if __name__ == "__main__":
    main()
