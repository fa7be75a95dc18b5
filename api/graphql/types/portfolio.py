from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql.pagination import Connection, Page, connection_field, text
from api.graphql.scalars import Money
from api.graphql.types.cash_movement import CashMovement
from api.graphql.types.derived import document, printed
from api.graphql.types.position import Position
from api.graphql.types.suggestion import Suggestion
from api.graphql.types.track_record import TrackRecord
from api.graphql.types.trade import Trade
from api.paging import CASH, SUGGESTIONS, TRADES, suggestion_key
from desk import ILLIQUID_DISCOUNTS, PositionValue

POSITIONS = Page("positions", default=100, largest=500, key=text, owned=True)


# Illiquid discounts by ticker, money (their declared type, as REST's `Money`): decimal text to
# the cent. They travel in a JSON scalar, which would print the valuation's floats.
DISCOUNTS = dict[str, Money]


@strawberry.type(
    description="The caller's portfolio valued at the latest close (the admin key's is the house portfolio)."
)
class Portfolio:
    portfolio_id: str
    as_of: date
    cash: Decimal
    market_value: Decimal
    equity: Decimal = strawberry.field(description="Cash plus positions at the latest close.")
    liquid_equity: Decimal = strawberry.field(description="Equity less the discounts of positions that cannot be sold.")
    illiquid_discounts: JSON = document(DISCOUNTS, ILLIQUID_DISCOUNTS)
    unrealized_pnl: Decimal
    realized_pnl: Decimal
    positions_count: int
    dividends_receivable: Decimal = strawberry.field(
        description="The part of cash credited for dividends whose payment date is still to come: it counts in "
        "equity, can buy, but cannot be withdrawn before it is paid."
    )
    cash_weight: float = strawberry.field(description="Cash's share of equity.")
    open_positions: strawberry.Private[tuple[PositionValue, ...]]

    @classmethod
    def build(cls, summary: dict[str, Any], positions: tuple[PositionValue, ...]) -> Portfolio:
        """From `views.portfolio.summarise` of a valuation and the valuation's positions."""
        cash = next(a["weight"] for a in summary["allocation"] if a["symbol"] == "CASH")
        fields = {name: summary[name] for name in cls.__annotations__ if name in summary}
        fields["illiquid_discounts"] = printed(cls, "illiquid_discounts", summary["illiquid_discounts"])
        return cls(**fields, cash_weight=cash, open_positions=positions)

    @connection_field("Open positions by ticker.")
    def positions(self, first: int | None = POSITIONS.default, after: str | None = None) -> Connection[Position] | None:
        return POSITIONS.of(self.portfolio_id).connection(
            self.open_positions, lambda p: p.symbol, first, after, lambda p: Position.from_value(p, self.equity)
        )

    @strawberry.field(
        description="Return, risk, turnover and fees since the first movement, beside the equal-weighted "
        "liquid universe and the service's index (GET /api/portfolio/track-record)."
    )
    async def track_record(self, info: Info) -> TrackRecord:
        # the REST route's read model: one build per version, one running per client
        return TrackRecord.from_record(await info.context.value(info.context.svc.desk.track_record, self.portfolio_id))

    @connection_field("Trades in the order the book recorded them (GET /api/portfolio/trade's pages).")
    async def trades(
        self, info: Info, first: int | None = TRADES.default, after: str | None = None
    ) -> Connection[Trade] | None:
        desk = info.context.svc.desk
        return await info.context.read_page(
            TRADES.of(self.portfolio_id), first, after, Trade.from_row, desk.trades, self.portfolio_id
        )

    @connection_field(
        "Cash movements in the order the book recorded them, with the balance after each "
        "(GET /api/portfolio/cash's pages)."
    )
    async def cash_movements(
        self, info: Info, first: int | None = CASH.default, after: str | None = None
    ) -> Connection[CashMovement] | None:
        desk = info.context.svc.desk
        return await info.context.read_page(
            CASH.of(self.portfolio_id), first, after, CashMovement.from_row, desk.cash_movements, self.portfolio_id
        )

    @connection_field("Pending morning suggestions (expired ones are not listed).")
    async def suggestions(
        self, info: Info, first: int | None = SUGGESTIONS.default, after: str | None = None
    ) -> Connection[Suggestion] | None:
        rows = await info.context.value(info.context.svc.desk.pending_suggestions, self.portfolio_id)
        return SUGGESTIONS.of(self.portfolio_id).connection(rows, suggestion_key, first, after, Suggestion.from_row)
