from __future__ import annotations

from datetime import date

import strawberry
from strawberry.scalars import JSON

from api.contract import JsonOf
from api.graphql.scalars import Money
from api.graphql.types.derived import document, printed
from desk import domain


@strawberry.type(description="One executed day of the AI portfolio: orders, what the rails blocked or cut.")
class AIDay:
    trading_date: date
    model_id: str | None
    equity: Money
    liquid_equity: Money
    cash: Money
    summary: JSON = document(JsonOf[domain.ExecutedDay])

    @classmethod
    def from_row(cls, row: domain.AIDay) -> AIDay:
        """views/portfolio.py's executed day, its record printed by its declared type (an
        `ExecutedDay`'s JSON form)."""
        fields = {name: row[name] for name in cls.__annotations__ if name != "summary"}
        return cls(**fields, summary=printed(cls, "summary", row["summary"]))
