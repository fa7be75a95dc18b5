"""Column types that behave the same on SQLite and Postgres.

- `UTCDateTime`: always an aware UTC datetime in Python; TIMESTAMPTZ on Postgres, a
  sortable UTC text on SQLite, so "recorded at or before T" compares correctly on both.
- `Money`: an exact `Decimal`; NUMERIC(20, 6) on Postgres, decimal text on SQLite (whose
  REAL would round cash balances).
- `JSONDocument`: JSONB on Postgres, JSON text on SQLite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, DateTime, Numeric, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator, TypeEngine

_SQLITE_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def as_utc(value: datetime | str | None) -> datetime | None:
    """Aware UTC datetime from a datetime (naive means UTC) or stored SQLite text."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator):
    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect) -> TypeEngine[Any]:  # noqa: ANN001
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String())
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value, dialect) -> datetime | str | None:  # noqa: ANN001
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {value!r}")
        if value.tzinfo is None:
            raise ValueError("naive datetimes are ambiguous; store aware UTC datetimes")
        value = value.astimezone(UTC)
        return value.strftime(_SQLITE_FORMAT) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect) -> datetime | None:  # noqa: ANN001
        return as_utc(value)


class Money(TypeDecorator):
    impl = Numeric(20, 6)
    cache_ok = True

    def load_dialect_impl(self, dialect) -> TypeEngine[Any]:  # noqa: ANN001
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String())
        return dialect.type_descriptor(Numeric(20, 6, asdecimal=True))

    def process_bind_param(self, value, dialect) -> Decimal | str | None:  # noqa: ANN001
        if value is None:
            return None
        amount = Decimal(str(value)) if not isinstance(value, Decimal) else value
        if not amount.is_finite():
            raise ValueError(f"money must be finite, got {value!r}")
        amount = amount.quantize(Decimal("0.000001"))
        return format(amount, "f") if dialect.name == "sqlite" else amount

    def process_result_value(self, value, dialect) -> Decimal | None:  # noqa: ANN001
        if value is None:
            return None
        return Decimal(value).quantize(Decimal("0.000001"))


JSONDocument = JSON().with_variant(JSONB(), "postgresql")
