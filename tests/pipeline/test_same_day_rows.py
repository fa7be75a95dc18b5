"""A fixed-seed week of trading days stores the rows the code stored before issue 65's speed
work: the day's bars and indicators, sentiment composites, features, predictions (Score,
Action, Weight, Tercile, the raw score, the calibrated outputs and the reasons), the models
trained, the live record, the monitor's checks, the analysis's facts and the AI portfolio's
fills, cash and days.

The world: the default simulated market (60 names, seed 7), 110 trading days of history
(the last 10 with news and disclosures), the validation record of its last 50 days, then
eight live days each run through every T0 and T1 stage over real HTTP (T0 from the
simulator's website, the text, sentiment, features, predictions, monitor, analysis and the
AI book's trades). The first live day trains the first model (a full fit), the sixth a warm
start; every live day is calibrated on the validation record's out-of-sample scores, so the
book decides and fills; the seventh and eighth find the first live days' labels known, so
the live record has metrics.

`same_day_rows.json.gz` holds the rows as the code before that work stored them (written by
this module's `--write`, in a checkout of ad353d0 with issue 65's 7747293, 51aa8b6 and
c562179 reverted and the module as 7ddb8fe wrote it, on an AMD EPYC whose OpenBLAS chooses
the Haswell kernels PINNED names, so the pinned run equals it there). A change that means
to change these rows writes the fixture again the same way, now with PINNED's variables
set (`--write` refuses to run without them), and says so in its commit. Text, integers,
dates and decisions must be equal; floats equal within a relative 1e-9 (absolute 1e-12
near zero).

The week is built in a child Python whose arithmetic is pinned (`PINNED`), so that the rows
are the same on every x86-64 machine the suite runs on. Left to choose, OpenBLAS takes the
kernels of the CPU it finds (Haswell's on an AMD EPYC, SkylakeX's on an AVX-512 Xeon), whose
sums round the last bits differently; under scikit-learn's logistic fits those bits moved a
LightGBM split, and then predictions, the analysis's figures and the AI book's fills
differed by more than any tolerance that would still catch a change (586 values on the Intel
Xeon that ran CI on 2026-11-30, the fixture written on an AMD EPYC; on the EPYC, another
kernel set, `OPENBLAS_CORETYPE=Sandybridge`, alone moves 593, and the pinned run equals the
fixture; a pinned run on a Xeon is still to be seen: that CPU runs the Haswell kernels, but
no run there has been compared yet). NumPy's dispatched loops are pinned to its baseline as
well (on the EPYC, turning off its AVX2 loops moves nothing; its AVX-512 ones, which the
EPYC lacks, are turned off with them). The child checks that it got what it asked for
(`pinned_here`: every OpenBLAS on the Haswell kernels and one thread, no NumPy dispatched
loop on; a NumPy older than 2.4 knows other feature names) and refuses to build otherwise;
it gets this process's environment without the service's settings (`pinned_environment`),
and keeps what earlier tests in the same pytest worker set (threads, caches) out of the
rows. Where the Haswell kernels cannot run (a CPU without AVX2 and FMA, not x86-64) the test
is skipped: the fixture is theirs. The packages' own versions are not pinned (pyproject.toml
takes ranges): a new LightGBM or scikit-learn that changes a split shows here first, and its
fixture is written again as above.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Table

from market.clock import default_calendar
from market.settings import Settings
from pipeline.backfill import backfill
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from pipeline.stage_lists import T0_STAGES, T1_STAGES
from store import tables
from store.engine import service_engine
from store.history import current_rows

FIXTURE = Path(__file__).with_name("same_day_rows.json.gz")
CAL = default_calendar()
FIRST_LIVE = date(2026, 11, 2)
LIVE = [FIRST_LIVE] + [CAL.add_trading_days(FIRST_LIVE, i) for i in range(1, 8)]
HISTORY_DAYS, TEXT_DAYS, VALIDATION_DAYS = 110, 10, 50
AI = "AI"
UNSTORED = {"id", "recorded_at", "artifact_path"}  # a row's number and time, a model's folder: not content
RELATIVE, ABSOLUTE = 1e-9, 1e-12
# The same kernels and loops on every x86-64 machine (the module's docstring): OpenBLAS's
# Haswell kernels (AVX2 and FMA, which every machine the suite runs on has) on one thread,
# NumPy's baseline loops.
PINNED = {
    "OPENBLAS_CORETYPE": "Haswell",
    "OPENBLAS_NUM_THREADS": "1",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
}
ROOT = Path(__file__).resolve().parents[2]


def build(settings: Settings) -> dict[str, list[dict[str, Any]]]:
    """Fill the (migrated, empty) store of `settings` with the module's world; its rows."""
    from ingest.markets import simulator_for
    from ingest.simulator.site import SimulatorSite
    from pipeline.validation import build_validation_record

    engine = service_engine(settings)
    before = CAL.previous_trading_day(FIRST_LIVE)
    backfill(engine, settings, HISTORY_DAYS - TEXT_DAYS, CAL.add_trading_days(before, -TEXT_DAYS), with_text=False)
    backfill(engine, settings, TEXT_DAYS, before)
    with engine.begin() as conn:
        build_validation_record(conn, end=before, days=VALIDATION_DAYS, min_train_days=VALIDATION_DAYS)
    site = SimulatorSite(simulator_for(settings), published_through=LIVE[-1])
    with serve_in_thread(site.asgi_app()) as base:
        # the simulator serves its disclosure PDFs from 127.0.0.1
        live = settings.model_copy(update={"exchange_base_url": base, "allow_private_enclosures": True})
        for day in LIVE:
            for stage in T0_STAGES + T1_STAGES:
                run_stage(stage, day, settings=live)
    with engine.connect() as conn:
        return stored_rows(conn)


