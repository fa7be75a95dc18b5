"""The response contract of docs/api.md ("One contract for every response"), as a checker
the contract tests run over every REST body and GraphQL answer: each rule by field name,
so a new field is held to its rule the day it is added.

- Timestamps (`*_at`, `timestamp`): exchange time (EST, UTC-5 all year), ISO 8601 without
  offset, to the second.
- Money (MONEY): decimal text, exactly two decimals; so are the parts of an object named
  `costs` (`fees`, `spread`, `impact`, `total`: money there, fractions elsewhere).
- Percent (`*_pct`): a number with at most two decimals (12.34 means 12.34%).
- Scores (`score`): at most one decimal.
- Market prices (`close`, `open`, `high`, `low`, `bid`, `ask`): at most two decimals.
- Every other number: at most six decimals (fractions, probabilities, ratios; a
  `variance`: ten).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
MONEY_TEXT = re.compile(r"^-?\d+\.\d\d$")
MONEY = {
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
    "price",
    "average_cost",
    "limit_price",
    "pnl",
    "costs",
    "total_costs",
    "touch",
    "cost",
    "net",
}


COST_PARTS = {"fees", "spread", "impact", "total"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _member(parent: str, name: str) -> str:
    """The rule's name for member `name` under `parent`: a cost part inside `costs` is money."""
    key = snake(name)
    return "cost" if parent == "costs" and key in COST_PARTS else key


def _decimals(number: float) -> int:
    """Decimal places of a number as JSON writes it (4.87845e-05 has ten)."""
    from decimal import Decimal

    return max(0, -Decimal(repr(number)).as_tuple().exponent)  # type: ignore[operator]


def violations(body: Any, where: str) -> Iterator[str]:
    """Every field of `body` (a decoded JSON answer) that breaks a rule, with its path."""
    stack: list[tuple[str, str, Any]] = [(where, "", body)]
    while stack:
        path, key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{k}", _member(key, k), v) for k, v in value.items())
            continue
        if isinstance(value, list):
            stack.extend((f"{path}[{i}]", key, v) for i, v in enumerate(value))
            continue
        if value is None or isinstance(value, bool):
            continue
        if key.endswith("_at") or key == "timestamp":
            if not (isinstance(value, str) and TIMESTAMP.match(value)):
                yield f"{path} = {value!r}: a timestamp is exchange time, ISO 8601 without offset, to the second"
        elif key in MONEY:
            if not (isinstance(value, str) and MONEY_TEXT.match(value)):
                yield f"{path} = {value!r}: money is decimal text with two decimals"
        elif isinstance(value, (int, float)):
            places = _decimals(float(value)) if isinstance(value, float) else 0
            if key.endswith("_pct") and places > 2:
                yield f"{path} = {value!r}: a percent has at most two decimals"
            elif key in {"close", "open", "high", "low", "bid", "ask", "previous_close"} and places > 2:
                yield f"{path} = {value!r}: a market price is at the tick, 0.01"
            elif key == "score" and places > 1:
                yield f"{path} = {value!r}: a Score has at most one decimal"
            elif places > (10 if key == "variance" else 6):
                yield f"{path} = {value!r}: a number has at most six decimals"


def graphql_documents(schema: Any, arguments: dict[str, str]) -> Iterator[str]:
    """One query per root field of `schema` (graphql-core's), selecting every field to
    depth 4 (lists paged to 2): the contract test sends them all. `arguments` gives the
    literal for a required argument by name (e.g. {"symbol": '"LIQ"'}); a root field with a
    required argument not in it is left out."""
    from graphql import GraphQLNonNull, GraphQLObjectType, Undefined, get_named_type, is_leaf_type

    def selection(kind: Any, depth: int) -> str:
        named = get_named_type(kind)
        if is_leaf_type(named):
            return ""
        if depth == 0 or not isinstance(named, GraphQLObjectType):
            return "{ __typename }"
        parts = []
        for name, field in named.fields.items():
            required = [
                a
                for a, arg in field.args.items()
                if isinstance(arg.type, GraphQLNonNull) and arg.default_value is Undefined
            ]
            if any(a not in arguments for a in required):
                continue
            given = [f"{a}: {arguments[a]}" for a in required]
            if "first" in field.args:
                given.append("first: 2")
            call = f"{name}({', '.join(given)})" if given else name
            parts.append(f"{call} {selection(field.type, depth - 1)}".strip())
        return "{ " + " ".join(parts) + " }"

    for name, field in schema.query_type.fields.items():
        required = [
            a
            for a, arg in field.args.items()
            if isinstance(arg.type, GraphQLNonNull) and arg.default_value is Undefined
        ]
        if any(a not in arguments for a in required):
            continue
        given = [f"{a}: {arguments[a]}" for a in required] + (["first: 2"] if "first" in field.args else [])
        call = f"{name}({', '.join(given)})" if given else name
        yield "{ " + f"{call} {selection(field.type, 4)}".strip() + " }"
