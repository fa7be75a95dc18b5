from __future__ import annotations

from datetime import date
from typing import Any

import strawberry


@strawberry.type(description="An FX rate used to convert a value: JMD per unit of the other currency.")
class FxRate:
    pair: str
    periods: list[str]
    rate: float
    release_date: date
    source: str
    note: str | None


@strawberry.type(description="A value as the institution published it, before conversion.")
class OriginalValue:
    value: float
    currency: str
    unit: str


@strawberry.type(
    description="The latest value of a macro indicator, point in time and optionally converted "
    "(GET /api/v1/macro/indicators)."
)
class MacroIndicator:
    source: str
    category: str
    indicator_code: str
    period: str
    frequency: str
    value: float
    unit: str
    currency: str | None
    release_date: date
    original: OriginalValue | None
    fx: list[FxRate]
    note: str | None
    generation: str = strawberry.field(description="The macro data generation label.")

    @classmethod
    def from_item(cls, item: dict[str, Any], generation: str) -> MacroIndicator:
        original = OriginalValue(**item["original"]) if item["original"] else None
        return cls(**{**item, "original": original, "fx": [FxRate(**f) for f in item["fx"]], "generation": generation})
