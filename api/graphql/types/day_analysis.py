from __future__ import annotations

from datetime import date
from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.types.derived import document, printed
from desk import domain


@strawberry.type(description="One of the day's notifications and whether the webhook acknowledged it.")
class AnalysisNotification:
    notification_id: str
    kind: str
    severity: str
    title: str | None
    delivered: bool


@strawberry.type(description="The day's written analysis (GET /api/analysis).")
class DayAnalysis:
    trading_date: date
    writer: str
    fallback_reason: str | None
    body: str
    facts: JSON = document(domain.DayFacts)
    written_at: str = strawberry.field(description="Exchange time, ISO 8601 without offset.")
    notifications: list[AnalysisNotification]

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> DayAnalysis:
        """The stored analysis, its facts printed by their declared types (analysis/day_facts.py)."""
        notifications = [AnalysisNotification(**n) for n in record["notifications"]]
        return cls(**{**record, "facts": printed(cls, "facts", record["facts"]), "notifications": notifications})
