"""The track record in GraphQL: portfolio/track_record.py's `TrackRecord`, field for field
in camelCase (REST serves the same fields in snake_case, api/schemas/portfolio.py;
tests/api/test_shapes.py holds the three together). The benchmarks are keyed by name as
REST keys them (one field per name of `BENCHMARKS`, null where REST has no key), and the
validation and live records are typed objects, not a JSON scalar; so are the null books'
families (one field per name of `NULL_FAMILIES`), whose descriptions are the domain's."""

from __future__ import annotations

from dataclasses import asdict, fields
from datetime import date
from decimal import Decimal

import strawberry

from desk import MOSTLY_CASH_EXPOSURE
from desk import domain as stats  # the track record's shapes (portfolio/track_record.py), through the desk


@strawberry.type(description="The book beside one benchmark over the same days (fractions; 250 trading days a year).")
class BenchmarkComparison:
    total_return: float | None
    annual_return: float | None
    excess_annual_return: float | None
    tracking_error: float | None
    information_ratio: float | None
    beta: float | None
    alpha: float | None

    @classmethod
    def build(cls, figures: stats.BenchmarkComparison | None) -> BenchmarkComparison | None:
        return None if figures is None else cls(**asdict(figures))


@strawberry.type(description="The benchmarks by name, as REST keys them; null where there is none.")
class Benchmarks:
    equal_weight_liquid: BenchmarkComparison | None = strawberry.field(
        description="The names that passed the entry gates at the month's start, held equally through the month."
    )
    index: BenchmarkComparison | None = strawberry.field(
        description="The exchange's published index where stored, else the service's capitalisation-weighted index "
        "(TrackRecord.indexSource)."
    )

    @classmethod
    def build(cls, by_name: dict[str, stats.BenchmarkComparison]) -> Benchmarks:
        return cls(**{name: BenchmarkComparison.build(by_name.get(name)) for name in stats.BENCHMARKS})


@strawberry.type(description="Costs the book paid, in the market's currency, and their share of mean equity a year.")
class CostsPaid:
    fees: Decimal
    spread: Decimal
    impact: Decimal
    total: Decimal
    share_of_equity_per_year: float | None


def _about(shape: type, name: str) -> str:
    """A track-record field's description, written once in the domain (portfolio/track_record.py)."""
    return stats.description(shape, name)


@strawberry.type(description="A figure over a null family's books: the mean, the lowest and the highest.")
class NullSpread:
    mean: float | None = strawberry.field(description=_about(stats.NullSpread, "mean"))
    lowest: float | None = strawberry.field(description=_about(stats.NullSpread, "lowest"))
    highest: float | None = strawberry.field(description=_about(stats.NullSpread, "highest"))


SPREADS = ("information_ratio", "excess_annual_return")


@strawberry.type(description="A null family beside the replayed model book.")
class NullFamily:
    family: str = strawberry.field(description=_about(stats.NullFamily, "family"))
    books: int = strawberry.field(description=_about(stats.NullFamily, "books"))
    information_ratio: NullSpread = strawberry.field(description=_about(stats.NullFamily, "information_ratio"))
    excess_annual_return: NullSpread = strawberry.field(description=_about(stats.NullFamily, "excess_annual_return"))
    model_percentile: float | None = strawberry.field(description=_about(stats.NullFamily, "model_percentile"))
    model_beats: int = strawberry.field(description=_about(stats.NullFamily, "model_beats"))
    note: str | None = strawberry.field(description=_about(stats.NullFamily, "note"))

    @classmethod
    def build(cls, figures: stats.NullFamily | None) -> NullFamily | None:
        if figures is None:
            return None
        plain = {f.name: getattr(figures, f.name) for f in fields(figures) if f.name not in SPREADS}
        return cls(**plain, **{name: NullSpread(**asdict(getattr(figures, name))) for name in SPREADS})


_RANKINGS = stats.NULL_FAMILY_RANKINGS


