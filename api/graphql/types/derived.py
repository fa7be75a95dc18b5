"""GraphQL types derived from the domain's declarations (docs/architecture.md, "Declared
once"), as REST's schemas are (api/schemas/derived.py): a read model's dataclass is its
one declaration, and `derived` makes its Strawberry type from it, field for field in its
order, with the type (market.money's `Money`, `Price`, `Fraction` and `Shares` are the
schema's scalars by type, api/graphql/scalars.py; a nested dataclass its own derived type;
a TypedDict a JSON document printed by its types) and the description written in the
domain (market.contract `described`; a field it names as `snake_case` in backticks reads
as its camelCase name here). A field the domain marks `served=False` is left out.

    @derived(domain.PositionValue, "An open position ...", before={"weight": "flags"})
    class Position:
        weight: float = strawberry.field(description="Share of the portfolio's equity.")

The class gives what only GraphQL has: its own fields (relations with their resolvers, a
position's weight; placed before the domain field `before` names, else after them all),
a field of the domain's `renamed`, or `reshaped` to a GraphQL type of its own (an enum, a
keyed object for a map, an ID) with how to build it. `from_domain` builds the type from
the domain's value. A field added to the dataclass is in the type, and so in the SDL, with
no second declaration (tests/api/test_shapes.py derives both from a dataclass with one more)."""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, is_dataclass
from typing import Any, TypeVar

import strawberry
from strawberry.scalars import JSON

from api.contract import conform
from market.contract import served_fields, served_type

T = TypeVar("T", bound=type)
TYPES: dict[type, type] = {}  # the GraphQL type derived from each domain dataclass so far
_UNION = type(int | None)
_NAMED = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`")


@dataclass(frozen=True)
class Reshaped:
    """A domain field shown as a GraphQL type of its own: `kind`, built by `build` from the
    domain's value (None stays None); `description` replaces the domain's where the shape
    differs (a keyed object for a map), `...` keeps it."""

    kind: Any
    build: Callable[[Any], Any] = lambda value: value
    description: Any = ...
    declared: Any = None  # a JSON document's declared type (`document`)


def derived(
    shape: type,
    description: str,
    *,
    renamed: Mapping[str, str] | None = None,
    reshaped: Mapping[str, Reshaped] | None = None,
    before: Mapping[str, str] | None = None,
) -> Callable[[T], T]:
    """The Strawberry type of the dataclass `shape` (module docstring)."""

    def build(cls: T) -> T:
        own = dict(vars(cls).get("__annotations__", {}))
        plan, annotations = [], {}
        for f in served_fields(shape):
            name = (renamed or {}).get(f.name, f.name)
            annotations |= {mine: own.pop(mine) for mine, ahead in (before or {}).items() if ahead == f.name}
            shown = (reshaped or {}).get(f.name) or _shown(served_type(shape, f.name))
            text = f.metadata.get("description") if shown.description is ... else shown.description
            annotations[name] = shown.kind
            metadata = {"declared": shown.declared} if shown.declared is not None else None
            setattr(cls, name, strawberry.field(description=graphql_text(text), metadata=metadata))
            plan.append((f.name, name, shown.build))
        cls.__annotations__ = annotations | own
        cls.__derived_from__ = tuple(plan)
        made = strawberry.type(cls, description=description)
        TYPES[shape] = made
        return made

    return build


def from_domain(kind: type[T], value: Any, **own: Any) -> T:
    """The derived GraphQL type `kind` built from the domain's `value`, with the type's own
    fields `own` (a position's weight)."""
    built = {name: build(getattr(value, field)) for field, name, build in kind.__derived_from__}
    return kind(**built, **own)


def document(kind: Any, description: str | None = None) -> Any:
    """A `JSON` field that carries a document of the declared type `kind` (a TypedDict, a
    union of them, `JsonOf[dataclass]`), kept on the field: `printed` prints by it."""
    return strawberry.field(description=description, metadata={"declared": kind})


def printed(kind: type, name: str, value: Any) -> Any:
    """`value` printed by the declared type of the document field `name` of the type `kind`
    (market.contract `conform`)."""
    return conform(value, kind.__strawberry_definition__.get_field(name).metadata["declared"])


def graphql_text(text: str | None) -> str | None:
    """A domain description as GraphQL shows it: a field named `like_this` reads likeThis."""
    if text is None:
        return None
    return _NAMED.sub(lambda match: _camel(match.group(1)), text)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _shown(hint: Any) -> Reshaped:
    """A declared type as GraphQL shows it, and how its value is built."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, _UNION):
        inner = _shown(next(a for a in arguments if a is not type(None)))
        return Reshaped(inner.kind | None, lambda value: None if value is None else inner.build(value))
    if origin in (list, tuple):
        item = _shown(arguments[0])
        return Reshaped(list[item.kind], lambda value: [item.build(v) for v in value])
    if origin is dict or typing.is_typeddict(hint):
        return Reshaped(JSON, lambda value: conform(value, hint), declared=hint)  # a document, printed by its type
    if is_dataclass(hint):
        nested = TYPES[hint]
        return Reshaped(nested, lambda value: from_domain(nested, value))
    return Reshaped(hint)
