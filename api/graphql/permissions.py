"""Field-level authorisation: a client key asking for an admin-only field gets an error at
that field (code FORBIDDEN) and null in its place; the rest of the query still answers."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.permission import BasePermission
from strawberry.types import Info

from desk import INSIGHTS_REFUSAL


class AdminOnly(BasePermission):
    message = "this field needs the admin key (the same rule as its REST endpoint)"
    error_extensions = {"code": "FORBIDDEN"}

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        return info.context.principal.is_admin


class MacroInsightsAccess(BasePermission):
    """The REST rule, from the same place: `Principal.may_read_macro_insights`."""

    message = INSIGHTS_REFUSAL
    error_extensions = {"code": "FORBIDDEN"}

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        return info.context.principal.may_read_macro_insights


def admin_field(description: str) -> Any:
    """A field only the admin key reads (`AdminOnly`), its description opening with that rule,
    so every admin-only field states it the same way; used as `@admin_field("...")`."""
    return strawberry.field(
        description=f"Admin only (null with a FORBIDDEN error otherwise): {description}",
        permission_classes=[AdminOnly],
    )
