"""Walk-forward without leakage: tests that would fail if the future reached the past."""
import numpy as np
import pandas as pd
import pytest

from models.metrics import evaluate
from models.walkforward import WalkForwardConfig, training_rows, walk_forward
from tests.models.synthetic import synthetic_panel, synthetic_prices

CONFIG = WalkForwardConfig(min_train_days=100, full_refit_every=40, full_rounds=40, warm_rounds=8)


def _accuracy(result) -> float:  # noqa: ANN001
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
    assert result.models[1].model.classifier.num_trees() > result.models[0].model.classifier.num_trees()


def test_optuna_tuning_stays_in_budget_and_changes_parameters() -> None:
    config = WalkForwardConfig(min_train_days=150, full_refit_every=1000, full_rounds=30, warm_rounds=5,
                               tune_trials=4, tune_timeout_seconds=60)
    result = walk_forward(synthetic_panel(instruments=10, days=165), config)
    assert result.models[0].params["num_leaves"] != 15 or result.models[0].params["learning_rate"] != 0.03
