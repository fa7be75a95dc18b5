"""The track record in GraphQL, derived from portfolio/track_record.py's dataclasses
(api/graphql/types/derived.py), field for field in camelCase, with their descriptions (REST
serves the same fields in snake_case, api/schemas/portfolio.py). Where REST has a map,
GraphQL has a typed object keyed as REST keys it: the benchmarks (one field per name of
`BENCHMARKS`, null where REST has no key), the validation and live records, and the null
books' families (one field per name of `NULL_FAMILIES`)."""

from __future__ import annotations

import strawberry

from api.graphql.types.derived import Reshaped, derived, from_domain
from desk import domain as stats  # the track record's shapes (portfolio/track_record.py), through the desk


@derived(
    stats.BenchmarkComparison, "The book beside one benchmark over the same days (fractions; 250 trading days a year)."
)
class BenchmarkComparison:
    pass


def _comparison(figures: stats.BenchmarkComparison | None) -> BenchmarkComparison | None:
    return None if figures is None else from_domain(BenchmarkComparison, figures)


@strawberry.type(description="The benchmarks by name, as REST keys them; null where there is none.")
class Benchmarks:
    equal_weight_liquid: BenchmarkComparison | None = strawberry.field(
        description="The names that passed the entry gates at the month's start, held equally through the month: a "
        "total return (stored dividends reinvested at their ex-date's close, splits on one share count)."
    )
    index: BenchmarkComparison | None = strawberry.field(
        description="The exchange's published index where stored (its levels as published), else the service's "
        "capitalisation-weighted index with dividends reinvested (TrackRecord.indexSource)."
    )

    @classmethod
    def build(cls, by_name: dict[str, stats.BenchmarkComparison]) -> Benchmarks:
        return cls(**{name: _comparison(by_name.get(name)) for name in stats.BENCHMARKS})


@derived(stats.CostsPaid, "Costs the book paid, in the market's currency, and their share of mean equity a year.")
class CostsPaid:
    pass


@derived(stats.NullSpread, "A figure over a null family's books: the mean, the lowest and the highest.")
class NullSpread:
    pass


@derived(stats.NullFamily, "A null family beside the replayed model book.")
class NullFamily:
    pass


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
        families = {name: by_name.get(name) for name in stats.NULL_FAMILIES}
        return cls(**{name: None if f is None else from_domain(NullFamily, f) for name, f in families.items()})


@derived(
    stats.NullRecord,
    "The AI portfolio against its null books over the record's days.",
    reshaped={"families": Reshaped(NullFamilies, NullFamilies.build)},
)
class NullRecord:
    pass


@derived(
    stats.TrackRecord,
    "Track-record statistics (GET /api/ai-portfolio/track-record): empyrical-reloaded's figures, fractions not "
    "percent.",
    reshaped={
        "benchmarks": Reshaped(Benchmarks, Benchmarks.build, description=None),
        "records": Reshaped(
            "TrackRecords | None",
            lambda records: TrackRecords.build(records),
            description="The AI portfolio only: the same statistics over the days replayed on the validation record "
            "and over the live days, apart.",
        ),
    },
)
class TrackRecord:
    @classmethod
    def from_record(cls, record: stats.TrackRecord) -> TrackRecord:
        """Every field of the record, the nested ones as their GraphQL types."""
        return from_domain(cls, record)


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
