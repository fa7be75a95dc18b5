"""Plain JSON values from what the services return, for hashing and storing."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from decimal import Decimal
from typing import TypeAlias

# A JSON value as json.dumps takes it (what `to_plain` returns for the services' results).
JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"


def to_plain(value: object) -> JsonValue:
    """A JSON-ready copy: dates in ISO 8601, decimals as their exact text, tuples as lists
    (anything else is returned as it is: numbers, text, booleans and None already are JSON)."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value  # type: ignore[return-value]  # numbers, text, booleans and None as they are


def canonical_sha256(value: JsonValue) -> str:
    """SHA-256 of `value` as canonical JSON (sorted keys, no whitespace, ASCII)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()
