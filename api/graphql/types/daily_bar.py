from __future__ import annotations

from datetime import date
from typing import Any

import strawberry


@strawberry.type(description="One trading day of an instrument with its technical indicators (the REST history's bar).")
class DailyBar:
    trading_date: date
    open: float | None
    high: float | None
    low: float | None
    close: float
    volume: int
    bid: float | None = strawberry.field(description="Closing bid.")
    ask: float | None = strawberry.field(description="Closing ask.")
    rsi_14: float | None = strawberry.field(description="Wilder's 14-day RSI.")
    bollinger_pct_b: float | None
    bollinger_bandwidth: float | None
    momentum_5: float | None
    momentum_20: float | None
    volatility_20: float | None
    volume_ratio_20: float | None = strawberry.field(description="Volume over ADV_20.")
    spread_pct: float | None

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> DailyBar:
        return cls(**item)
