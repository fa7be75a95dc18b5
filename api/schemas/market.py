"""Bodies of the market endpoints."""
from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


class LatestQuote(BaseModel):
    """One ticker's latest day and its prediction; prediction fields are null with a
    `reason` when the day is not scored for the ticker."""

    trading_date: date = Field(description="Date of the ticker's last bar (older than the market day when it did not trade).")
    close: float
    volume: int = Field(description="Shares traded on the market day (0 when it did not trade).")
    change_pct: float | None = Field(description="Close over the previous close - 1, in percent.")
    rsi: float | None = Field(description="Wilder's 14-day RSI.")
    predicted_return: float | None
    score: float | None = Field(description="0-100 calibrated conviction that the close rises over the horizon.")
    action: str | None = Field(description="LONG, HOLD or AVOID.")
    tercile: str | None = Field(description="TOP, MIDDLE, BOTTOM or ILLIQUID.")
    model_id: str | None
    layer1_backend: str | None = Field(description="Foundation-model backend; `fallback-...` names the labelled fallback.")
    reason: str | None = Field(description="Why the prediction fields are null.")


LATEST_EXAMPLE = {"NCBFG": {
    "trading_date": "2026-11-20", "close": 101.5, "volume": 125000, "change_pct": 1.25, "rsi": 56.3,
    "predicted_return": 0.0021, "score": 58.4, "action": "HOLD", "tercile": "TOP", "model_id": "risk-2026-11-20-h1-warm",
    "layer1_backend": "fallback-empirical-v1", "reason": None}}


class VarianceWindow(BaseModel):
    variance: float | None = Field(description="Sample variance of daily log returns over the window; null when shorter.")
    annualised_volatility: float | None = Field(description="sqrt(variance x 252).")
    observations: int


class Normalised(BaseModel):
    value: float | None = Field(description="The latest value.")
    mean: float | None = Field(description="Mean of the instrument's earlier values.")
    std: float | None
    z: float | None = Field(description="(value - mean) / std; null with fewer than 21 observations or no dispersion.")
    observations: int


class SymbolStatistics(BaseModel):
    symbol: str
    as_of: date
    observations: int
    variance: dict[str, VarianceWindow] = Field(description="Keyed by window: 20d, 60d, 120d, 250d.")
    normalised: dict[str, Normalised] = Field(
        description="return_1d, volume, day_range_pct, spread_pct, rsi_14, volatility_20 against the instrument's own history.")


class Bar(BaseModel):
    trading_date: date
    open: float | None
    high: float | None
    low: float | None
    close: float
    volume: int
    bid: float | None
    ask: float | None
    rsi_14: float | None
    bollinger_pct_b: float | None
    bollinger_bandwidth: float | None
    momentum_5: float | None
    momentum_20: float | None
    volatility_20: float | None
    volume_ratio_20: float | None
    spread_pct: float | None


class History(BaseModel):
    symbol: str
    items: list[Bar]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")
