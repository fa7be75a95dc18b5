"""Wall time and peak memory of T0+T1 for one trading day, end to end as production runs
it: `marketintel run-day` (T0 over real HTTP from the simulator, then T1's stage
notebooks, all in one kernel: pipeline/notebooks.py `one_kernel`) on the embedded SQLite
store. Targets (issue 65): 2,000 instruments in under 60 s on an idle 2-core machine, a
day with a retrain in under 90 s, peak memory under 1 GB; 60 instruments in under 10 s.

For each size the store is backfilled first (not timed; its last days with their news
and disclosures, the news feed's window, so each measured day reads only its own new
texts as a live day does), then the day before the measured day is run: its
t1_predict trains the first model, which is the retrain reported separately. The
measured day follows with no retrain due (fewer than 5 trading days since), so its time
is an ordinary day's. Peak memory is the largest resident set of any process of the run
(the CLI or a notebook kernel). Each stage's time is split into its stage function's
cell and the cells that show its result (`day_cell_s`), and the 1-minute load average
is printed before, between and after the two days.

    python benchmarks/run_day.py [--sizes 60 2000] [--history 250 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from ingest.simulator.market import SimulatedMarket
    from market.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DAY = date(2026, 11, 20)
MARKETINTEL = str(Path(sys.executable).parent / "marketintel")
MEASURE = (
    "import resource, subprocess, sys, json, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:]); w = time.perf_counter() - t; "
    "print('MEASURED ' + json.dumps({'rc': r.returncode, 'wall_s': w, "
    "'peak_rss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
)


def run_day(day: date, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, MARKETINTEL, "run-day", "--date", day.isoformat()],
        env=env,
        capture_output=True,
        text=True,
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("MEASURED ")]
    measured = json.loads(line[-1][9:]) if line else {"rc": -1}
    if measured["rc"] != 0:
        raise SystemExit(f"run-day {day} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return measured


def stage_seconds(runs: Path, day: date) -> dict[str, float]:
    result = {}
    for notebook in sorted((runs / day.isoformat()).glob("*.ipynb")):
        meta = json.loads(notebook.read_text())["metadata"].get("papermill", {})
        result[notebook.stem] = round(meta.get("duration") or 0.0, 2)
    return result


def cell_seconds(runs: Path, day: date) -> dict[str, dict[str, float]]:
    """Per stage notebook: `stage`, the seconds of the cell that runs the stage function
    (`run_stage(...)`), and `shown`, the seconds of the cells after it that show its tables
    and figures (papermill keeps each cell's duration)."""
    result = {}
    for notebook in sorted((runs / day.isoformat()).glob("*.ipynb")):
        cells = [c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code"]
        seconds = [(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0) for c in cells]
        at = next((i for i, c in enumerate(cells) if "run_stage(" in "".join(c["source"])), None)
        if at is not None:
            result[notebook.stem] = {"stage": round(seconds[at], 2), "shown": round(sum(seconds[at + 1 :]), 2)}
    return result


def retrained(env: dict[str, str], day: date) -> bool:
    from sqlalchemy import create_engine, select

    from store import tables

    engine = create_engine(env["MARKETINTEL_DATABASE_URL"])
    with engine.connect() as conn:
        rows = conn.execute(
            select(tables.stage_runs.c.detail).where(
                tables.stage_runs.c.stage == "t1_predict",
                tables.stage_runs.c.trading_date == day,
                tables.stage_runs.c.event == "SUCCEEDED",
            )
        ).all()
    engine.dispose()
    detail = rows[-1][0]
    detail = json.loads(detail) if isinstance(detail, str) else detail
    return bool(detail["summary"]["retrained"])


def history_of(engine: Engine, settings: Settings, market: SimulatedMarket, days: int, last: date, base: str) -> None:
    """Backfill the `days` trading days to `last`: the news feed's window (the last
    NEWS_WINDOW_DAYS) with its texts, their links naming the served simulator `base`, so
    each measured day reads only its own new texts, as a live day does."""
    from ingest.simulator.site import NEWS_WINDOW_DAYS
    from pipeline.backfill import backfill

    text_days = min(NEWS_WINDOW_DAYS, days)
    if days > text_days:
        first_part = market.calendar.add_trading_days(last, -text_days)
        backfill(engine, settings, days - text_days, first_part, market, with_text=False, base_url=base)
    backfill(engine, settings, text_days, last, market, base_url=base)


def measure(size: int, history: int, work: Path) -> dict:
    from ingest.markets import simulator_for
    from ingest.simulator.site import SimulatorSite
    from market.settings import Settings, work_environment
    from pipeline.serving import serve_in_thread
    from store.engine import build_engine
    from store.migrations import upgrade

    env = {
        **os.environ,
        "MARKETINTEL_NO_DOTENV": "1",
        "MARKETINTEL_LOG_LEVEL": "WARNING",
        **work_environment(work, "bench.db"),
        "MARKETINTEL_SIMULATOR_INSTRUMENTS": str(size),
    }
    settings = Settings(
        _env_file=None, database_url=env["MARKETINTEL_DATABASE_URL"], data_dir=work / "data", simulator_instruments=size
    )
    engine = build_engine(settings.database_url)
    upgrade(engine)
    market = simulator_for(settings)
    before = market.calendar.previous_trading_day(DAY)
    with serve_in_thread(SimulatorSite(market, published_through=DAY).asgi_app()) as base:
        started = time.perf_counter()
        history_of(engine, settings, market, history, market.calendar.previous_trading_day(before), base)
        engine.dispose()
        backfill_s = time.perf_counter() - started
        env["MARKETINTEL_EXCHANGE_BASE_URL"] = base
        load = [round(os.getloadavg()[0], 2)]
        first = run_day(before, env)
        first_stages = stage_seconds(work / "runs", before)
        load.append(round(os.getloadavg()[0], 2))
        day = run_day(DAY, env)
        load.append(round(os.getloadavg()[0], 2))
    stages = stage_seconds(work / "runs", DAY)
    cells = cell_seconds(work / "runs", DAY)
    figures = {
        "instruments": size,
        "history_days": history,
        "backfill_s": round(backfill_s, 1),
        "day_wall_s": round(day["wall_s"], 1),
        "day_peak_rss_mb": round(day["peak_rss_kb"] / 1024),
        "day_retrained": retrained(env, DAY),
        "day_stage_s": stages,
        "day_cell_s": cells,
        "retrain_day_wall_s": round(first["wall_s"], 1),
        "retrain_t1_predict_s": first_stages.get("t1_predict"),
        "retrain_day_stage_s": first_stages,
        "retrain_day_retrained": retrained(env, before),
        "retrain_day_peak_rss_mb": round(first["peak_rss_kb"] / 1024),
        "load_average_1min": load,  # before the retrain day, between the two days, after the measured day
    }
    print(
        f"{size:>5} instruments: T0+T1 {figures['day_wall_s']} s, peak RSS {figures['day_peak_rss_mb']} MB "
        f"(no retrain: {not figures['day_retrained']}); a day with the first training: "
        f"{figures['retrain_day_wall_s']} s, t1_predict {figures['retrain_t1_predict_s']} s; per stage: {stages}; "
        f"load average {load}"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 2000])
    parser.add_argument(
        "--history",
        type=int,
        nargs="+",
        default=[250, 60],
        help="Backfilled trading days per size (2,000 instruments x 250 days takes about 11 minutes).",
    )
    args = parser.parse_args()
    results = []
    for size, history in zip(args.sizes, args.history):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(measure(size, history, Path(tmp)))
    print(json.dumps({"targets_s": {"60": 10, "2000": 60, "2000_retrain": 90}, "runs": results}))


if __name__ == "__main__":
    main()
