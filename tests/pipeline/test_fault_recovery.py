"""T1 killed in the middle of step 4, then re-run, ends with the same store as a day that
ran through once: no duplicate and no missing row.

The kill is real: `t1_predict` runs in its own process, which SIGKILLs itself right after
the day's predictions are written inside the stage's transaction (model registered,
predictions inserted, nothing committed). The same day is run uninterrupted on a copy of
the store taken before step 4; every history table's rows, bar bookkeeping, must match.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from market.settings import Settings
from pipeline.backfill import backfill
from pipeline.runner import run_stage
from store import tables
from store.engine import dispose_engines, service_engine
from store.tables import HISTORY_TABLES

DAY = date(2026, 11, 20)
KILLED_IN_STEP_4 = """
import os, signal, sys
import pipeline.scoring as scoring
real = scoring.append_history
def append_then_die(conn, table, rows, **kwargs):
    result = real(conn, table, rows, **kwargs)
    if table.name == "predictions":
        os.kill(os.getpid(), signal.SIGKILL)
    return result
scoring.append_history = append_then_die
from pipeline.runner import run_stage
run_stage("t1_predict", sys.argv[1], trigger="fault-test")
"""
AFTER_STEP_4 = ["t1_predict", "t1_analysis", "t1_trade"]
SKIP_COLUMNS = {"id", "recorded_at", "run_id"}


def content(url: str) -> dict[str, list[tuple]]:
    """Every history table's rows without bookkeeping, sorted (stage_runs: the events that
    ended an attempt, by stage)."""
    engine = create_engine(url)
    result = {}
    with engine.connect() as conn:
        for name, table in HISTORY_TABLES.items():
            if name == "stage_runs":
                continue
            columns = [c for c in table.c if c.name not in SKIP_COLUMNS and c.name not in ("artifact_path", "detail")]
            result[name] = sorted(tuple(str(v) for v in row) for row in conn.execute(select(*columns)))
    engine.dispose()
    return result


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_t1_killed_in_step_4_and_rerun_leaves_the_day_whole(settings: Settings, tmp_path: Path) -> None:
    engine = service_engine(settings)
    backfill(engine, settings, 40, DAY, with_text=False)
    for stage in ("t1_preflight", "t1_sentiment", "t1_features"):
        run_stage(stage, DAY, settings=settings)
    dispose_engines()
    store = Path(settings.database_url.removeprefix("sqlite:///"))
    reference = tmp_path / "reference.db"
    shutil.copy(store, reference)

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IN_STEP_4, DAY.isoformat()], capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    with service_engine(settings).connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.predictions)).scalar() == 0, "nothing committed"
        events = [
            r.event
            for r in conn.execute(select(tables.stage_runs.c.event).where(tables.stage_runs.c.stage == "t1_predict"))
        ]
    assert events == ["STARTED"], "the killed attempt left its STARTED row and nothing else"

    for stage in AFTER_STEP_4:
        assert run_stage(stage, DAY, settings=settings, trigger="rerun").status == "SUCCEEDED"
    dispose_engines()
    reference_settings = settings.model_copy(
        update={"database_url": f"sqlite:///{reference}", "models_dir": tmp_path / "reference-models"}
    )
    for stage in AFTER_STEP_4:
        run_stage(stage, DAY, settings=reference_settings)
    dispose_engines()

    recovered, once = content(settings.database_url), content(reference_settings.database_url)
    assert recovered["predictions"] and recovered["model_runs"] and recovered["analyses"]
    assert recovered == once
