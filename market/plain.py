"""Plain JSON values from what the services return, for hashing and storing."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any


def to_plain(value: Any) -> Any:
    """A JSON-ready copy: dates in ISO 8601, decimals as their exact text, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def canonical_sha256(value: Any) -> str:
    """SHA-256 of `value` as canonical JSON (sorted keys, no whitespace, ASCII)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()
