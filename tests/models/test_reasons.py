"""The reasons behind each prediction (models/reasons.py) against LightGBM itself: a
booster trained by the project's own code, on the modelling panel of simulated prices
(the model tests' world) and on the simulator's store through the live stage. Per row, the
contributions (pred_contrib) and the base value add up to the raw score, and the three
kept are the three largest by absolute value, with their signs."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from market.settings import Settings
from models.decisions import HORIZON
from models.features import FEATURE_LABELS, FEATURE_NAMES
from models.reasons import TOP, contributions, explain, served, top_reasons
from models.risk import DEFAULT_PARAMS, RiskModel, Training, load_model
from models.walkforward import WalkForwardConfig, training_rows, walk_forward
from tests.models.synthetic import synthetic_panel

DAY = date(2026, 11, 13)


@pytest.fixture(scope="module")
def trained() -> tuple[RiskModel, np.ndarray]:
    """A risk model fitted as the live stage fits one (the walk-forward's recipe and
    training rows) on a synthetic panel, and the rows of the panel's last day."""
    panel = synthetic_panel(instruments=30, days=320, signal=0.5)
    dates = sorted(panel["date"].unique())
    config = WalkForwardConfig()
    train = training_rows(panel, dates, len(dates) - 1, config.embargo_days)
    model = RiskModel(params={**DEFAULT_PARAMS, **config.params}).fit(
        train[FEATURE_NAMES].to_numpy(float),
        train["forward_return"].to_numpy(float),
        Training(config.full_rounds, calibration_share=config.calibration_share, regressor=config.regressor),
        days=train["date"].to_numpy(),
    )
    X = panel[panel["date"] == dates[-1]][FEATURE_NAMES].to_numpy(float)
    X[::4, FEATURE_NAMES.index("volatility_60")] = np.nan  # as a name with too short a history has it
    X[::5, FEATURE_NAMES.index("log_value_adv20")] = np.nan
    return model, X


def _largest_three(row: np.ndarray) -> list[tuple[str, float]]:
    """Written out without numpy's sort: the input of largest |contribution| three times over."""
    left = list(range(len(FEATURE_NAMES)))
    picked = []
    for _ in range(TOP):
        best = left[0]
        for j in left:
            if abs(row[j]) > abs(row[best]):
                best = j
        picked.append((FEATURE_NAMES[best], round(float(row[best]), 6)))
        left.remove(best)
    return picked


def test_contributions_add_up_to_the_raw_score_and_the_top_three_are_the_largest(trained) -> None:
    model, X = trained
    contrib = contributions(model, X)
    assert contrib.shape == (len(X), len(FEATURE_NAMES) + 1)
    raw = model.classifier.predict(X, raw_score=True)
    np.testing.assert_allclose(contrib.sum(axis=1), raw, rtol=0, atol=1e-9)  # base value is the last column
    assert np.allclose(model.raw_score(X), raw)

    reasons = explain(model, X, FEATURE_NAMES)
    assert len(reasons) == len(X)
    signs = set()
    for row, kept in zip(contrib, reasons):
        assert kept["base_value"] == round(float(row[-1]), 6)
        got = [(r["feature"], r["contribution"]) for r in kept["top"]]
        assert got == _largest_three(row)
        smallest_kept = min(abs(row[FEATURE_NAMES.index(f)]) for f, _ in got)
        others = [abs(row[j]) for j, name in enumerate(FEATURE_NAMES) if name not in dict(got)]
        assert smallest_kept >= max(others)
        signs |= {np.sign(c) for _, c in got}
    assert signs == {-1.0, 1.0}  # the signs are kept, not the absolute values
    # the inputs a row had no value for are named, in the registry's order, and served by label
    assert reasons[0]["missing"] == ["volatility_60", "log_value_adv20"]  # row 0: both planted
    assert reasons[4]["missing"] == ["volatility_60"] and reasons[5]["missing"] == ["log_value_adv20"]
    assert reasons[1]["missing"] == []
    assert served(reasons[0])["missing_inputs"] == ["Volatility, 60 days (daily)", "Traded value, 20-day average (log)"]


