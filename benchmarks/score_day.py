"""Seconds to score one new trading day for 100 simulated instruments: features, layer 1
(fallback, and a small random-weight Chronos-Bolt for the foundation model's cost on
this CPU) and the risk model, with and without a scheduled retrain, calibrated on the
validation record's out-of-sample raw scores as a bootstrapped store's first live days
are. Target: under 60 s for a day including layer 1.

    python benchmarks/score_day.py [--instruments 100] [--days 260]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import date
from pathlib import Path

DAY = date(2026, 11, 20)


def main() -> None:
    from market.clock import default_calendar
    from market.settings import Settings
    from models.layer1 import EmpiricalFallback, load_layer1, save_random_chronos_bolt
    from pipeline.backfill import backfill
    from pipeline.scoring import score_day
    from pipeline.validation import build_validation_record
    from store.engine import build_engine
    from store.migrations import upgrade

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instruments", type=int, default=100)
    parser.add_argument("--days", type=int, default=260)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-score-"))
    settings = Settings(
        _env_file=None,
        database_url=f"sqlite:///{work / 'bench.db'}",
        data_dir=work / "data",
        models_dir=work / "models",
        simulator_instruments=args.instruments,
    )
    engine = build_engine(settings.database_url)
    upgrade(engine)
    calendar = default_calendar()
    following = calendar.next_trading_day(DAY)
    started = time.perf_counter()
    backfill(engine, settings, args.days, following, with_text=False)
    figures = {
        "benchmark": "score_day",
        "instruments": args.instruments,
        "history_days": args.days,
        "backfill_s": round(time.perf_counter() - started, 1),
    }
    started = time.perf_counter()
    with engine.begin() as conn:  # the out-of-sample raw scores the live days are calibrated on
        build_validation_record(conn, end=calendar.previous_trading_day(DAY))
    figures["validation_record_s"] = round(time.perf_counter() - started, 1)
    chronos = load_layer1(
        str(save_random_chronos_bolt(work / "chronos-bolt-random", d_model=256, layers=4)), offline=True
    )
    for label, backend, day in (
        ("fallback_with_retrain", EmpiricalFallback(), DAY),
        ("fallback_no_retrain", EmpiricalFallback(), following),
        ("chronos_random_weights_no_retrain", chronos, following),
    ):
        started = time.perf_counter()
        with engine.begin() as conn:
            result = score_day(conn, settings, day, calendar, backend)
        figures[f"{label}_s"] = round(time.perf_counter() - started, 2)
        print(
            f"{label}: {figures[f'{label}_s']} s for {len(result.predictions)} instruments "
            f"(model {result.model_id}, retrained {result.trained is not None}, calibrated on "
            f"{result.calibration_rows} rows)"
        )
        figures[f"{label}_calibration_rows"] = result.calibration_rows
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
