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
        return cls(
            kind=row["kind"],
            title=row["title"],
            link=row["link"],
            summary=row["summary"],
            published_at=row["published_at"],
            sentiment=row["sentiment"],
        )
