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
this module, run as `python -m tests.pipeline.test_same_day_rows --write`, in a checkout of
ad353d0 with issue 65's 7747293, 51aa8b6 and c562179 reverted). A change that means to
change these rows writes the fixture again the same way and says so in its commit. Text,
integers, dates and decisions must be equal; floats equal within a relative
1e-9 (absolute 1e-12 near zero): NumPy's vectorised log and exp and the BLAS under
scikit-learn's logistic fits may round the last bits differently from run to run of a build.
Across machines that is not enough: on another machine (its CPU, by all signs: the code and
the dates are fixed) those last bits can move a LightGBM split,
and then predictions, the analysis's figures and the AI book's fills differ by more than any
tolerance that would still catch a change (on 2026-11-29 a new machine's run of the code
before the speed work differed from the fixture in 593 values, 473 of them predictions, and
HEAD's run there equalled that run's rows). So the fixture belongs to the machine that runs
the suite: where the test fails on a new machine, write the fixture there from the code
before (the checkout above, with this module as 7ddb8fe wrote it) and run the test again; a
failure on the machine that wrote the fixture is a change in the rows. Written last on the
machine of 2026-11-29 (an AMD EPYC, 2 cores), where HEAD's rows equal it, from that
checkout with one change the rows mean to carry since: an opening buy's `entry` in its
rationale (ceb2570; the two lines of portfolio/book.py `_buy` that set it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
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
        live = settings.model_copy(update={"exchange_base_url": base})
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
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_fixed_seed_week_stores_the_rows_stored_before(settings: Settings) -> None:
    expected = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    got = stored_rows_as_json(build(settings))
    assert {name: len(rows) for name, rows in got.items()} == {name: len(rows) for name, rows in expected.items()}
    found = list(differences(expected, got))
    assert not found, f"{len(found)} values differ, first: " + "; ".join(found[:10])


def stored_rows_as_json(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows as the fixture keeps them (through JSON: tuples become lists, NaN stays NaN)."""
    return json.loads(json.dumps(rows))


def main() -> None:
    """Write the fixture from this checkout's code (`--write`), or print the rows' counts."""
    from market.settings import get_settings, work_environment
    from store.engine import build_engine
    from store.migrations import upgrade

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ.update({"MARKETINTEL_NO_DOTENV": "1", **work_environment(Path(folder), "store.db")})
        get_settings.cache_clear()
        settings = get_settings()
        upgrade(build_engine(settings.database_url))
        rows = stored_rows_as_json(build(settings))
    if args.write:
        FIXTURE.write_bytes(gzip.compress(json.dumps(rows, sort_keys=True).encode(), mtime=0))
    print(json.dumps({name: len(r) for name, r in rows.items()}))


if __name__ == "__main__":
    main()
