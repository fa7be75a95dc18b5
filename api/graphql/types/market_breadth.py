from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.schemas.market import UNCHANGED


@strawberry.type(
    description="The day's breadth and the service's capitalisation-weighted index (GET /api/market/breadth)."
)
class MarketBreadth:
    trading_date: date | None
    instruments: int
    traded: int
    advancers: int
    decliners: int
    unchanged: int = strawberry.field(description=UNCHANGED)
    not_traded: int
    index_change_pct: float | None = strawberry.field(
        description="Change of the service's capitalisation-weighted index in percent (not the exchange's official "
        "one)."
    )
    index_market_cap: float | None
    index_constituents: int
    index_excluded: list[str]

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> MarketBreadth:
        return cls(**record)
