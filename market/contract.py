"""The one output contract (docs/api.md, "One contract for every response") for everything
the project prints for a reader: the API's REST bodies (api/contract.py `ApiModel` passes
what it renders through `conform`) and GraphQL answers, the CLI's JSON (cli/output.py)
and the reports (reports/format.py). It lives in market/, the lowest layer, so every
printer applies the same rule rather than its own.

Money, prices and fractions are printed by their type (market/money.py `Money`, `Price`,
`Fraction`), declared on the field that holds them: a read model's dataclass, a document's
TypedDict (a trade's rationale, an AI day's summary, a statement's changes, the analysis
facts), the REST schema and the GraphQL type derived from them. `shown(kind, value)` is the
rule of each type; `conform(value, kind)` walks a value by its declared type (a dataclass
by its own fields) and applies it. A name never makes a number money: a `spread` is
`Money` in a fill's costs and a `Fraction` of the price in a prediction because each is
declared so.

- Money (`Money`): decimal text with the currency's two decimals (market/money.py
  `money_display`).
- A booked price per share (`Price`): decimal text with two decimals where it is whole
  cents, as every price booked now is, else with the decimals it was stored with (at most
  six: an older AI fill), so price x quantity is the value to the cent (`price_display`).
- A fraction (`Fraction`): a number with at most six decimals; 0.05 means 5%.

The other rules go by the field's name, where the name is the convention:

- Timestamps (`*_at`, `timestamp`): exchange time (EST, UTC-5 all year: the exchange has
  no daylight saving), ISO 8601 without offset, to the second.
- Market-data prices (`close`, `open`, `high`, `low`, `bid`, `ask`): numbers at the
  exchange's tick, 0.01.
- Percent (`*_pct`): a number, 12.34 meaning 12.34%, two decimals. A fraction is never
  named `_pct`.
- Scores (`score`, 0-100): one decimal.
- Every other number: at most six decimals (probabilities, ratios, statistics; a daily
  `variance`: ten).

GraphQL answers pass through the same `conform` (api/graphql/schema.py), its camelCase
names read as their snake_case REST names; their money and prices were printed by their
scalars (api/graphql/scalars.py), which apply `shown`.

What a field means is written once too: `described` gives a dataclass field its
description (REST's schema and GraphQL's type show it) and says whether the transports
serve it at all.

Stored values keep their full precision; only the answer is rounded.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import Field, field, fields, is_dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache, partial
from typing import Any, Generic, TypeVar

from market.clock import exchange_date_time
from market.money import Fraction, Money, Price, money_display, price_display

MARKET_PRICES = frozenset({"close", "open", "high", "low", "bid", "ask", "previous_close"})
PERCENT_PLACES, SCORE_PLACES, NUMBER_PLACES, VARIANCE_PLACES, TICK_PLACES = 2, 1, 6, 10, 2
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"
MAX_SUGGESTION_ID = 200  # characters of a suggestion id: REST's path and GraphQL's argument alike
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$")
T = TypeVar("T")


class JsonOf(dict[str, Any], Generic[T]):
    """The type of a document that is the JSON form of the dataclass `T` (its fields as JSON
    values, money as decimal text: an executed day's stored summary, a fill as the day's
    record lists it): `conform` reads its fields' types from `T`. Only an annotation; the
    value is a plain dict."""


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


def is_timestamp(key: str) -> bool:
    return key.endswith("_at") or key == "timestamp"


def _amount(value: Any, show: Callable[[Decimal], str] = money_display) -> Any:
    """Money or a price (a Decimal, a number, or decimal text as a document keeps it) as
    decimal text by `show`; anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        return value
    try:
        return show(value if isinstance(value, Decimal) else Decimal(str(value)))
    except (InvalidOperation, ValueError):
        return value


