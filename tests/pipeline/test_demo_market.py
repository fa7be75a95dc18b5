"""`marketintel demo --market PATH` on the real NSE history (runs where ../shared is, and
must under CI=true): the whole demo replayed through the exchange website, its validation
record whose binary accuracy on the product's label beats its base rate over the replayed
period, prices stored in KES."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from market.settings import work_environment
from store import tables
from tests.pipeline.test_cli import MARKETINTEL
from tests.reports.pdf import read

LIMIT_SECONDS = 600  # the bound for the whole replayed demo on 2 cores; a guard, not a benchmark


@pytest.mark.slow
def test_demo_on_replayed_nse_history_builds_a_validation_record_above_its_base_rate(
    nse_data: Path, tmp_path: Path
) -> None:
    database = tmp_path / "store.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MARKETINTEL_")}
    env.update(work_environment(tmp_path, database.name))
    done = subprocess.run(
        [MARKETINTEL, "demo", "--market", str(nse_data / "daily"), "--no-serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_SECONDS,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "backfilled 1000 real trading days from" in out and "replayed exchange serving on" in out
    accuracy = re.search(
        r"validation record (\S+) to (\S+): .* binary accuracy (\d+\.\d)% \(base rate (\d+\.\d)%, "
        r"n=(\d+)\)",
        out,
    )
    assert accuracy, out[-2000:]
    assert float(accuracy.group(3)) > float(accuracy.group(4)) and int(accuracy.group(5)) >= 2000, accuracy.group(0)
    assert accuracy.group(2) == "2022-04-27"  # the day before the files' last day, the demo's live day
    assert "t1_trade       2022-04-28" in out and "t2_suggestions 2022-04-29" in out

    engine = create_engine(f"sqlite:///{database}")
    with engine.connect() as conn:
        metric, base_rate = conn.execute(
            select(tables.model_metrics.c.value, tables.model_metrics.c.base_rate).where(
                tables.model_metrics.c.model_id == "validation", tables.model_metrics.c.metric == "binary_accuracy"
            )
        ).one()
        currencies = {c for (c,) in conn.execute(select(tables.instruments.c.currency).distinct())}
        live = conn.execute(select(tables.predictions.c.trading_date).distinct()).scalars().all()
    engine.dispose()
    assert metric > base_rate and currencies == {"KES"} and [d.isoformat() for d in live] == ["2022-04-28"]
    briefing = read((tmp_path / "reports" / "quant-briefing.pdf").read_bytes()).text
    assert "Validation record (walk-forward, out of sample, before the first live day): 2021-" in briefing
    assert "Not available" not in briefing
