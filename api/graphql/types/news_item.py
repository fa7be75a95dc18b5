from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry


@strawberry.type(description="A news item or exchange disclosure that names the instrument.")
class NewsItem:
    kind: str = strawberry.field(description="NEWS or DISCLOSURE.")
    title: str
    link: str | None
    summary: str | None
    published_at: datetime
    sentiment: float | None = strawberry.field(
        description="The document's sentiment score in [-1, 1]; null until scored."
    )

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> NewsItem:
        return cls(**{name: row[name] for name in cls.__annotations__})
