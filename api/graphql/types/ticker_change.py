from __future__ import annotations

from api.graphql.types.derived import derived
from desk import TickerChange as Declared


@derived(
    Declared,
    "A ticker change of the company (a RENAME corporate action): the other ticker and the ex-date, the first "
    "session under the new ticker.",
)
class TickerChange:
    """store/splits.py `TickerChange`, every field of it (derived)."""