def stored_rows(conn: Connection) -> dict[str, list[dict[str, Any]]]:
    """The rows compared, as plain JSON values, each table's in a fixed order."""
    first = FIRST_LIVE
    reads: dict[str, tuple[Table, list, tuple[str, ...]]] = {
        "daily_bars": (tables.daily_bars, [tables.daily_bars.c.trading_date >= first], ("trading_date", "symbol")),
        "sentiment_composites": (
            tables.sentiment_composites,
            [tables.sentiment_composites.c.trading_date >= first],
            ("trading_date", "symbol"),
        ),
        "features": (tables.features, [], ("trading_date", "symbol")),
        "predictions": (tables.predictions, [], ("trading_date", "symbol", "model_id")),
        "model_runs": (tables.model_runs, [], ("model_id",)),
        "model_metrics": (tables.model_metrics, [], ("scope", "metric")),
        "monitor_checks": (tables.monitor_checks, [], ("trading_date", "check_name")),
        "analyses": (tables.analyses, [], ("trading_date",)),
        "trades": (tables.trades, [tables.trades.c.portfolio_id == AI], ("trading_date", "trade_id")),
        "cash_entries": (tables.cash_entries, [tables.cash_entries.c.portfolio_id == AI], ("entry_id",)),
        "portfolio_days": (tables.portfolio_days, [tables.portfolio_days.c.portfolio_id == AI], ("trading_date",)),
    }
    out = {}
    for name, (table, where, order) in reads.items():
        rows = [
            {k: _plain(v) for k, v in row.items() if k not in UNSTORED}
            for row in current_rows(conn, table, where=where)
        ]
        if name == "analyses":  # the facts written about; the body's wording is the writer's
            rows = [{"trading_date": r["trading_date"], "facts": r["facts"]} for r in rows]
        out[name] = sorted(rows, key=lambda r: tuple(str(r[k]) for k in order))
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def differences(expected: Any, got: Any, where: str = "") -> Iterator[str]:
    """Where `got` is not `expected`: floats within the module's tolerance, all else equal."""
    if isinstance(expected, float) and isinstance(got, (float, int)) and not isinstance(got, bool):
        if not (math.isclose(expected, got, rel_tol=RELATIVE, abs_tol=ABSOLUTE) or expected == got):
            yield f"{where}: {got!r}, expected {expected!r}"
    elif isinstance(expected, dict) and isinstance(got, dict):
        if set(expected) != set(got):
            yield f"{where}: keys {sorted(set(got) ^ set(expected))} differ"
        for key in sorted(set(expected) & set(got)):
            yield from differences(expected[key], got[key], f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            yield f"{where}: {len(got)} items, expected {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            yield from differences(e, g, f"{where}[{i}]")
    elif expected != got:
        yield f"{where}: {got!r}, expected {expected!r}"


@pytest.mark.slow
def test_a_fixed_seed_week_stores_the_rows_stored_before(tmp_path: Path) -> None:
    if not haswell_kernels_run_here():
        pytest.skip("OpenBLAS's Haswell kernels need an x86-64 CPU with AVX2 and FMA; the fixture is theirs")
    out = tmp_path / "rows.json"
    command = [sys.executable, "-m", "tests.pipeline.test_same_day_rows", "--rows", str(out)]
    subprocess.run(command, cwd=ROOT, env=pinned_environment(), check=True, timeout=540)
    expected = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    got = json.loads(out.read_text())
    assert {name: len(rows) for name, rows in got.items()} == {name: len(rows) for name, rows in expected.items()}
    found = list(differences(expected, got))
    assert not found, f"{len(found)} values differ, first: " + "; ".join(found[:10])


def haswell_kernels_run_here() -> bool:
    import platform

    from numpy._core._multiarray_umath import __cpu_features__

    return platform.machine().lower() in ("x86_64", "amd64") and all(
        __cpu_features__.get(name) for name in ("AVX2", "FMA3")
    )


def pinned_environment() -> dict[str, str]:
    """The child's environment: this one's, less the service's settings (the child sets its
    own store and folders) and NumPy's feature switches, plus PINNED and the checkout on
    the path (`-m` finds the module under PYTHONSAFEPATH too)."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("MARKETINTEL_") and name not in ("NPY_ENABLE_CPU_FEATURES", "PYTHONPATH")
    }
    return {**kept, **PINNED, "PYTHONPATH": str(ROOT)}


def pinned_here() -> list[str]:
    """What in this process is not as PINNED asks (none: the arithmetic is the fixture's):
    an OpenBLAS on other kernels or threads, a NumPy dispatched loop still on (a NumPy that
    does not know PINNED's feature names leaves them on)."""
    import threadpoolctl
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    wrong = [f"NumPy's {name} loops are on" for name in __cpu_dispatch__ if __cpu_features__.get(name)]
    blas = [i for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
    wrong += [
        f"{i['filepath']}: {i.get('architecture')} kernels on {i.get('num_threads')} threads"
        for i in blas
        if i.get("architecture") != PINNED["OPENBLAS_CORETYPE"] or i.get("num_threads") != 1
    ]
    return wrong if blas else [*wrong, "no OpenBLAS loaded"]


def stored_rows_as_json(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows as the fixture keeps them (through JSON: tuples become lists, NaN stays NaN)."""
    return json.loads(json.dumps(rows))


def main() -> None:
    """Build the week in a new store under the pinned arithmetic; write its rows to `--rows`, or
    the fixture (`--write`); print the rows' counts."""
    from market.settings import get_settings, work_environment
    from store.engine import build_engine
    from store.migrations import upgrade

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="write same_day_rows.json.gz")
    parser.add_argument("--rows", type=Path, help="write the rows to this JSON file")
    args = parser.parse_args()
    unpinned = {name for name, value in PINNED.items() if os.environ.get(name) != value}
    if unpinned:  # the variables are read as NumPy and OpenBLAS load: too late to set them here
        parser.error(f"set {', '.join(sorted(unpinned))} as PINNED says: the rows depend on them")
    import numpy  # noqa: F401 - loads NumPy's OpenBLAS, which pinned_here reads
    import scipy.linalg  # noqa: F401 - and SciPy's

    if wrong := pinned_here():
        parser.error("the arithmetic is not pinned: " + "; ".join(wrong))
    with tempfile.TemporaryDirectory() as folder:
        os.environ.update({"MARKETINTEL_NO_DOTENV": "1", **work_environment(Path(folder), "store.db")})
        get_settings.cache_clear()
        settings = get_settings()
        upgrade(build_engine(settings.database_url))
        rows = stored_rows_as_json(build(settings))
    if args.write:
        FIXTURE.write_bytes(gzip.compress(json.dumps(rows, sort_keys=True).encode(), mtime=0))
    if args.rows:
        args.rows.write_text(json.dumps(rows))
    print(json.dumps({name: len(r) for name, r in rows.items()}))


if __name__ == "__main__":
    main()
