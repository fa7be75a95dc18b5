"""Bootstrapping a track record (pipeline/bootstrap.py, models/validation.py): idempotent,
no look-ahead, kept apart from the live record, on both databases."""

from __future__ import annotations

import math
from datetime import date, timedelta

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import func, select

from market.clock import default_calendar
from market.errors import InvalidInputError, StageFailedError
from market.settings import Settings
from models.decisions import HORIZON
from pipeline.bootstrap import BootstrapTerms, bootstrap, refuse_late_end
from pipeline.runner import run_stage
from pipeline.validation import build_validation_record
from store import tables
from store.engine import migration_engine, service_engine
from store.history import append_history
from store.migrations import upgrade
from store.panels import record_end
from tests.conftest import ON_SQLITE_ONLY
from tests.models.synthetic import synthetic_prices
from tests.pipeline.test_cli import cli
from views.performance import performance

DAYS, INSTRUMENTS = 190, 12


def _prices(seed: int = 5) -> pd.DataFrame:
    prices, _ = synthetic_prices(instruments=INSTRUMENTS, days=DAYS, signal=0.0, seed=seed)
    calendar = default_calendar()
    days = calendar.trading_days(date(2025, 1, 2), date(2026, 6, 30))[:DAYS]
    mapping = dict(zip(sorted(prices["date"].unique()), days))
    return prices.assign(date=prices["date"].map(mapping))


def _store(settings: Settings, prices: pd.DataFrame):
    upgrade(migration_engine(settings))
    engine = service_engine(settings)
    rows = [
        {
            "symbol": r.symbol,
            "trading_date": r.date,
            "close": r.close,
            "high": r.high,
            "low": r.low,
            "volume": int(r.volume),
            "bid": None,
            "ask": None,
            "source": "test",
        }
        for r in prices.itertuples()
    ]
    with engine.begin() as conn:
        append_history(conn, tables.eod_prices, rows)
    return engine


def _history_counts(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar()
            for t in tables.metadata.sorted_tables
            if "recorded_at" in t.c
        }


def _record(engine) -> pd.DataFrame:
    with engine.connect() as conn:
        rows = conn.execute(select(tables.validation_predictions)).mappings().all()
    return (
        pd.DataFrame(rows)
        .drop(columns=["id", "recorded_at"])
        .sort_values(["trading_date", "symbol"])
        .reset_index(drop=True)
    )


def test_bootstrap_stores_the_record_and_a_second_run_writes_no_history_row(settings: Settings) -> None:
    engine = _store(settings, _prices())
    first = bootstrap(engine, settings, default_calendar(), BootstrapTerms(days=60, min_train_days=120))
    assert first.record.predictions == 60 * INSTRUMENTS and first.record.models == 12
    assert first.record.inserted["validation_predictions"] == 60 * INSTRUMENTS
    assert first.record.metrics["binary_accuracy"]["sample_size"] > 0
    # every prediction keeps its reasons, as the live ones do (models/reasons.py)
    assert all(len(r["top"]) == 3 and isinstance(r["base_value"], float) for r in _record(engine)["reasons"])
    counts = _history_counts(engine)
    again = bootstrap(engine, settings, default_calendar(), BootstrapTerms(days=60, min_train_days=120))
    assert _history_counts(engine) == counts
    assert again.record.inserted == {"validation_predictions": 0, "model_runs": 0, "model_metrics": 0}
    with engine.connect() as conn:
        perf = performance(conn)
        assert conn.execute(select(func.count()).select_from(tables.predictions)).scalar() == 0  # live untouched
        runs = conn.execute(select(tables.model_runs.c.kind, func.count()).group_by(tables.model_runs.c.kind)).all()
    record = perf["validation"]
    assert dict(runs) == {"validation": 12}
    assert (
        record["period_start"] == first.record.first.isoformat()
        and record["period_end"] == first.record.last.isoformat()
    )
    # the last day has no outcome yet
    assert record["models"] == 12 and record["predictions"] == 60 * INSTRUMENTS - (HORIZON + 1) * INSTRUMENTS
    # the metrics are evaluated through the last predicted day with an outcome, not the period's end
    predicted = sorted(set(_record(engine)["trading_date"]))
    assert record["evaluated_through"] == predicted[-(HORIZON + 2)].isoformat() < record["period_end"]
    binary = record["metrics"]["binary_accuracy"]
    assert math.isclose(binary["value"], first.record.metrics["binary_accuracy"]["value"])
    assert set(binary["baselines"]) == {"majority", "last_move_sign"}
    assert perf["live"]["reason"] and perf["model_id"] is None


def test_the_record_for_day_d_is_bit_for_bit_the_same_when_later_prices_change(tmp_path, settings: Settings) -> None:
    prices = _prices()
    days = sorted(prices["date"].unique())
    cut = days[160]
    changed = prices.copy()
    later = changed["date"] > cut
    changed.loc[later, "close"] = changed.loc[later, "close"] * np.random.default_rng(3).uniform(0.5, 2.0, later.sum())
    changed.loc[later, "volume"] = 0
    original = _store(settings, prices)
    other_settings = settings.model_copy(
        update={"database_url": f"sqlite:///{tmp_path / 'changed.db'}", "migration_database_url": None}
    )
    altered = _store(other_settings, changed)
    for engine in (original, altered):
        with engine.begin() as conn:
            build_validation_record(conn, days=60, min_train_days=120)
    a, b = _record(original), _record(altered)
    up_to_cut = a["trading_date"] <= cut
    assert up_to_cut.sum() > 0 and (~up_to_cut).sum() > 0
    pd.testing.assert_frame_equal(a[up_to_cut], b[b["trading_date"] <= cut], check_exact=True)
    assert not a[~up_to_cut].reset_index(drop=True).equals(b[b["trading_date"] > cut].reset_index(drop=True))


