from __future__ import annotations

from datetime import date
from typing import Any

import strawberry
from strawberry.scalars import JSON


@strawberry.type(description="One executed day of the AI portfolio: orders, what the rails blocked or cut.")
class AIDay:
    trading_date: date
    model_id: str | None
    equity: float
    liquid_equity: float
    cash: float
    summary: JSON

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AIDay:
        return cls(**{name: row[name] for name in cls.__annotations__})
