"""Root queries: thin adapters over the services the REST routers use. Every root field
is nullable, so one failing field leaves the others' answers in place (partial results)."""

from __future__ import annotations

from datetime import date

import strawberry
from pydantic import ValidationError
from sqlalchemy import Connection as DatabaseConnection
from strawberry.types import Info

from api.graphql.pagination import Connection, Page, connection_field, keyed, text
from api.graphql.permissions import MacroInsightsAccess
from api.graphql.scalars import Shares
from api.graphql.types.ai_portfolio import AIPortfolio
from api.graphql.types.day_analysis import DayAnalysis
from api.graphql.types.enums import Action, Tercile
from api.graphql.types.instrument import Instrument
from api.graphql.types.macro_indicator import MacroIndicator
from api.graphql.types.macro_insights import MacroInsights
from api.graphql.types.market_breadth import MarketBreadth
from api.graphql.types.model_performance import ModelPerformance
from api.graphql.types.portfolio import Portfolio
from api.graphql.types.trade_preview import TradePreview
from api.schemas.portfolio import TradePreviewIn
from api.security import caller_portfolio_on
from desk import PortfolioValuation
from desk import TradePreview as PreviewShape
from market.errors import InvalidInputError, NotFoundError
from market.text import asked_symbol

INSTRUMENTS = Page("instruments", default=50, largest=200, key=text)
MACRO = Page("macroIndicators", default=50, largest=200, key=keyed(text, text))  # source, indicator code


