"""The response contract's API side: every response model derives from `ApiModel`, whose
serializer passes what it renders through market/contract.py's `conform` (the rules, one
place for the API, the CLI and the reports; money, prices and fractions were printed by
their types' serializers, api/schemas/common.py, which apply its `shown`), and `Timestamp`
documents a typed timestamp field in the OpenAPI schema."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, PlainSerializer, WithJsonSchema, model_serializer

from market.contract import TIMESTAMP_PATTERN, JsonOf, conform, exchange_timestamp, shown, snake

__all__ = ["ApiModel", "JsonOf", "Timestamp", "conform", "exchange_timestamp", "shown", "snake"]


class ApiModel(BaseModel):
    """The base of every response model: what it renders passes through `conform`."""

    @model_serializer(mode="wrap")
    def _conform(self, handler: Any):  # noqa: ANN202 - no return annotation: pydantic then documents the model's own schema
        return conform(handler(self))


# A typed timestamp field: the contract's text, documented as such in the OpenAPI schema.
Timestamp = Annotated[
    datetime,
    PlainSerializer(exchange_timestamp, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": TIMESTAMP_PATTERN,
            "examples": ["2026-11-20T10:31:05"],
            "description": "Exchange time (EST, UTC-5 all year), ISO 8601 without offset, to the second.",
        }
    ),
]
