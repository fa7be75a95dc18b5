"""REST schemas derived from the domain's declarations (docs/architecture.md, "Declared
once"): a read model's dataclass is its one declaration, and its REST schema is built from
it by pydantic's `create_model`, field for field in its order: the name, the type
(market.money's `Money`, `Price` and `Fraction` as this package's annotated types, which
serialise and document them; `Shares` as an integer; a moment as `Timestamp`; a nested
dataclass as its own derived schema; a TypedDict as a JSON document printed by its types),
the default and the description (market.contract `described`). A field the domain marks
`served=False` is left out.

    @derived(domain.TrackRecord)
    class TrackRecord(ApiModel):
        \"\"\"The schema's own description.\"\"\"

        model_config = example({...})

The class gives what only REST has (its description, its example, fields of its own, which
come first); the decorator answers a model of the same name with the domain's fields added.
A field added to the dataclass is in the schema, and so in the OpenAPI document, with no
second declaration (tests/api/test_shapes.py derives both from a dataclass with one more)."""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import MISSING, Field, is_dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import Field as Described
from pydantic import create_model

from api.contract import ApiModel, Timestamp
from api.schemas.common import Fraction, Money, Price, document
from market import money
from market.contract import served_fields, served_type

Model = TypeVar("Model", bound=type[ApiModel])
# market.money's kinds of number as REST annotates them (api/schemas/common.py)
REST_TYPES: dict[object, object] = {
    money.Money: Money,
    money.Price: Price,
    money.Fraction: Fraction,
    money.Shares: int,
    datetime: Timestamp,
}
# The schema derived from each domain dataclass so far: a nested one refers to it
SCHEMAS: dict[type, type[ApiModel]] = {}


def derived(shape: type) -> Callable[[Model], Model]:
    """The REST schema of the dataclass `shape`: the decorated class with `shape`'s served
    fields (module docstring)."""

    def build(cls: Model) -> Model:
        fields = {
            f.name: (rest_type(served_type(shape, f.name), shape, cls.__name__), _field(f))
            for f in served_fields(shape)
        }
        model = create_model(cls.__name__, __base__=cls, __module__=cls.__module__, __doc__=cls.__doc__, **fields)
        model.model_rebuild(_types_namespace={cls.__name__: model})  # a field of its own type (a record's parts)
        SCHEMAS[shape] = model
        return model  # type: ignore[return-value]  # a subclass of `cls`, named as it

    return build


def _field(declared_field: Field[Any]) -> Any:
    """A dataclass field's default and description as pydantic's field (a field served as
    a narrower type than the domain's has no default: it is always set once served)."""
    text = declared_field.metadata.get("description")
    if declared_field.metadata.get("served_as") is not None:
        return Described(description=text)
    if declared_field.default is not MISSING:
        return Described(default=declared_field.default, description=text)
    if declared_field.default_factory is not MISSING:
        return Described(default_factory=declared_field.default_factory, description=text)
    return Described(description=text)


def rest_type(hint: Any, shape: type, name: str) -> Any:
    """`hint` (a declared type of a field of `shape`) as REST annotates it; `shape` itself,
    named `name`, as a forward reference."""
    if hint in REST_TYPES:
        return REST_TYPES[hint]
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, _UNION):
        return typing.Union[tuple(rest_type(a, shape, name) for a in arguments)]  # noqa: UP007 - built from parts
    if origin in (list, tuple):
        return list[rest_type(arguments[0], shape, name)]
    if origin is dict:
        return dict[arguments[0], rest_type(arguments[1], shape, name)]
    if typing.is_typeddict(hint):
        return document(hint)
    if is_dataclass(hint):
        return name if hint is shape else SCHEMAS[hint]
    return hint


_UNION = type(int | None)
