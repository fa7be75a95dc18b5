"""Field-level authorisation: a client key asking for an admin-only field gets an error at
that field (code FORBIDDEN) and null in its place; the rest of the query still answers."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.permission import BasePermission
from strawberry.types import Info

from market.errors import PermissionDeniedError


class AdminOnly(BasePermission):
    message = "this field needs the admin key (the same rule as its REST endpoint)"
    error_extensions = {"code": "FORBIDDEN"}

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        return info.context.principal.is_admin


class MacroInsightsAccess(BasePermission):
    """The REST rule and its refusal, from the same place: `Principal.macro_insights_refusal`,
    raised as the domain error (code FORBIDDEN, api/graphql/limits.py) with the words REST's
    403 has: a key switched off is told so, not that it needs the tier it has."""

    def has_permission(self, source: Any, info: Info, **kwargs: Any) -> bool:
        refusal = info.context.principal.macro_insights_refusal
        if refusal is not None:
            raise PermissionDeniedError(refusal)
        return True


def admin_field(description: str) -> Any:
    """A field only the admin key reads (`AdminOnly`), its description opening with that rule,
    so every admin-only field states it the same way; used as `@admin_field("...")`."""
    return strawberry.field(
        description=f"Admin only (null with a FORBIDDEN error otherwise): {description}",
        permission_classes=[AdminOnly],
    )
