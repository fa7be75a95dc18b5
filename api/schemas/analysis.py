"""Body of the day's analysis endpoint."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from api.contract import ApiModel
from api.schemas.common import document, example
from desk import domain

# The day's facts (analysis/day_facts.py), printed by their declared types
FactsDocument = document(domain.DayFacts)


class NotificationSummary(ApiModel):
    notification_id: str
    kind: str = Field(
        description="ANALYSIS, TRAPPED, PREFLIGHT_FAILED, MODEL_RETRAINED or TASK_FAILED (an Airflow task failed its "
        "last retry)."
    )
    severity: str = Field(description="INFO, WARNING or CRITICAL.")
    title: str | None
    delivered: bool = Field(
        description="The webhook acknowledged it (2xx); false when not configured or not yet delivered."
    )


class DayAnalysis(ApiModel):
    model_config = example(
        {
            "trading_date": "2026-11-20",
            "writer": "template-v1",
            "fallback_reason": None,
            "body": "Market on 2026-11-20: Decliners led with 12 up, 15 down and 0 unchanged of 27 stocks "
            "that traded; ...",
            "facts": {"trading_date": "2026-11-20", "breadth": {"advancers": 12, "decliners": 15}},
            "written_at": "2026-11-20T16:21:04",
            "notifications": [
                {
                    "notification_id": "2026-11-20:analysis",
                    "kind": "ANALYSIS",
                    "severity": "INFO",
                    "title": "Market analysis for 2026-11-20",
                    "delivered": True,
                }
            ],
        }
    )

    trading_date: date
    writer: str = Field(description="template-v1, or openai-compatible:<model>.")
    fallback_reason: str | None = Field(
        description="Why the template wrote it although a language model was configured."
    )
    body: str = Field(description="The analysis, paragraphs separated by a blank line.")
    facts: FactsDocument = Field(description="Every figure the analysis was written from.")
    written_at: str = Field(description="Exchange time, ISO 8601 without offset.")
    notifications: list[NotificationSummary]
