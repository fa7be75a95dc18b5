"""Generation time of the two PDF reports for 60 instruments. Target: under 2 s each.

The store is the embedded SQLite default with 260 simulated days of 60 instruments,
predictions for the last 20 days, the AI portfolio executed on each of them (equity curve
and audit trail filled) and a trained model with a live record. Each report is generated
once cold (first use in the process: matplotlib and fonts load) and then `--repeat` times
warm; the figures are the cold time and the median of the warm ones, in seconds.

    python benchmarks/report_generation.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DAY = date(2026, 11, 20)
NOW = datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
SCORED_DAYS = 20


def prepare(work: Path):
    from market.clock import default_calendar
    from market.settings import Settings
    from pipeline.backfill import backfill
    from portfolio import ai
    from store import tables
    from store.engine import build_engine
    from store.history import append_history
    from store.migrations import upgrade

    settings = Settings(
        _env_file=None,
        database_url=f"sqlite:///{work / 'bench.db'}",
        data_dir=work / "data",
        secrets_dir=work / "secrets",
    )
    engine = build_engine(settings.database_url)
    upgrade(engine)
    backfill(engine, settings, 260, DAY, with_text=False)
    calendar = default_calendar()
    days = [DAY]
    while len(days) < SCORED_DAYS:
        days.insert(0, calendar.previous_trading_day(days[0]))
    rng = random.Random(3)
    with engine.begin() as conn:
        symbols = sorted({r.symbol for r in conn.execute(tables.instruments.select())})
        rows = []
        for day in days:
            for symbol in symbols:
                score = round(rng.uniform(30, 75), 1)
                action = "LONG" if score >= 55 else "AVOID" if score <= 45 else "HOLD"
                rows.append(
                    {
                        "symbol": symbol,
                        "trading_date": day,
                        "model_id": "bench",
                        "horizon_days": 1,
                        "predicted_return": rng.gauss(0, 0.01) + (score - 50) / 2000,
                        "p_up": score / 100,
                        "score": score,
                        "action": action,
                        "weight": 0.05 if action == "LONG" else 0.0,
                        "tercile": rng.choice(["TOP", "MIDDLE", "BOTTOM"]),
                        "layer1_p_up": 0.5,
                        "layer1_backend": "fallback-empirical-v1",
                    }
                )
        append_history(conn, tables.predictions, rows)
        append_history(
            conn,
            tables.model_runs,
            [
                {
                    "model_id": "bench",
                    "kind": "risk",
                    "train_end": DAY,
                    "horizon_days": 1,
                    "layer1_backend": "fallback-empirical-v1",
                    "training_rows": 14_000,
                }
            ],
        )
        append_history(
            conn,
            tables.model_metrics,
            [
                {
                    "model_id": "live",
                    "scope": f"live:{DAY.isoformat()}",
                    "metric": m,
                    "value": v,
                    "base_rate": 0.51,
                    "sample_size": 1000,
                }
                for m, v in [
                    ("binary_accuracy", 0.55),
                    ("movers_accuracy", 0.58),
                    ("hit_rate_top", 0.56),
                    ("hit_rate_bottom", 0.48),
                ]
            ],
        )
    for day in days:
        ai.execute_day(engine, settings, day)
    return settings, engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from market.clock import default_calendar
    from reports import KINDS, generate

    with tempfile.TemporaryDirectory() as tmp:
        settings, engine = prepare(Path(tmp))
        figures: dict[str, object] = {"instruments": 60, "executed_days": SCORED_DAYS}
        for kind in KINDS:
            times, pages = [], 0
            for _ in range(args.repeat + 1):
                started = time.perf_counter()
                report = generate(kind, engine, settings, default_calendar(), NOW)
                times.append(time.perf_counter() - started)
                pages = report.pages
            key = kind.replace("-", "_")
            figures[f"{key}_cold_s"] = round(times[0], 3)
            figures[f"{key}_warm_median_s"] = round(statistics.median(times[1:]), 3)
            figures[f"{key}_pages"] = pages
            print(
                f"{kind:<15} cold {times[0]:.2f} s, warm median {statistics.median(times[1:]):.2f} s, {pages} pages "
                f"(target < 2 s)"
            )
        engine.dispose()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