def _fraction(value: Any) -> Any:
    """A fraction (a float or a Decimal) as a number with NUMBER_PLACES decimals; a whole
    number, text or anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, (float, Decimal)):
        return value
    number = float(value)
    return round(number, NUMBER_PLACES) + 0.0 if number == number and abs(number) != float("inf") else number


# The rule of each type (market/money.py): what `shown` applies to a field declared with it.
SHOWN: dict[object, Callable[[Any], Any]] = {
    Money: _amount,
    Price: partial(_amount, show=price_display),
    Fraction: _fraction,
}


def shown(kind: object, value: object) -> object:
    """`value` as every surface prints a field declared `kind` (`Money`, `Price` or
    `Fraction`): REST's schemas and GraphQL's scalars serialise with it, `conform` applies
    it to what it walks."""
    return SHOWN[kind](value)


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


def conform(value: object, kind: object = None, key: str = "") -> object:
    """`value` held to the contract: a field declared `Money`, `Price` or `Fraction` by its
    type, wherever it is (`kind`: the declared type of `value`, None where there is none; a
    dataclass is walked by its own fields' types, a dict by its TypedDict's or its
    `dict[str, V]`'s, a list by its items'), every other field by its name (`key`, the
    field it is under). The answer is JSON data: a dataclass becomes a dict of its fields."""
    if kind is not None:
        kind = _declared_arm(kind, value)
        if kind in SHOWN:
            return None if value is None else SHOWN[kind](value)
    if isinstance(value, dict):
        if kind is None:
            return {k: conform(v, None, snake(k)) if isinstance(k, str) else v for k, v in value.items()}
        inside = _member_types(kind)
        return {k: conform(v, inside(k), snake(k)) if isinstance(k, str) else v for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        item = None if kind is None else _item_type(kind)
        return [conform(v, item, key) for v in value]
    if value is None or isinstance(value, (bool, int)):
        return value
    if is_timestamp(key) and isinstance(value, (datetime, str)):
        if isinstance(value, datetime) or _ISO.match(value):
            return exchange_timestamp(value)
        return value
    if isinstance(value, float):
        return _number(key, value)
    if isinstance(value, Decimal):
        return _number(key, float(value))
    if is_dataclass(value) and not isinstance(value, type):
        hints = declared(type(value))
        return {f.name: conform(getattr(value, f.name), hints.get(f.name), f.name) for f in fields(value)}
    return value


def _declared_arm(kind: Any, value: Any) -> Any:
    """The arm of a union that `value` is declared as: `X | None` is X; a union of
    TypedDicts is all of them (a tuple, read by `declared`); of classes, the one `value` is."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return kind
    arms = tuple(arm for arm in typing.get_args(kind) if arm is not type(None))
    if len(arms) == 1:
        return _declared_arm(arms[0], value)
    if all(typing.is_typeddict(arm) for arm in arms):
        return arms
    return next((arm for arm in arms if isinstance(arm, type) and isinstance(value, arm)), None)


def _member_types(kind: Any) -> Callable[[str], Any]:
    """The declared type of each member of a dict declared `kind`."""
    if typing.get_origin(kind) is JsonOf:
        return declared(typing.get_args(kind)[0]).get
    if typing.get_origin(kind) in (dict, Mapping):
        arguments = typing.get_args(kind)
        inside = arguments[1] if len(arguments) == 2 else None
        return lambda _name: inside
    if isinstance(kind, tuple) or typing.is_typeddict(kind) or (isinstance(kind, type) and is_dataclass(kind)):
        return declared(kind).get  # a dataclass's JSON form inside a document: its fields' types
    return lambda _name: None


def _item_type(kind: Any) -> Any:
    """The declared type of the items of a list declared `kind` (`list[X]`, `tuple[X, ...]`)."""
    if typing.get_origin(kind) in (list, tuple, typing.Sequence, set, frozenset):
        arguments = [a for a in typing.get_args(kind) if a is not Ellipsis]
        return arguments[0] if len(set(arguments)) == 1 else None
    return None


@cache
def declared(shape: object) -> dict[str, object]:
    """The declared type of each field of `shape` (a dataclass, a TypedDict, or a tuple of
    TypedDicts: all their fields), without Required, NotRequired or Annotated; a
    dataclass's property (a derived field its JSON form carries, a cost's `total`) by its
    return type. A field whose annotation cannot be read (a name imported only for type
    checking) has none."""
    if isinstance(shape, tuple):
        merged: dict[str, Any] = {}
        for arm in shape:
            merged |= declared(arm)
        return merged
    try:
        hints = typing.get_type_hints(shape)
    except (NameError, TypeError):
        hints = _one_by_one(shape)
    if is_dataclass(shape):
        for name, member in vars(shape).items():
            if isinstance(member, property) and member.fget is not None and name not in hints:
                hints[name] = _returned(member.fget)
    return hints


def _returned(method: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(method).get("return")
    except (NameError, TypeError):
        return None


def _one_by_one(shape: type) -> dict[str, Any]:
    hints = {}
    for klass in reversed(shape.__mro__):
        module = vars(sys.modules.get(klass.__module__, typing))
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            try:
                hints[name] = typing.get_type_hints(
                    type("_One", (), {"__annotations__": {name: annotation}, "__module__": klass.__module__}),
                    globalns=module,
                )[name]
            except (NameError, TypeError):
                hints[name] = None
    return hints


def described(text: str | None = None, *, served: bool = True, served_as: object = None, **options: object) -> Any:
    """A dataclass field with what it means (`text`: the one description REST's schema and
    GraphQL's type show), whether the transports serve it (`served` False: a field only the
    domain reads, which no schema carries) and, where what is served is narrower than what
    the domain holds, its served type (`served_as`: always set once served, so required and
    without a default); `options` are `dataclasses.field`'s."""
    return field(metadata={"description": text, "served": served, "served_as": served_as}, **options)


def served_type(shape: type, name: str) -> object:
    """The type the transports serve the field `name` of `shape` as: its `served_as`, else
    its declared type."""
    chosen = next(f.metadata.get("served_as") for f in fields(shape) if f.name == name)
    return chosen if chosen is not None else declared(shape).get(name)


def description(shape: type, name: str) -> str | None:
    """The description the field `name` of `shape` was `described` with (None: none)."""
    return next(f.metadata.get("description") for f in fields(shape) if f.name == name)


def served_fields(shape: type) -> list[Field[object]]:
    """The fields of `shape` the transports serve (all but those `described(served=False)`), in order."""
    return [f for f in fields(shape) if f.metadata.get("served", True)]
