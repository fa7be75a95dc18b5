"""A mutation's answer rendered before its write commits.

GraphQL serialises a resolver's result after the resolver returns: a field whose value
its scalar cannot serialise (a placed trade's `tradingDate` once came as text, and the
Date scalar failed on it) became "Unexpected error" for a trade that was already booked,
and a client that retried on the error bought twice. So every mutation builds its answer
inside the write's transaction (the desk's `respond`, store/transactions.py `answered`)
and `rendered` serialises every field of it there, as the response will, through the
schema's own scalars and the output contract (market/contract.py `conform`): an answer
that cannot be rendered raises before the commit and the write is rolled back, so an
error always means nothing was written (docs/api.md, "A write's answer"). Fields with a
resolver of their own (an instrument, a latest prediction) are reads the client selects;
they are not part of the write's answer and are resolved as any query's fields.
"""

from __future__ import annotations

from typing import Any, TypeVar

from graphql import GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLScalarType, GraphQLSchema
from strawberry.types.base import get_object_definition

from market.contract import conform

T = TypeVar("T")


def rendered(answer: T, schema: GraphQLSchema) -> T:
    """`answer` (a union member a mutation returns), once every field of it serialised as
    the response will; raises what the response would have failed on."""
    conform(_serialised(answer, schema))
    return answer


def _serialised(value: Any, schema: GraphQLSchema, kind: Any = None) -> Any:
    if isinstance(kind, GraphQLNonNull):
        if value is None:
            raise TypeError(f"a non-null {kind.of_type} field of the answer is null")
        kind = kind.of_type
    if value is None:
        return None
    if isinstance(kind, GraphQLList):
        return [_serialised(item, schema, kind.of_type) for item in value]
    if isinstance(kind, (GraphQLScalarType, GraphQLEnumType)):
        return kind.serialize(value)
    definition = get_object_definition(value, strict=True)
    fields = schema.get_type(definition.name).fields
    out = {}
    for name, field in fields.items():
        declared = field.extensions["strawberry-definition"]
        if declared.base_resolver is None:
            out[name] = _serialised(getattr(value, declared.python_name), schema, field.type)
    return out