def test_the_record_ends_before_the_first_live_day(settings: Settings) -> None:
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    with engine.begin() as conn:
        append_history(
            conn,
            tables.predictions,
            [
                {
                    "symbol": "S00",
                    "trading_date": days[-5],
                    "model_id": "risk-x",
                    "horizon_days": 1,
                    "p_up": 0.5,
                    "score": 50.0,
                }
            ],
        )
        assert record_end(conn) == days[-6]
        result = build_validation_record(conn, days=60, min_train_days=120)
    assert result.last == days[-6]


def test_a_short_history_gives_no_record_and_says_why(settings: Settings) -> None:
    engine = _store(settings, _prices()[lambda p: p["date"] <= sorted(p["date"].unique())[100]])
    result = bootstrap(engine, settings, default_calendar(), BootstrapTerms(days=60, min_train_days=120))
    assert result.record.predictions == 0 and "fewer than 120 trading days" in result.record.reason
    assert result.replayed == [] and result.replay_note == "no validation record to replay"
    assert any("validation record: none" in line for line in result.lines())


def test_a_history_too_short_to_calibrate_still_stores_its_record(settings: Settings) -> None:
    """`marketintel demo --days 135` stopped in the record's store step: a walk-forward too
    short to calibrate has no `predicted_class` column at all."""
    engine = _store(settings, _prices()[lambda p: p["date"] <= sorted(p["date"].unique())[134]])
    result = bootstrap(engine, settings, default_calendar(), BootstrapTerms(days=60, min_train_days=120))
    assert result.record.predictions > 0, result.record.reason
    classes = _record(engine)["predicted_class"]
    assert len(classes) == result.record.predictions


def test_a_day_the_validation_record_covers_is_not_scored_live(settings: Settings) -> None:
    """An adversarial run: `stage run t1_predict` for a day inside the validation record
    stored live predictions there (with the newest model, trained after it) and moved the
    live record's start back over the validation record's days. It is refused, and nothing
    is written."""
    engine = _store(settings, _prices())
    with engine.begin() as conn:
        result = build_validation_record(conn, days=60, min_train_days=120)
    inside = result.last
    before = _history_counts(engine)
    with pytest.raises(StageFailedError, match=f"{inside.isoformat()} is in the validation record"):
        run_stage("t1_predict", inside, settings=settings)
    after = _history_counts(engine)
    assert after.pop("stage_runs") == before.pop("stage_runs") + 2  # STARTED and FAILED, the runner's own record
    assert after == before


@ON_SQLITE_ONLY
def test_an_end_after_the_latest_day_the_record_may_end_on_is_refused(settings: Settings) -> None:
    """`marketintel bootstrap --end 2099-01-02` built the record to the latest priced day and
    said nothing of the day asked for: an --end the exchange has not reached, or one after
    the latest day the record may end on, is one line naming that day, exit status 1, and
    nothing is written. A weekend before the first live day ends on the Friday before it
    ("up to and including", as backfill --end), so it is no refusal."""
    prices = _prices()
    engine = _store(settings, prices)
    days = sorted(prices["date"].unique())
    before = _history_counts(engine)
    ahead = cli("bootstrap", "--end", "2099-01-02")
    said = (
        f"--end 2099-01-02 has not closed yet; the record may end on {days[-1]} at the latest (the latest priced day)"
    )
    assert (ahead.returncode, ahead.stdout, ahead.stderr) == (1, "", f"error: {said}\n")
    after = default_calendar().next_trading_day(days[-1])
    late = cli("bootstrap", "--end", after.isoformat())
    said = f"--end {after} is after {days[-1]}, the latest day the record may end on (the latest priced day)"
    assert (late.returncode, late.stdout, late.stderr) == (1, "", f"error: {said}\n")
    assert _history_counts(engine) == before
    live = days[-4]  # a Monday: the record may end on the Friday before it, or the weekend between
    with engine.begin() as conn:
        row = {"symbol": "S00", "trading_date": live, "model_id": "m", "horizon_days": 1, "p_up": 0.5, "score": 50.0}
        append_history(conn, tables.predictions, [row])
    why = f"the day before the first live prediction, {live}"
    said = f"--end {live} is after {days[-5]}, the latest day the record may end on ({why})"
    with engine.connect() as conn, pytest.raises(InvalidInputError) as refused:
        refuse_late_end(conn, default_calendar(), live)
    assert refused.value.detail == said
    with engine.connect() as conn:
        refuse_late_end(conn, default_calendar(), live - timedelta(days=1))  # the Sunday before: no refusal


def test_the_summary_counts_one_portfolio_in_the_singular() -> None:
    """The demo printed "T2 for ... from the validation record: 22 suggestions for 1
    portfolios": every count of the summary reads singular for one (reports.format `counted`)."""
    from models.validation import ValidationRecord
    from pipeline.bootstrap import Bootstrap
    from portfolio.suggestions import MorningSuggestions

    record = ValidationRecord(None, None, 0, 0, {}, {}, 0.0, "no prices")
    one = MorningSuggestions("2026-11-23", "2026-11-20", "validation", 1, [], 0, [], [])
    line = Bootstrap(record, [], None, one, None).lines()[-1]
    assert line == "T2 for 2026-11-23 from the validation record: 0 suggestions for 1 portfolio", line
