from __future__ import annotations

from api.graphql.types.derived import derived, from_domain
from desk import PlacedTrade


@derived(PlacedTrade, "A manual trade recorded (or, for a retried idempotency key, the first result replayed).")
class TradePlaced:
    @classmethod
    def from_placed(cls, placed: PlacedTrade) -> TradePlaced:
        """The API's fields of the one declaration (portfolio/trading.py `PlacedTrade`), as
        typed values: a date is a date (the JSON form's text made the Date scalar fail after
        the trade was booked)."""
        return from_domain(cls, placed)
