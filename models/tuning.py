"""Optuna tuning of the risk model on inner walk-forward folds of a training window.

The window's dates are cut into `folds + 1` consecutive parts; fold k trains on parts
0..k and validates on part k + 1 (with the same purge as the outer loop). The objective
is the mean validation log-loss of the up/down classifier. Seeded TPE, bounded by a trial
count and a time budget; the best parameters found so far are returned.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from models.features import FEATURE_NAMES
from models.risk import RiskModel, Training


def tune(train: pd.DataFrame, config, base_params: dict, folds: int = 3) -> dict:  # noqa: ANN001
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    names = list(config.features or FEATURE_NAMES)
    dates = sorted(train["date"].unique())
    edges = [dates[int(len(dates) * k / (folds + 1))] for k in range(1, folds + 1)] + [dates[-1]]

    def objective(trial: optuna.Trial) -> float:
        params = {
            **base_params,
            "num_leaves": trial.suggest_int("num_leaves", 7, 63, log=True),
            "min_data_in_leaf": trial.suggest_int("min_data_in_leaf", 50, 1000, log=True),
            "learning_rate": trial.suggest_float("learning_rate", 0.01, 0.1, log=True),
            "feature_fraction": trial.suggest_float("feature_fraction", 0.5, 1.0),
            "lambda_l2": trial.suggest_float("lambda_l2", 0.1, 50.0, log=True),
        }
        losses = []
        for start, end in zip(edges[:-1], edges[1:]):
            fit = train[train["label_end"] < start]
            valid = train[(train["date"] >= start) & (train["date"] < end)]
            if len(fit) < 500 or len(valid) < 100:
                continue
            model = RiskModel(params=params).fit(
                fit[names].to_numpy(float),
                fit["forward_return"].to_numpy(float),
                Training(max(50, config.full_rounds // 2), target=config.target),
                days=fit["date"].to_numpy(),
            )
            losses.append(_loss(model, valid, names, config.target))
        return float(np.mean(losses)) if losses else float("inf")

    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=7))
    study.optimize(objective, n_trials=config.tune_trials, timeout=config.tune_timeout_seconds)
    if not np.isfinite(study.best_value):
        return base_params
    return {**base_params, **study.best_params}


def _loss(model: RiskModel, valid: pd.DataFrame, names: list[str], target: str) -> float:
    """What a fold scores: minus the mean daily rank correlation of the raw score with the
    label for the rank target, the log loss of the booster's P(up) for the sign target."""
    if target == "rank":
        scored = valid.assign(raw=model.raw_score(valid[names].to_numpy(float)))
        daily = scored.groupby("date").apply(
            lambda d: d["raw"].corr(d["forward_return"], method="spearman") if len(d) >= 5 else np.nan,
            include_groups=False,
        )
        return float(-np.nanmean(daily)) if daily.notna().any() else float("inf")
    _, p = model.predict(valid[names].to_numpy(float))
    up = (valid["forward_return"] > 0).to_numpy(float)
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(up * np.log(p) + (1 - up) * np.log(1 - p)))
