"""The one output contract (docs/api.md, "One contract for every response") for everything
the project prints for a reader: the API's REST bodies (api/contract.py `ApiModel` passes
what it renders through `conform`) and GraphQL answers, the CLI's JSON (cli/output.py)
and the reports. A nested document without a schema of its own (an AI day's summary, a
statement's changes, a rationale, the analysis facts) is held to the same rules as the
typed fields. It lives in market/, the lowest layer, so every printer below the API
applies the same rule rather than its own.

- Timestamps (`*_at`, `timestamp`): exchange time (EST, UTC-5 all year: the exchange has
  no daylight saving), ISO 8601 without offset, to the second. The AI portfolio's
  positions were specified so; every other timestamp follows them, so one clock reads
  every answer and a time lines up with its trading date.
- Money (`MONEY_FIELDS` and every `Money`-typed field): decimal text with the currency's
  two decimals (market/money.py `money_display`); a fill's `touch` and an average cost
  among them. A booked price per share (`PRICE_FIELDS`: `price`, `limit_price`) is
  decimal text with two decimals where it is whole cents, as every price booked now is,
  else with the decimals it was stored with (at most six: an older AI fill, a statement's
  average cost), so price x quantity is the value to the cent (`price_display`). An
  object named `costs` holds money parts (market/costs.py
  `CostBreakdown`: `fees`, `spread`, `impact`, `total`), so those parts are money there,
  while `spread` and `impact` elsewhere are fractions; its other members (a track
  record's `share_of_equity_per_year`) keep their own rule.
- Market-data prices (`close`, `open`, `high`, `low`, `bid`, `ask`): numbers at the
  exchange's tick, 0.01.
- Percent (`*_pct`): a number, 12.34 meaning 12.34%, two decimals. A fraction is never
  named `_pct`.
- Scores (`score`, 0-100): one decimal.
- Every other number: at most six decimals (probabilities, fractions, ratios, statistics;
  a daily `variance`: ten). A number without `_pct` that is neither a Score, a count, a
  price nor a statistic (Sharpe, RSI, beta, z) is a fraction: 0.05 means 5%.

GraphQL answers pass through the same `conform` (api/graphql/schema.py), its camelCase
names read as their snake_case REST names.

Stored values keep their full precision; only the answer is rounded.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from market.clock import exchange_date_time
from market.money import money_display, price_display

MONEY_FIELDS = frozenset(
    {
        "cash",
        "equity",
        "market_value",
        "amount",
        "balance",
        "fees",
        "fee",
        "cost_basis",
        "realized_pnl",
        "unrealized_pnl",
        "starting_cash",
        "liquid_equity",
        "gross",
        "cash_before",
        "cash_after",
        "cash_now",
        "average_cost",
        "pnl",
        "costs_paid",
        "total_costs",
        "touch",
    }
)
PRICE_FIELDS = frozenset({"price", "limit_price", "reference_close"})  # per share: market.money.price_display
COSTS = "costs"  # an object of money parts, named by COST_PARTS
COST_PARTS = frozenset({"fees", "spread", "impact", "total"})
COST_PART = "costs.part"  # the rule name of a part inside `costs`: no field is named so
MARKET_PRICES = frozenset({"close", "open", "high", "low", "bid", "ask", "previous_close"})
PERCENT_PLACES, SCORE_PLACES, NUMBER_PLACES, VARIANCE_PLACES, TICK_PLACES = 2, 1, 6, 10, 2
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$")


def exchange_timestamp(moment: datetime | str) -> str:
    """A stored moment (UTC, aware or naive) as the contract's timestamp; text that already
    is an ISO 8601 timestamp is read as such (without an offset it is exchange time)."""
    if isinstance(moment, str):
        text = moment.replace("Z", "+00:00")
        parsed = datetime.fromisoformat(text)
        local = exchange_date_time(parsed) if parsed.tzinfo is not None else parsed
    else:
        local = exchange_date_time(moment)
    return local.replace(microsecond=0).isoformat()


@lru_cache(maxsize=4096)
def snake(key: str) -> str:
    """A GraphQL field name as its REST name (`marketValue` -> `market_value`)."""
    return _CAMEL.sub("_", key).lower() if not key.islower() else key


def member(parent: str, key: str) -> str:
    """The name whose rule a member `key` of an object under `parent` follows: its own,
    but COST_PART for a cost part inside `costs` (a `spread` there is money, elsewhere a
    fraction)."""
    name = snake(key)
    return COST_PART if parent == COSTS and name in COST_PARTS else name


def is_timestamp(key: str) -> bool:
    return key.endswith("_at") or key == "timestamp"


def _money(value: Any, show: Any = money_display) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    try:
        return show(Decimal(str(value)) if not isinstance(value, Decimal) else value)
    except (InvalidOperation, ValueError):
        return value


def _number(key: str, value: float) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        return value
    places = (
        PERCENT_PLACES
        if key.endswith("_pct")
        else SCORE_PLACES
        if key == "score"
        else TICK_PLACES
        if key in MARKET_PRICES
        else VARIANCE_PLACES
        if key == "variance"
        else NUMBER_PLACES
    )
    return round(value, places) + 0.0


def conform(value: Any, key: str = "") -> Any:
    """`value` (rendered JSON data: dicts, lists, text, numbers) held to the contract, the
    rule chosen by the name of the field it is under."""
    if isinstance(value, dict):
        return {k: conform(v, member(key, k)) if isinstance(k, str) else v for k, v in value.items()}
    if isinstance(value, list):
        return [conform(v, key) for v in value]
    if value is None or isinstance(value, bool):
        return value
    if is_timestamp(key) and isinstance(value, (datetime, str)):
        if isinstance(value, datetime) or _ISO.match(value):
            return exchange_timestamp(value)
        return value
    if (key in MONEY_FIELDS or key == COST_PART) and isinstance(value, (int, float, Decimal, str)):
        return _money(value)
    if key in PRICE_FIELDS and isinstance(value, (int, float, Decimal, str)):
        return _money(value, price_display)
    if isinstance(value, float):
        return _number(key, value)
    if isinstance(value, Decimal):
        return _number(key, float(value))
    return value
