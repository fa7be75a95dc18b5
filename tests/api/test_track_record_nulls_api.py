"""The AI portfolio's null books are served the same over REST and GraphQL, field for
field (issue 63, item 5): GET /api/ai-portfolio/track-record's `nulls` and GraphQL's
aiPortfolio { trackRecord { nulls } } carry the same figures, notes and families, from the
desk's one read model."""

from __future__ import annotations

from typing import Any

from api.graphql.types.track_record import NullRecord
from market.fees import fee_schedule
from portfolio.track_record import NULL_FAMILIES
from store import tables
from store.history import append_history
from tests.api.conftest import Api
from tests.api.graph import data, snake
from tests.portfolio.planted_store import seed_planted
from tests.portfolio.seed import CALENDAR, DAY, price_row
from tests.portfolio.test_nulls import planted


def selection(graph_type: Any) -> str:
    """Every field of a Strawberry type, nested types expanded: the whole of it, asked for."""
    parts = []
    for f in graph_type.__strawberry_definition__.fields:
        inner = f.type
        while hasattr(inner, "of_type"):
            inner = inner.of_type
        nested = getattr(inner, "__strawberry_definition__", None)
        name = f.graphql_name or _camel(f.python_name)
        parts.append(f"{name} {{ {selection(inner)} }}" if nested else name)
    return " ".join(parts)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


QUERY = "{ aiPortfolio { trackRecord { nulls { %s } } } }" % selection(NullRecord)


def both(api: Api) -> tuple[dict, dict]:
    """The AI track record over REST, and its null books over GraphQL, snake_cased."""
    rest = api.acme("GET", "/api/ai-portfolio/track-record").json()
    return rest, snake(data(api, QUERY, api.world.acme_key)["aiPortfolio"]["trackRecord"]["nulls"])


def test_rest_and_graphql_serve_the_same_null_books(api: Api) -> None:
    """The world's two executed days (too few for the first month's book held), then a
    planted market's 30 more days after them: the same figures on both, kept and renewed
    alike."""
    rest, graph = both(api)
    nulls = rest["nulls"]
    assert graph == nulls
    assert list(nulls["families"]) == list(NULL_FAMILIES) and nulls["days"] == rest["days"] == 2
    fixed, held = nulls["families"]["fixed_random"], nulls["families"]["bought_and_held"]
    assert fixed["books"] == 20 and nulls["families"]["daily_random"]["books"] == 10
    assert held["books"] == 0 and held["model_percentile"] is None and "more than 21 days" in held["note"]
    # no ratio to call weak over 2 days: the 20-day note says why, not a short-span caveat (nulls.short_span)
    assert f"the AI portfolio {rest['total_return']:+.2%}" in nulls["note"] and "short span" not in nulls["note"]
    assert rest["records"]["live"]["nulls"] is None, "the whole record's, not its parts'"
    # two days are under MIN_BETA_DAYS: no information ratio to rank, and the notes say why
    few = "The information ratios, and the percentiles that rank them, need at least 20 days of returns"
    assert nulls["model_information_ratio"] is None and fixed["model_percentile"] is None
    assert fixed["information_ratio"] == {"mean": None, "lowest": None, "highest": None}
    assert few in nulls["note"] and few in fixed["note"]
    assert nulls["fixed_random_mean"]["information_ratio"] is None

    settings = api.world.settings
    frame = planted(0, True, names=40, days=22)
    last = CALENDAR.add_trading_days(DAY, 22)
    seed_planted(api.world.engine, frame, settings.ai_starting_cash, fee_schedule(settings), last=last)
    rest, graph = both(api)
    nulls = rest["nulls"]
    assert graph == nulls and nulls["days"] == rest["days"] == 24
    fixed = nulls["families"]["fixed_random"]["information_ratio"]
    assert fixed["lowest"] < fixed["mean"] < fixed["highest"], "twenty different books"
    assert nulls["model_information_ratio"] is not None and "20 days of returns" not in nulls["note"]
    assert nulls["families"]["bought_and_held"]["books"] == 1
    with api.world.engine.begin() as conn:  # a corrected close on a replayed day: both answer anew, alike
        append_history(conn, tables.eod_prices, [price_row("N03", last, 30.0, 2_000_000, 29.9, 30.1, cents=False)])
    rest, graph = both(api)
    assert graph == rest["nulls"] != nulls
