"""The application layer: one `Desk` per process, one method per use case. REST, GraphQL,
the CLI and the stage adapters call it and add only their transport's concerns (see
desk/desk.py)."""

from desk.desk import AI_PORTFOLIO, INSIGHTS_REFUSAL, Desk, ManualTrade

__all__ = ["AI_PORTFOLIO", "INSIGHTS_REFUSAL", "Desk", "ManualTrade"]
