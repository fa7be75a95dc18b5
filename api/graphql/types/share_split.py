from __future__ import annotations

from api.graphql.types.derived import derived
from desk import domain


@derived(
    domain.ShareSplit,
    "A split, bonus issue or consolidation of the instrument (a SPLIT corporate action): its ex-date and factor.",
)
class ShareSplit:
    """store/splits.py `ShareSplit`, every field of it (derived)."""
