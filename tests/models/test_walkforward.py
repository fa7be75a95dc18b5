"""Walk-forward without leakage: tests that would fail if the future reached the past."""

import numpy as np
import pandas as pd

from models.metrics import evaluate
from models.walkforward import WalkForwardConfig, training_rows, walk_forward
from tests.models.synthetic import synthetic_panel, synthetic_prices

CONFIG = WalkForwardConfig(min_train_days=100, full_refit_every=40, full_rounds=40, warm_rounds=8)


def _accuracy(result) -> float:
    return evaluate(result.predictions)["binary_accuracy"]["value"]


def test_shuffled_labels_give_coin_toss_accuracy() -> None:
    panel = synthetic_panel(instruments=30, days=300, signal=1.0)
    rng = np.random.default_rng(0)
    shuffled = panel.assign(forward_return=rng.permutation(panel["forward_return"].to_numpy()))
    accuracy = _accuracy(walk_forward(shuffled, CONFIG))
    assert abs(accuracy - 0.5) <= 0.02, accuracy


def test_a_planted_signal_is_found() -> None:
    planted = _accuracy(walk_forward(synthetic_panel(instruments=20, days=220, signal=1.0), CONFIG))
    none = _accuracy(walk_forward(synthetic_panel(instruments=20, days=220, signal=0.0), CONFIG))
    assert planted > 0.6 and abs(none - 0.5) < 0.03, (planted, none)


def test_changing_prices_after_t_leaves_predictions_up_to_t_unchanged() -> None:
    from models.dataset import build_panel

    prices, sentiment = synthetic_prices(instruments=12, days=200, signal=0.5)
    cut = sorted(prices["date"].unique())[160]
    changed = prices.copy()
    later = changed["date"] > cut
    changed.loc[later, "close"] = changed.loc[later, "close"] * np.random.default_rng(9).uniform(0.5, 2.0, later.sum())
    changed.loc[later, "volume"] = 0
    before = walk_forward(build_panel(prices, 1, sentiment), CONFIG).predictions
    after = walk_forward(build_panel(changed, 1, sentiment), CONFIG).predictions
    columns = ["symbol", "date", "predicted_return", "p_up"]
    early_before = before[before["date"] <= cut][columns].reset_index(drop=True)
    early_after = after[after["date"] <= cut][columns].reset_index(drop=True)
    assert len(early_before) > 400
    pd.testing.assert_frame_equal(early_before, early_after, check_exact=True)
    assert not before[before["date"] > cut]["p_up"].equals(after[after["date"] > cut]["p_up"].reset_index(drop=True))


def test_no_training_label_reaches_the_predicted_block() -> None:
    panel = synthetic_panel(instruments=5, days=200)
    dates = sorted(panel["date"].unique())
    for block_start in (120, 150, 199):
        train = training_rows(panel, dates, block_start, embargo_days=1)
        assert train["label_end"].max() < dates[block_start - 1]  # purged and embargoed


def test_retrains_every_five_days_with_warm_starts_between_full_refits() -> None:
    result = walk_forward(synthetic_panel(instruments=10, days=240), CONFIG)
    starts = [m.block_start for m in result.models]
    dates = sorted(result.predictions["date"].unique())
    assert all(dates.index(b) - dates.index(a) == 5 for a, b in zip(starts, starts[1:]))
    flags = [m.warm_start for m in result.models]
    assert flags[0] is False and flags.count(False) == 4 and flags.count(True) == len(flags) - 4
    assert result.models[1].trees > result.models[0].trees


def test_optuna_tuning_stays_in_budget_and_changes_parameters() -> None:
    config = WalkForwardConfig(
        min_train_days=150, full_refit_every=1000, full_rounds=30, warm_rounds=5, tune_trials=4, tune_timeout_seconds=60
    )
    result = walk_forward(synthetic_panel(instruments=10, days=165), config)
    assert result.models[0].params["num_leaves"] != 15 or result.models[0].params["learning_rate"] != 0.03


