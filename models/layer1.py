"""Layer 1: a time-series foundation model's probability of an up move, from the last
200 closes of an instrument, behind one small interface (`Layer1Backend`).

Backends:
- `ChronosBolt`: Chronos-Bolt through `chronos-forecasting`, from a local folder or a hub
  id; with offline mode on (the default) only a local folder is used, never a download.
  It forecasts quantiles of the close `horizon` days ahead; P(up) is read off them by
  linear interpolation of the forecast distribution at today's close.
- `EmpiricalFallback` (`fallback-empirical-v2`): used when no weights are available, and
  labelled as such everywhere its output goes. It is a real model, estimated on the same
  200-close window only: the share of rising `horizon`-day moves among those that followed
  a `horizon`-day move in the same direction as the latest one (up, down or unchanged),
  Laplace-smoothed: (ups + 1) / (ups + downs + 2), unchanged outcomes not counted. It is
  the instrument's own continuation or reversal rate (in a thin market, how strongly its
  bid-ask bounce undoes a move), which the risk model's other inputs, pooled over every
  instrument, do not carry. v1 was the unconditional share of rising moves in the window;
  v2 was chosen on the NSE early span (scored 2008-2011, docs/model-appendix-rounds.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from market.errors import ConfigurationError
from market.windows import Runs

log = logging.getLogger(__name__)
WINDOW = 200
QUANTILE_LEVELS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


class Layer1Backend(Protocol):
    model_id: str
    backend: str
    is_fallback: bool

    def p_up(self, windows: list[np.ndarray], horizon: int) -> np.ndarray: ...


class EmpiricalFallback:
    model_id = "fallback-empirical-v2"
    backend = "fallback-empirical"
    is_fallback = True

    def p_up(self, windows: list[np.ndarray], horizon: int) -> np.ndarray:
        out = np.empty(len(windows))
        for i, window in enumerate(windows):
            closes = np.asarray(window, dtype=float)[-WINDOW:]
            if len(closes) <= horizon:
                out[i] = 0.5
                continue
            moves = closes[horizon:] - closes[:-horizon]  # moves[j]: the move ending at close j + horizon
            state = np.sign(moves[-1])
            before, after = moves[:-horizon], moves[horizon:]  # a move and the one that followed it
            same = np.sign(before) == state
            out[i] = ((after[same] > 0).sum() + 1) / ((after[same] != 0).sum() + 2)
        return out


def empirical_p_up_series(closes: pd.Series, horizon: int, runs: Runs | None = None) -> pd.Series:
    """`EmpiricalFallback` for every day at once (same numbers, fast): the window of day t
    is the 200 closes ending at t. `closes`: one instrument's, oldest first, or many
    instruments' sorted by instrument, then date, with `runs` saying where each starts
    (market/windows.py)."""
    runs = runs if runs is not None else Runs.of(pd.DataFrame(index=closes.index))
    moves = closes - runs.shift(closes, horizon)  # the move ending at each day
    state = np.sign(moves)
    following = runs.shift(moves, -horizon)  # the move that followed it (counted only once known, below)
    span = WINDOW - 2 * horizon  # pairs of moves inside a 200-close window
    ups = pd.Series(0.0, index=closes.index)
    moved = pd.Series(0.0, index=closes.index)
    for value in (-1.0, 0.0, 1.0):
        match = state == value
        # pair started at day j, known at day j + horizon: shift so it counts from then on
        ups_in = runs.rolling(runs.shift((match & (following > 0)).astype(float), horizon), span, 0).sum()
        moved_in = runs.rolling(
            runs.shift((match & (following != 0) & following.notna()).astype(float), horizon), span, 0
        ).sum()
        ups = ups.where(~match, ups_in)
        moved = moved.where(~match, moved_in)
    return ((ups + 1) / (moved + 2)).where(state.notna(), 0.5)


class ChronosBolt:
    backend = "chronos-bolt"
    is_fallback = False

    def __init__(self, source: str, offline: bool = True, batch_size: int = 256) -> None:
        local = Path(source).expanduser()
        if offline and not local.is_dir():
            raise ConfigurationError(f"foundation model '{source}' is not a local folder and offline mode is on")
        from chronos import BaseChronosPipeline  # imported here: torch loads only when used

        self.pipeline = BaseChronosPipeline.from_pretrained(
            str(local) if local.is_dir() else source, device_map="cpu", local_files_only=offline
        )
        self.model_id = f"chronos-bolt:{local.name if local.is_dir() else source}"
        self.batch_size = batch_size

    def p_up(self, windows: list[np.ndarray], horizon: int) -> np.ndarray:
        import torch

        out = []
        for start in range(0, len(windows), self.batch_size):
            batch = [
                torch.tensor(np.asarray(w, dtype=np.float32)[-WINDOW:])
                for w in windows[start : start + self.batch_size]
            ]
            quantiles, _ = self.pipeline.predict_quantiles(
                batch, prediction_length=horizon, quantile_levels=QUANTILE_LEVELS
            )
            at_horizon = quantiles[:, horizon - 1, :].numpy()
            out.extend(p_up_from_quantiles(q, float(w[-1])) for q, w in zip(at_horizon, windows[start:]))
        return np.array(out)


def p_up_from_quantiles(values: np.ndarray, current: float, levels: list[float] = QUANTILE_LEVELS) -> float:
    """P(close after the horizon > current) from forecast quantiles: the forecast CDF is
    linear between the quantiles (sorted, so crossing quantiles cannot make it decrease)
    and the tails beyond the outer quantiles hold their 10% each, clipped to [0.01, 0.99]."""
    values = np.sort(np.asarray(values, dtype=float))
    cdf = float(np.interp(current, values, levels, left=levels[0] / 2, right=1 - (1 - levels[-1]) / 2))
    return float(np.clip(1 - cdf, 0.01, 0.99))


def load_layer1(source: str, offline: bool) -> Layer1Backend:
    """Chronos-Bolt when its weights can be loaded, else the labelled fallback."""
    try:
        return ChronosBolt(source, offline)
    except Exception as exc:  # noqa: BLE001 - any loading failure means "no weights here"
        log.warning("layer 1 falls back to %s: %s", EmpiricalFallback.model_id, exc)
        return EmpiricalFallback()


def save_random_chronos_bolt(folder: Path, d_model: int = 32, layers: int = 1, seed: int = 0) -> Path:
    """Save a Chronos-Bolt with the real architecture and random weights to `folder`: how
    tests and benchmarks exercise the real loading and forecasting code with no download
    (its forecasts mean nothing; its cost and interfaces are real)."""
    import torch
    from chronos.chronos_bolt import ChronosBoltModelForForecasting
    from transformers import T5Config

    config = T5Config(
        d_model=d_model,
        d_ff=4 * d_model if d_model > 32 else 64,
        num_layers=layers,
        num_decoder_layers=layers,
        num_heads=max(2, d_model // 64),
        d_kv=16 if d_model <= 32 else 64,
        dense_act_fn="relu",
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        chronos_pipeline_class="ChronosBoltPipeline",
        architectures=["ChronosBoltModelForForecasting"],
        chronos_config={
            "context_length": 512,
            "prediction_length": 64,
            "input_patch_size": 16,
            "input_patch_stride": 16,
            "quantiles": QUANTILE_LEVELS,
            "use_reg_token": True,
        },
    )
    torch.manual_seed(seed)
    ChronosBoltModelForForecasting(config).save_pretrained(folder)
    return Path(folder)
