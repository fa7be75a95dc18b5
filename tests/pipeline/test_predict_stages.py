"""T1 step 4 through the stage runner on a store of simulated history: features,
training when due (full, then warm-started), predictions stored once, and the layer-1
backend named on every prediction."""

from datetime import date

import pytest
from sqlalchemy import func, select

from market.clock import default_calendar
from market.errors import StageFailedError
from market.settings import Settings
from models.decisions import HORIZON
from models.features import FEATURE_NAMES
from pipeline.backfill import backfill
from pipeline.runner import run_stage
from store import tables
from store.engine import service_engine
from store.history import append_history, current_rows

DAY = date(2026, 11, 13)


def _count(settings: Settings, table) -> int:
    with service_engine(settings).connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_features_then_predict_then_warm_retrain(settings: Settings) -> None:
    engine = service_engine(settings)
    later = default_calendar().add_trading_days(DAY, HORIZON + 2)  # DAY's label (HORIZON + 1 sessions on) is known
    backfill(engine, settings, 45, later, with_text=False)

    features = run_stage("t1_features", DAY, settings=settings)
    assert features.summary["instruments"] == 59 and features.summary["layer1_is_fallback"] is True
    with engine.connect() as conn:
        stored = current_rows(conn, tables.features, where=[tables.features.c.trading_date == DAY])
    assert len(stored) == 59 and set(stored[0]["feature_values"]) == set(FEATURE_NAMES)

    first = run_stage("t1_predict", DAY, settings=settings)
    assert first.summary["retrained"] is True and first.summary["warm_start"] is False
    assert first.summary["layer1"] == "fallback-empirical-v2"
    assert first.summary["calibration_rows"] == 0  # no validation record and no earlier live day: uncalibrated
    ranking = first.tables["ranking"]
    assert len(ranking) == 59 and {r["tercile"] for r in ranking} <= {"TOP", "MIDDLE", "BOTTOM", "ILLIQUID"}
    assert sum(r["weight"] for r in ranking) <= 1.0 + 1e-9
    assert [r["score"] for r in ranking] == sorted((r["score"] for r in ranking), reverse=True)
    with engine.connect() as conn:
        predictions = current_rows(conn, tables.predictions)
        (run,) = current_rows(conn, tables.model_runs)
    assert {p["layer1_backend"] for p in predictions} == {"fallback-empirical-v2"}
    assert run["feature_names"] == FEATURE_NAMES and run["train_end"] == DAY and run["training_rows"] > 500

    again = run_stage("t1_predict", DAY, settings=settings)
    assert again.summary["retrained"] is False
    assert _count(settings, tables.predictions) == 59 and _count(settings, tables.model_runs) == 1

    run_stage("t1_features", later, settings=settings)
    warm = run_stage("t1_predict", later, settings=settings)
    assert warm.summary["retrained"] is True and warm.summary["warm_start"] is True
    with engine.connect() as conn:
        runs = {r["model_id"]: r for r in current_rows(conn, tables.model_runs)}
    (child,) = [r for r in runs.values() if r["warm_start"]]
    assert child["parent_model_id"] == run["model_id"]
    metrics = {m["metric"] for m in warm.tables["metrics"]}
    assert {"binary_accuracy", "three_class_accuracy", "movers_accuracy", "average_error"} <= metrics

    # DAY scored again after the warm retrain: with the model of its time, nothing written (an
    # adversarial run stored DAY's 59 predictions again under the later model, trained after DAY)
    rerun = run_stage("t1_predict", DAY, settings=settings)
    assert rerun.summary["retrained"] is False and rerun.summary["model_id"] == run["model_id"]
    assert _count(settings, tables.predictions) == 118 and _count(settings, tables.model_runs) == 2


# core14-v2
OLDER_FEATURES = {"feature_names": [("bollinger_bandwidth" if n == "market_breadth" else n) for n in FEATURE_NAMES]}
# A model stored before the live stage took the walk-forward's recipe: Platt hold-out and
# regressor, and no recipe in its parameters.
OLDER_RECIPE = {"params": {"learning_rate": 0.05, "num_leaves": 15}}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("older", [OLDER_FEATURES, OLDER_RECIPE], ids=["feature-list", "recipe"])
def test_a_model_of_an_older_feature_list_or_recipe_is_replaced_by_a_full_refit(
    settings: Settings, older: dict
) -> None:
    engine = service_engine(settings)
    next_day = default_calendar().add_trading_days(DAY, 1)
    backfill(engine, settings, 45, next_day, with_text=False)
    run_stage("t1_features", DAY, settings=settings)
    run_stage("t1_predict", DAY, settings=settings)
    with engine.begin() as conn:
        (run,) = current_rows(conn, tables.model_runs)
        assert run["params"]["calibration_share"] == 0.0 and run["params"]["regressor"] is False
        append_history(
            conn,
            tables.model_runs,
            [
                {
                    **{
                        k: v
                        for k, v in run.items()
                        if k in tables.model_runs.c and k not in ("recorded_at", "superseded_at", "id")
                    },
                    **older,
                }
            ],
        )
        (stored,) = current_rows(conn, tables.model_runs)
        assert all(stored[k] == v for k, v in older.items())

    run_stage("t1_features", next_day, settings=settings)
    upgraded = run_stage("t1_predict", next_day, settings=settings)  # one day later: not due by age
    assert upgraded.summary["retrained"] is True and upgraded.summary["warm_start"] is False
    with engine.connect() as conn:
        latest = max(current_rows(conn, tables.model_runs), key=lambda r: r["train_end"])
    assert latest["train_end"] == next_day and latest["feature_names"] == FEATURE_NAMES


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_too_little_history_is_a_clear_refusal(settings: Settings) -> None:
    backfill(service_engine(settings), settings, 3, DAY, with_text=False)
    with pytest.raises(StageFailedError, match="needs at least 500 .*`marketintel backfill --days 260`"):
        run_stage("t1_predict", DAY, settings=settings)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("stage", ["t1_features", "t1_predict"])
def test_a_day_t0_has_not_delivered_is_refused(settings: Settings, stage: str) -> None:
    """An adversarial run: after a failed T0, `stage run t1_features` and `t1_predict`
    reported SUCCEEDED for 0 instruments. A day without stored closes is refused, naming
    what to run."""
    backfill(service_engine(settings), settings, 30, DAY, with_text=False)
    missing = default_calendar().next_trading_day(DAY)
    with pytest.raises(StageFailedError, match=f"no closes are stored for {missing.isoformat()}: T0 has not"):
        run_stage(stage, missing, settings=settings)
    assert _count(settings, tables.features) == _count(settings, tables.predictions) == 0