def test_served_reasons_name_each_input_by_its_label() -> None:
    contrib = np.array([[0.0] * 14 + [0.5]])
    contrib[0, FEATURE_NAMES.index("return_1d")] = -0.3
    contrib[0, FEATURE_NAMES.index("layer1_p_up")] = 0.2
    contrib[0, FEATURE_NAMES.index("rsi_14")] = 0.1
    (stored,) = top_reasons(contrib, FEATURE_NAMES)
    assert stored == {
        "base_value": 0.5,
        "top": [
            {"feature": "return_1d", "contribution": -0.3},
            {"feature": "layer1_p_up", "contribution": 0.2},
            {"feature": "rsi_14", "contribution": 0.1},
        ],
    }
    assert served(stored) == {
        "base_value": 0.5,
        "inputs": [
            {"input": "Last day's return", "contribution": -0.3},
            {"input": "Layer 1 P(up)", "contribution": 0.2},
            {"input": "RSI (14 days)", "contribution": 0.1},
        ],
    }
    assert served(None) is None and len(set(FEATURE_LABELS.values())) == 14


def test_the_walk_forward_keeps_reasons_only_when_asked() -> None:
    panel = synthetic_panel(instruments=12, days=200)
    config = WalkForwardConfig(min_train_days=120, calibration_days=0, calibrate=False)
    plain = walk_forward(panel, config)
    explained = walk_forward(
        panel, WalkForwardConfig(min_train_days=120, calibration_days=0, calibrate=False, explain=True)
    )
    assert "reasons" not in plain.predictions and len(explained.predictions) == len(plain.predictions)
    # nothing else moves
    np.testing.assert_array_equal(explained.predictions["raw_score"], plain.predictions["raw_score"])
    for r in explained.predictions.itertuples():
        assert len(r.reasons["top"]) == TOP
        total = sum(abs(x["contribution"]) for x in r.reasons["top"])
        assert total > 0


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_live_stage_stores_the_reasons_of_every_prediction(settings: Settings) -> None:
    """T1 step 4 on the simulator's store: each stored prediction's reasons are those of the
    booster that scored it, on the rows it scored (recomputed here from the same panel)."""
    from models.layer1 import load_layer1
    from pipeline.backfill import backfill
    from pipeline.runner import run_stage
    from pipeline.scoring import feature_rows
    from store import tables
    from store.engine import service_engine
    from store.history import current_rows

    engine = service_engine(settings)
    backfill(engine, settings, 45, DAY, with_text=False)
    run_stage("t1_features", DAY, settings=settings)
    result = run_stage("t1_predict", DAY, settings=settings)
    backend = load_layer1(settings.foundation_model, settings.foundation_model_offline)
    with engine.connect() as conn:
        stored = {r["symbol"]: r for r in current_rows(conn, tables.predictions)}
        (run,) = current_rows(conn, tables.model_runs)
        panel = feature_rows(conn, DAY, backend, HORIZON)
    model = load_model(run["artifact_path"])
    today = panel[panel["date"] == DAY].reset_index(drop=True)
    X = today[FEATURE_NAMES].to_numpy(float)
    contrib = contributions(model, X)
    assert len(stored) == len(today) == 59
    for i, symbol in enumerate(today["symbol"]):
        row = stored[symbol]
        assert row["raw_score"] == pytest.approx(contrib[i].sum(), abs=1e-9)
        assert row["reasons"] == {
            "base_value": round(float(contrib[i, -1]), 6),
            "top": [{"feature": f, "contribution": c} for f, c in _largest_three(contrib[i])],
            "missing": [FEATURE_NAMES[j] for j in np.flatnonzero(np.isnan(X[i]))],
        }
    # the notebook's table: the day's top names by Score with their three reasons
    table = result.tables["reasons"]
    assert len(table) == 10 and [r["symbol"] for r in table] == [r["symbol"] for r in result.tables["ranking"][:10]]
    first = stored[table[0]["symbol"]]["reasons"]["top"][0]
    assert table[0]["reason_1"] == f"{FEATURE_LABELS[first['feature']]} {first['contribution']:+.3f}"


def test_an_input_that_did_not_move_the_prediction_is_no_reason() -> None:
    """A row the trees split on one input only: its other inputs' contributions are zero (or
    round to zero), and neither the stored nor the served reasons list them."""
    contrib = np.array([[0.0] * 14 + [0.5]])
    contrib[0, FEATURE_NAMES.index("rsi_14")] = 0.2
    contrib[0, FEATURE_NAMES.index("momentum_5")] = -1e-7
    (stored,) = top_reasons(contrib, FEATURE_NAMES)
    assert stored["top"] == [{"feature": "rsi_14", "contribution": 0.2}]
    legacy = {"base_value": 0.5, "top": [*stored["top"], {"feature": "return_1d", "contribution": 0.0}]}
    shown = served(legacy, 0.7)
    assert shown["inputs"] == [{"input": "RSI (14 days)", "contribution": 0.2}] and shown["other_inputs"] == 0.0
