from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON

MONEY = {"equity", "liquid_equity", "cash"}


@strawberry.type(description="One executed day of the AI portfolio: orders, what the rails blocked or cut.")
class AIDay:
    trading_date: date
    model_id: str | None
    equity: Decimal
    liquid_equity: Decimal
    cash: Decimal
    summary: JSON

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AIDay:
        return cls(**{name: Decimal(str(row[name])) if name in MONEY else row[name] for name in cls.__annotations__})
