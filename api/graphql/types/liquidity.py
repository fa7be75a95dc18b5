from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares


@strawberry.type(
    description="The liquidity rail's per-instrument entry gates on the latest market day (portfolio/rails.py)."
)
class Liquidity:
    trading_date: date
    adv_20: float | None = strawberry.field(description="Mean volume of the last 20 bars; null with fewer than 20.")
    volume: Shares
    spread: float | None = strawberry.field(description="Closing spread as a fraction of the mid (or the day's range).")
    spread_source: str = strawberry.field(description="quotes, range or none.")
    passes_entry_gates: bool
    failed_gates: list[str] = strawberry.field(description="adv_20, volume_today, spread: the gates that failed.")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Liquidity:
        return cls(**{name: row[name] for name in cls.__annotations__})
