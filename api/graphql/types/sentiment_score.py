from __future__ import annotations

from datetime import date
from typing import Any

import strawberry


@strawberry.type(
    description="The day's sentiment composite of an instrument (decayed, source-weighted mean of its texts)."
)
class SentimentScore:
    trading_date: date
    method: str
    score: float
    item_count: int

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SentimentScore:
        return cls(**{name: row[name] for name in cls.__annotations__})
