from __future__ import annotations

from api.graphql.types.derived import derived, from_domain
from desk import TradePreview as PreviewShape


@derived(
    PreviewShape,
    "What the one cost model says an order would cost (GET /api/portfolio/trade/preview's answer); nothing is "
    "stored. `price` is held within the day's band a booking passes (`priceBound`, `priceNote`).",
)
class TradePreview:
    @classmethod
    def from_preview(cls, preview: PreviewShape) -> TradePreview:
        return from_domain(cls, preview)
