from __future__ import annotations

from enum import Enum
from typing import TypeVar

import strawberry

E = TypeVar("E", bound=Enum)


@strawberry.enum(description="What the model says to do with the instrument.")
class Action(Enum):
    LONG = "LONG"
    HOLD = "HOLD"
    AVOID = "AVOID"


@strawberry.enum(description="Rank among instruments that pass the entry liquidity gates; the rest are ILLIQUID.")
class Tercile(Enum):
    TOP = "TOP"
    MIDDLE = "MIDDLE"
    BOTTOM = "BOTTOM"
    ILLIQUID = "ILLIQUID"


def optional(kind: type[E], value: str | None) -> E | None:
    """The stored text as the GraphQL enum (null stays null)."""
    return kind(value) if value is not None else None