@strawberry.type(description="The null families by name, as REST keys them.")
class NullFamilies:
    daily_random: NullFamily | None = strawberry.field(description=_RANKINGS["daily_random"])
    fixed_random: NullFamily | None = strawberry.field(description=_RANKINGS["fixed_random"])
    size: NullFamily | None = strawberry.field(description=_RANKINGS["size"])
    bought_and_held: NullFamily | None = strawberry.field(description=_RANKINGS["bought_and_held"])
    inverted: NullFamily | None = strawberry.field(description=_RANKINGS["inverted"])

    @classmethod
    def build(cls, by_name: dict[str, stats.NullFamily]) -> NullFamilies:
        return cls(**{name: NullFamily.build(by_name.get(name)) for name in stats.NULL_FAMILIES})


@strawberry.type(description="The AI portfolio against its null books over the record's days.")
class NullRecord:
    days: int = strawberry.field(description=_about(stats.NullRecord, "days"))
    model_total_return: float | None = strawberry.field(description=_about(stats.NullRecord, "model_total_return"))
    model_excess_annual_return: float | None = strawberry.field(
        description=_about(stats.NullRecord, "model_excess_annual_return")
    )
    model_information_ratio: float | None = strawberry.field(
        description=_about(stats.NullRecord, "model_information_ratio")
    )
    families: NullFamilies = strawberry.field(description=_about(stats.NullRecord, "families"))
    fixed_random_mean: BenchmarkComparison | None = strawberry.field(
        description=_about(stats.NullRecord, "fixed_random_mean")
    )
    note: str | None = strawberry.field(description=_about(stats.NullRecord, "note"))

    @classmethod
    def build(cls, record: stats.NullRecord | None) -> NullRecord | None:
        if record is None:
            return None
        nested = ("families", "fixed_random_mean")
        plain = {f.name: getattr(record, f.name) for f in fields(record) if f.name not in nested}
        return cls(
            **plain,
            families=NullFamilies.build(record.families),
            fixed_random_mean=BenchmarkComparison.build(record.fixed_random_mean),
        )


@strawberry.type(
    description="Track-record statistics (GET /api/ai-portfolio/track-record): empyrical-reloaded's "
    "figures, fractions not percent."
)
class TrackRecord:
    days: int
    first: date | None
    last: date | None
    total_return: float | None
    annual_return: float | None
    annual_volatility: float | None
    sharpe: float | None
    sortino: float | None
    max_drawdown: float | None
    calmar: float | None
    annual_turnover: float | None
    costs: CostsPaid | None
    benchmarks: Benchmarks
    index_source: str | None = strawberry.field(
        description=(
            "What the index benchmark is: the symbol of the index the exchange published (e.g. ^NASI), or cap_weighted "
            "(the service's capitalisation-weighted index); null without one."
        )
    )
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
    records: TrackRecords | None = strawberry.field(
        description=(
            "The AI portfolio only: the same statistics over the days replayed on the validation record and over the "
            "live days, apart."
        )
    )
    nulls: NullRecord | None = strawberry.field(description=_about(stats.TrackRecord, "nulls"))

    @classmethod
    def from_record(cls, record: stats.TrackRecord) -> TrackRecord:
        """Every field of the record as it is; the nested ones as their GraphQL types."""
        nested = ("costs", "benchmarks", "records", "nulls")
        plain = {f.name: getattr(record, f.name) for f in fields(record) if f.name not in nested}
        return cls(
            **plain,
            costs=CostsPaid(**asdict(record.costs)) if record.costs is not None else None,
            benchmarks=Benchmarks.build(record.benchmarks),
            records=TrackRecords.build(record.records),
            nulls=NullRecord.build(record.nulls),
        )


@strawberry.type(description="The AI portfolio's record over the validation replay and the live days, apart.")
class TrackRecords:
    validation: TrackRecord | None
    live: TrackRecord | None

    @classmethod
    def build(cls, by_record: dict[str, stats.TrackRecord] | None) -> TrackRecords | None:
        if by_record is None:
            return None
        parts = {name: by_record.get(name) for name in stats.RECORDS}
        return cls(**{name: TrackRecord.from_record(part) if part else None for name, part in parts.items()})
