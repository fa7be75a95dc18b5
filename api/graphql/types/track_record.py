from __future__ import annotations

from decimal import Decimal
from typing import Any

import strawberry
from strawberry.scalars import JSON

from portfolio.track_record import MOSTLY_CASH_EXPOSURE


@strawberry.type(description="The book beside one benchmark over the same days (fractions; 250 trading days a year).")
class BenchmarkComparison:
    name: str = strawberry.field(
        description="equal_weight_liquid: the names that passed the entry gates at the month's "
        "start, held equally through the month; index: the exchange's "
        "published index where stored, else the service's "
        "capitalisation-weighted index (TrackRecord.indexSource)."
    )
    total_return: float | None
    annual_return: float | None
    excess_annual_return: float | None
    tracking_error: float | None
    information_ratio: float | None
    beta: float | None
    alpha: float | None


@strawberry.type(description="Costs the book paid, in the market's currency, and their share of mean equity a year.")
class CostsPaid:
    fees: Decimal
    spread: Decimal
    impact: Decimal
    total: Decimal
    share_of_equity_per_year: float | None


@strawberry.type(
    description="Track-record statistics (GET /api/ai-portfolio/track-record): empyrical-reloaded's "
    "figures, fractions not percent."
)
class TrackRecord:
    days: int
    first: str | None
    last: str | None
    total_return: float | None
    annual_return: float | None
    annual_volatility: float | None
    sharpe: float | None
    sortino: float | None
    max_drawdown: float | None
    calmar: float | None
    annual_turnover: float | None
    trades: int | None
    fill_count: int | None = strawberry.field(
        description=(
            "Fills in the span: the AI portfolio's trades; a client's trades except the shares a statement sync booked."
        )
    )
    average_exposure: float | None = strawberry.field(
        description=(
            "What the book held: the mean over the days of market value / equity at the close, a fraction (0 all "
            "cash, 1 fully invested). The benchmarks are fully invested."
        )
    )
    mostly_cash: bool | None = strawberry.field(
        description=(
            f"True when the average exposure is under {MOSTLY_CASH_EXPOSURE:.0%}: the figures against the "
            "benchmarks describe holding cash, not skill (note says so in words)."
        )
    )
    note: str | None = strawberry.field(description="Plain words when mostlyCash is true, else null.")
    reason: str | None = strawberry.field(
        description=(
            "Why there are no statistics, when there are none: e.g. no trades or cash movements yet, or too few "
            "market days since the first."
        )
    )
    costs: CostsPaid | None
    benchmarks: list[BenchmarkComparison]
    index_source: str | None = strawberry.field(
        description=(
            "What the index benchmark is: the symbol of the index the exchange published (e.g. ^NASI), or cap_weighted "
            "(the service's capitalisation-weighted index); null without one."
        )
    )
    records: JSON | None = strawberry.field(
        description=(
            "The AI portfolio only: the same statistics over the days replayed on the validation record and over the "
            "live days, apart (as REST serves them)."
        )
    )

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TrackRecord:
        plain = {
            name: record.get(name)
            for name in (
                "first",
                "last",
                "total_return",
                "annual_return",
                "annual_volatility",
                "sharpe",
                "sortino",
                "max_drawdown",
                "calmar",
                "annual_turnover",
                "trades",
                "fill_count",
                "average_exposure",
                "mostly_cash",
                "note",
                "reason",
                "index_source",
            )
        }
        costs = record.get("costs")
        money = {k: Decimal(str(v)) for k, v in (costs or {}).items() if k != "share_of_equity_per_year"}
        return cls(
            days=record.get("days", 0),
            **plain,
            costs=CostsPaid(**money, share_of_equity_per_year=costs.get("share_of_equity_per_year")) if costs else None,
            records=record.get("records"),
            benchmarks=[
                BenchmarkComparison(
                    name=name,
                    **{
                        k: figures.get(k)
                        for k in (
                            "total_return",
                            "annual_return",
                            "excess_annual_return",
                            "tracking_error",
                            "information_ratio",
                            "beta",
                            "alpha",
                        )
                    },
                )
                for name, figures in record.get("benchmarks", {}).items()
            ],
        )