def test_a_model_trained_on_one_span_never_sees_a_row_dated_after_its_training_end(monkeypatch) -> None:
    """Every row a booster is fitted on, and every row the block's calibration is fitted
    on, has a label known before the block it scores: its date and its label's date are
    at most the model's training end, which is before the block's first day."""
    from models import calibration, walkforward
    from models.risk import RiskModel

    panel = synthetic_panel(instruments=12, days=260, signal=0.5)
    dates = sorted(panel["date"].unique())
    # a feature that names the day
    panel["market_sentiment"] = panel["date"].map({d: float(i) for i, d in enumerate(dates)})
    column = walkforward.FEATURE_NAMES.index("market_sentiment")
    fitted, calibrated = [], []
    original_fit, original_calibration = RiskModel.fit, calibration.Calibration.fit.__func__

    def recording_fit(self, X, y, *args, **kwargs):
        fitted.append(int(X[:, column].max()))
        return original_fit(self, X, y, *args, **kwargs)

    def recording_calibration(cls, raw, frame, forward_return):
        calibrated.append(max(frame["label_end"]))
        return original_calibration(cls, raw, frame, forward_return)

    monkeypatch.setattr(RiskModel, "fit", recording_fit)
    monkeypatch.setattr(calibration.Calibration, "fit", classmethod(recording_calibration))
    config = WalkForwardConfig(
        min_train_days=100,
        full_refit_every=40,
        full_rounds=20,
        warm_rounds=5,
        first_test_date=dates[180],
        calibration_days=80,
    )
    result = walk_forward(panel, config)
    assert result.warmup_models > 0 and calibrated, "the calibration window was used"
    trained = fitted[result.warmup_models :]
    assert len(trained) == len(result.models)
    for model, last_row_day in zip(result.models, trained):
        assert dates[last_row_day] < model.train_end < model.block_start  # the row's date and its label
    first_scored = result.predictions["date"].min()
    assert first_scored == dates[180] and all(m.block_start >= dates[176] for m in result.models)
    blocks = [m.block_start for m in result.models if m.calibrated]  # calibrations are fitted in block order
    assert blocks and len(calibrated) >= len(blocks)
    for block_start, latest_label in zip(blocks, calibrated[-len(blocks) :]):
        assert latest_label < block_start


def test_without_warm_starts_the_full_refit_is_kept_until_the_next() -> None:
    """The default (warm_rounds=0): between full refits no booster is trained; the kept
    model's recorded window and training end are its full refit's, before every block it
    scores, and its trees do not change."""
    config = WalkForwardConfig(min_train_days=100, full_refit_every=40, full_rounds=20, calibrate=False)
    assert config.warm_rounds == 0
    result = walk_forward(synthetic_panel(instruments=10, days=240), config)
    full = None
    for model in result.models:
        if not model.warm_start:
            full = model
            continue
        assert (model.trees, model.train_end, model.training_rows) == (full.trees, full.train_end, full.training_rows)
        assert model.train_end < model.block_start
    assert sum(not m.warm_start for m in result.models) >= 3 and any(m.warm_start for m in result.models)


def test_zero_warm_rounds_keep_the_parent_boosters() -> None:
    from models.risk import RiskModel, Training

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(1500, 14)), rng.normal(0, 0.01, 1500)
    days = np.arange(len(X)) // 20
    parent = RiskModel().fit(X, y, Training(10), days=days)
    child = RiskModel().fit(X[:700], y[:700], Training(0, warm_from=parent), days=days[:700])
    assert child.classifier is parent.classifier and child.regressor is parent.regressor and child.platt == parent.platt
    np.testing.assert_array_equal(child.predict(X)[1], parent.predict(X)[1])


def test_a_screened_feature_list_is_what_the_model_reads() -> None:
    from models.features import FEATURE_NAMES

    panel = synthetic_panel(instruments=20, days=220, signal=1.0)  # the signal lives in `sentiment`
    panel["noise"] = np.random.default_rng(3).normal(size=len(panel))
    without = tuple("noise" if n == "sentiment" else n for n in FEATURE_NAMES)
    result = walk_forward(panel, WalkForwardConfig(**{**CONFIG.__dict__, "features": without}))
    assert set(result.models[0].importances) == set(without)
    assert abs(_accuracy(result) - 0.5) < 0.03  # the planted signal is not read any more
