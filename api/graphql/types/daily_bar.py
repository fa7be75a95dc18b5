from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares


@strawberry.type(
    description="One trading day of an instrument with its technical indicators (the REST history's bar): the prices "
    "and the volume as traded, the returns and indicators split-adjusted (each day's read the bars before it on that "
    "day's share count, so a split's ex-date reads the move net of the split)."
)
class DailyBar:
    trading_date: date
    open: float | None
    high: float | None
    low: float | None
    close: float
    volume: Shares
    bid: float | None = strawberry.field(description="Closing bid.")
    ask: float | None = strawberry.field(description="Closing ask.")
    rsi_14: float | None = strawberry.field(description="Wilder's 14-day RSI, 0-100.")
    bollinger_pct_b: float | None = strawberry.field(
        description="Bollinger %B (20 days, 2 sd): where the close sits in the bands, a fraction (0 = lower band, 1 = "
        "upper)."
    )
    bollinger_bandwidth: float | None = strawberry.field(
        description="Bollinger bandwidth (20 days, 2 sd): band width over the middle band, a fraction."
    )
    momentum_5: float | None = strawberry.field(description="Return over 5 trading days, a fraction (0.021 = 2.1%).")
    momentum_20: float | None = strawberry.field(description="Return over 20 trading days, a fraction.")
    volatility_20: float | None = strawberry.field(
        description="Standard deviation (population, ddof 0) of daily log returns over 20 trading days, not "
        "annualised, a fraction (the model's input; the statistics' variance windows are sample variances)."
    )
    volume_ratio_20: float | None = strawberry.field(
        description="Volume over ADV_20 (the 20-day mean volume), a ratio."
    )
    spread_pct: float | None = strawberry.field(
        description="Closing spread in percent: (ask - bid) / mid x 100 from the quotes, else the day's range over "
        "the close on a traded day (market/liquidity.py); null on a day without trades and without quotes (its high "
        "and low repeat the last close: no spread)."
    )

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> DailyBar:
        return cls(**item)
