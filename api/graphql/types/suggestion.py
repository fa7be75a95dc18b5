from __future__ import annotations

import strawberry

from api.graphql.types.derived import Reshaped, derived, from_domain
from desk import domain  # the domain's Suggestion, through the desk


@derived(
    domain.Suggestion,
    "A morning trade suggestion for the caller's portfolio.",
    reshaped={"suggestion_id": Reshaped(strawberry.ID)},
)
class Suggestion:
    @classmethod
    def from_row(cls, row: domain.Suggestion) -> Suggestion:
        return from_domain(cls, row)