@strawberry.type
class Query:
    @connection_field(
        "The instruments listed on the latest closed trading day (a delisted one is read with "
        "`instrument(symbol)`), by symbol, filtered by board, sector, the latest prediction's "
        "tercile and action, and whether they pass the liquidity rail's entry gates today."
    )
    async def instruments(
        self,
        info: Info,
        board: str | None = None,
        sector: str | None = None,
        tercile: Tercile | None = None,
        action: Action | None = None,
        liquid: bool | None = None,
        first: int | None = INSTRUMENTS.default,
        after: str | None = None,
    ) -> Connection[Instrument] | None:
        ctx = info.context
        INSTRUMENTS.size(first)
        rows = await ctx.read(ctx.svc.desk.instruments)
        rows = [
            r
            for r in rows
            if (board is None or r["board"].upper() == board.upper())
            and (sector is None or (r["sector"] or "").lower() == sector.lower())
        ]
        keys = [(r["symbol"],) for r in rows]
        if tercile is not None or action is not None:
            predictions = await ctx.loaders.latest_prediction.load_many(keys)
            rows = [
                r
                for r, p in zip(rows, predictions)
                if p is not None
                and (tercile is None or p.tercile == tercile.value)
                and (action is None or p.action == action.value)
            ]
            keys = [(r["symbol"],) for r in rows]
        if liquid is not None:
            gates = await ctx.loaders.liquidity.load_many(keys)
            rows = [r for r, g in zip(rows, gates) if (g is not None and g["passes_entry_gates"]) == liquid]
        return INSTRUMENTS.connection(rows, lambda r: r["symbol"], first, after, Instrument.from_row)

    @strawberry.field(
        description="One instrument by symbol (case-insensitive). A symbol that is not listed is an "
        "error with extensions.code NOT_FOUND (and null data), as REST answers 404."
    )
    async def instrument(self, info: Info, symbol: str) -> Instrument | None:
        wanted = asked_symbol(symbol.strip())
        row = await info.context.loaders.instrument.load((wanted,))
        if not row:
            raise NotFoundError(f"no instrument '{wanted[:20]}' is listed; `instruments` lists the symbols")
        return Instrument.from_row(row)

    @strawberry.field(description="The caller's portfolio (the admin key's is the house portfolio).")
    async def portfolio(self, info: Info) -> Portfolio | None:
        ctx = info.context
        svc, caller = ctx.svc, ctx.principal

        # one connection: the portfolio, its version, its summary and valuation
        def valued(conn: DatabaseConnection) -> tuple[dict, PortfolioValuation]:
            return svc.desk.portfolio(conn, caller_portfolio_on(conn, svc, caller))

        summary, view = await ctx.read(valued)
        return Portfolio.build(summary, view.positions)

    @strawberry.field(
        description="What the cost model says `quantity` shares would cost in a session like the latest, as GET "
        "/api/portfolio/trade/preview answers; nothing is stored. Refused as booking the order is, with the same "
        "message and extensions.code BAD_USER_INPUT (REST's 422), e.g. a name with no close to price it from."
    )
    async def trade_preview(self, info: Info, side: str, symbol: str, quantity: Shares) -> TradePreview | None:
        ctx = info.context
        checked = _preview_order(side, symbol, quantity)

        def previewed(conn: DatabaseConnection) -> PreviewShape:  # the caller's portfolio, on the read's connection
            return ctx.svc.desk.preview_trade(conn, *checked, caller_portfolio_on(conn, ctx.svc, ctx.principal))

        return TradePreview.from_preview(await ctx.read(previewed))

    @strawberry.field(description="The autonomous AI portfolio.")
    async def ai_portfolio(self, info: Info) -> AIPortfolio | None:
        summary, positions = await info.context.read(info.context.svc.desk.ai_portfolio)  # one connection
        return AIPortfolio.build(summary, positions)

    @strawberry.field(
        description="Advancers, decliners, unchanged and untraded stocks and the service's index change "
        "for the latest delivered day, or `date`."
    )
    async def market_breadth(self, info: Info, date: date | None = None) -> MarketBreadth | None:
        # the REST route's read model: one entry per data version
        return MarketBreadth.from_record(await info.context.value(info.context.svc.desk.breadth, date))

    @strawberry.field(
        description="The day's written analysis and its notifications (the latest analysed day, or `date`)."
    )
    async def analysis(self, info: Info, date: date | None = None) -> DayAnalysis | None:
        return DayAnalysis.from_record(await info.context.read(info.context.svc.desk.analysis, date))

    @strawberry.field(
        description="The model's validation and live out-of-sample records, side by side, with base rates."
    )
    async def model_performance(self, info: Info) -> ModelPerformance | None:
        return ModelPerformance.from_record(await info.context.value(info.context.svc.desk.performance))

    @connection_field(
        "The latest value of every macro indicator with the REST filters: source, category, "
        "currency (converts money values) and asOf (values as known at the end of that day; null: as known today)."
    )
    async def macro_indicators(
        self,
        info: Info,
        source: str | None = None,
        category: str | None = None,
        currency: str | None = None,
        as_of: date | None = None,
        first: int | None = MACRO.default,
        after: str | None = None,
    ) -> Connection[MacroIndicator] | None:
        body = await info.context.value(info.context.svc.desk.macro_indicators, source, category, currency, as_of)
        return MACRO.connection(
            body["indicators"],
            lambda i: (i["source"], i["indicator_code"]),
            first,
            after,
            lambda i: MacroIndicator.from_item(i, body["generation"]),
        )

    @strawberry.field(
        description="PRO, INSTITUTIONAL or macro access on: the week's macro parameters.",
        permission_classes=[MacroInsightsAccess],
    )
    async def macro_insights(self, info: Info) -> MacroInsights | None:
        return MacroInsights.from_record(await info.context.read(info.context.svc.desk.macro_insights))


def _preview_order(side: str, symbol: str, quantity: int) -> tuple[str, str, int]:
    """`tradePreview`'s arguments by REST's rules (`TradePreviewIn`), else InvalidInputError."""
    try:
        checked = TradePreviewIn.model_validate({"side": side, "symbol": symbol, "quantity": quantity})
    except ValidationError as error:
        said = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors())
        raise InvalidInputError(f"the input failed validation: {said}") from None
    return checked.side, checked.symbol, checked.quantity
