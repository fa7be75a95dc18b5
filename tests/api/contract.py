"""The response contract of docs/api.md ("One contract for every response"), as two
checkers the contract tests run over every REST body and GraphQL answer, the CLI's JSON
and the PDFs' money columns.

`typed_violations` checks money, prices and fractions by the type the answer declares for
each field (market/money.py `Money`, `Price`, `Fraction`): REST's by the response model's
annotations (a document field by its `Declared` type), GraphQL's by the schema's scalars
(`Decimal` is money, `Price` a price) and the Python type of each field (a `Float` declared
`Fraction`; a `JSON` field by its document's declared type), the CLI's by the dataclass or
TypedDict it prints. It counts what it checked, so a walk that reached no money proves
nothing and is caught.

`violations` is the net under it, by field name, so that money a declaration forgot (a
document field without its type, printed as a number) is caught too:

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

import dataclasses
import re
import types
import typing
from collections import Counter
from collections.abc import Iterator
from typing import Any

from market.money import Fraction, Money, Price

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


PRICE_TEXT = re.compile(r"^-?\d+\.\d{2,6}$")


class TypedWalk:
    """The fields of decoded answers checked by their declared types: `found` the
    violations, `checked` how many fields of each type were checked."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.checked: Counter[str] = Counter()
        self.seen: set[tuple[str, str]] = set()  # (type, path without list indices)

    def python(self, value: Any, kind: Any, path: str) -> None:
        """`value` (decoded JSON) against `kind`, a Python type: a response model, a
        dataclass (its JSON form), a TypedDict, `JsonOf`, a container of them."""
        kind = _unwrapped(kind)
        if value is None or kind is None:
            return
        if kind in (Money, Price, Fraction):
            self.leaf(value, kind.__name__, path)
            return
        origin, arguments = typing.get_origin(kind), typing.get_args(kind)
        if origin in (typing.Union, types.UnionType):
            arms = [a for a in arguments if a is not type(None)]
            self.python(value, arms[0] if len(arms) == 1 else tuple(arms), path)
        elif origin in (list, tuple) and isinstance(value, list):
            for i, item in enumerate(value):
                self.python(item, arguments[0], f"{path}[{i}]")
        elif origin is dict and isinstance(value, dict):
            for key, item in value.items():
                self.python(item, arguments[1], f"{path}.{key}")
        elif isinstance(value, dict):
            members = _members(kind)
            for key, item in value.items():
                self.python(item, members.get(key), f"{path}.{key}")

    def leaf(self, value: Any, kind: str, path: str) -> None:
        self.checked[kind] += 1
        self.seen.add((kind, re.sub(r"\[\d+\]", "", path)))

        if kind == "Money" and not (isinstance(value, str) and MONEY_TEXT.match(value)):
            self.found.append(f"{path} = {value!r}: declared Money, so decimal text with two decimals")
        elif kind == "Price" and not (isinstance(value, str) and PRICE_TEXT.match(value)):
            self.found.append(f"{path} = {value!r}: declared Price, so decimal text with two to six decimals")
        elif kind == "Fraction" and (
            isinstance(value, (bool, str)) or not isinstance(value, (int, float)) or _decimals(float(value)) > 6
        ):
            self.found.append(f"{path} = {value!r}: declared Fraction, so a number with at most six decimals")

    def saw(self, kind: str, suffix: str) -> bool:
        """Whether a field declared `kind` whose path ends with `suffix` was checked."""
        return any(seen == kind and path.endswith(suffix) for seen, path in self.seen)

    def graphql(self, value: Any, kind: Any, path: str) -> None:
        """`value` (a GraphQL answer's data) against `kind`, a graphql-core type of the
        service's schema."""
        from graphql import GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType

        if isinstance(kind, GraphQLNonNull):
            kind = kind.of_type
        if value is None:
            return
        if isinstance(kind, GraphQLList):
            for i, item in enumerate(value):
                self.graphql(item, kind.of_type, f"{path}[{i}]")
        elif isinstance(kind, GraphQLObjectType):
            for key, item in value.items():
                field = kind.fields.get(key)
                if field is not None:
                    self._graphql_field(item, field, f"{path}.{key}")
        elif isinstance(kind, GraphQLScalarType) and kind.name in GRAPHQL_SCALARS:
            self.leaf(value, GRAPHQL_SCALARS[kind.name], path)

    def _graphql_field(self, value: Any, field: Any, path: str) -> None:
        from graphql import get_named_type

        declared = field.extensions.get("strawberry-definition")
        named = get_named_type(field.type)
        if declared is not None and named.name == "JSON" and "declared" in (declared.metadata or {}):
            self.python(value, declared.metadata["declared"], path)
        elif declared is not None and named.name == "Float" and _innermost(declared.type) is Fraction:
            self.graphql_floats(value, path)
        else:
            self.graphql(value, field.type, path)

    def graphql_floats(self, value: Any, path: str) -> None:
        for i, item in enumerate(value) if isinstance(value, list) else [(None, value)]:
            if item is not None:
                self.leaf(item, "Fraction", path if i is None else f"{path}[{i}]")


GRAPHQL_SCALARS = {"Decimal": "Money", "Price": "Price"}  # a GraphQL scalar is its type (api/graphql/scalars.py)


def _unwrapped(kind: Any) -> Any:
    """`kind` without Annotated; a document's declared type where its annotation keeps one."""
    if typing.get_origin(kind) is typing.Annotated:
        declared = [m.kind for m in kind.__metadata__ if type(m).__name__ == "Declared"]
        return declared[0] if declared else _unwrapped(typing.get_args(kind)[0])
    return kind


def _members(kind: Any) -> dict[str, Any]:
    """The declared type of each member of a dict whose type is `kind`."""
    from pydantic import BaseModel

    from market.contract import JsonOf

    if isinstance(kind, tuple):
        return {k: v for arm in kind for k, v in _members(arm).items()}
    if typing.get_origin(kind) is JsonOf:
        kind = typing.get_args(kind)[0]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return {name: _model_field(f) for name, f in kind.model_fields.items()}
    if typing.is_typeddict(kind) or dataclasses.is_dataclass(kind):
        return typing.get_type_hints(kind, include_extras=True)
    return {}


def _model_field(field: Any) -> Any:
    """A response model's field's type, its document's declared type where it has one."""
    declared = [m.kind for m in field.metadata if type(m).__name__ == "Declared"]
    return declared[0] if declared else field.annotation


def _innermost(kind: Any) -> Any:
    while hasattr(kind, "of_type"):
        kind = kind.of_type
    return kind


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
