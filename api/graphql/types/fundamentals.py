from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares


@strawberry.type(description="The latest reported fundamentals of an instrument.")
class Fundamentals:
    report_date: date
    period_end: date | None
    eps: float | None
    book_value_per_share: float | None
    dividend_yield: float | None
    shares_outstanding: Shares | None
    market_cap: float | None
    source: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Fundamentals:
        return cls(**{name: row[name] for name in cls.__annotations__})
