from __future__ import annotations

from datetime import date
from typing import Any

import strawberry

from api.graphql.scalars import Shares


@strawberry.type(description="The latest reported fundamentals of an instrument, each as of its reportDate.")
class Fundamentals:
    report_date: date
    period_end: date | None
    eps: float | None
    book_value_per_share: float | None
    dividend_yield_pct: float | None = strawberry.field(
        description="The dividend yield in percent (5.56 is 5.56%), as the exchange reported it on reportDate."
    )
    shares_outstanding: Shares | None = strawberry.field(
        description="As reported on reportDate: a split or bonus issue since is not in it."
    )
    market_cap: float | None = strawberry.field(
        description="As reported on reportDate, in the instrument's currency (not today's price times shares)."
    )
    source: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Fundamentals:
        """The stored row (its `dividend_yield` is the exchange's "Dividend Yield %" column)."""
        named = {"dividend_yield_pct": "dividend_yield"}
        return cls(**{name: row[named.get(name, name)] for name in cls.__annotations__})
