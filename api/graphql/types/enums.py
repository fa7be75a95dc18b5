from __future__ import annotations

from enum import Enum

import strawberry


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
