"""Admin only: issue, list, revoke, rotate and tune client keys.

Key operations take no `Idempotency-Key`: a key's secret is shown once and never stored, so
a retry cannot be answered with the first answer, and a retried issue or rotation makes
another key. The header is refused (422) rather than ignored, where a client would believe
its retry safe; after a lost answer, GET /api/keys lists what was issued and
POST /api/keys/{key_id}/revoke withdraws it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Request, status
from fastapi.responses import Response

from api.deps import AdminDep, ServicesDep
from api.jsonbody import StrictJSONRoute
from api.paging import KeysQuery
from api.schemas.common import KEYED, problems
from api.schemas.keys import (
    KeyInfo,
    KeyPage,
    KeyRequest,
    MacroAccessRequest,
    NewKey,
    RateLimitRequest,
    RotatedKey,
    RotateRequest,
    TierRequest,
)
from api.services import written
from market.errors import InvalidInputError


def no_idempotency_key(request: Request, _: AdminDep) -> None:
    """Refuse an Idempotency-Key (see the module's docstring), once the caller is known to
    be the admin (a client is answered 401/403 first, as without the header)."""
    if request.method != "GET" and "idempotency-key" in request.headers:  # a read is safe to retry
        raise InvalidInputError(
            "key operations take no Idempotency-Key: a key's secret is shown once and never stored, so a "
            "retry makes another key; after a lost answer, GET /api/keys lists what was issued and "
            "POST /api/keys/{key_id}/revoke withdraws it"
        )


router = APIRouter(
    prefix="/api/keys", tags=["keys"], route_class=StrictJSONRoute, dependencies=[Depends(no_idempotency_key)]
)
KEY_ID = Path(min_length=1, max_length=64, description="A key id from GET /api/keys (never the secret).")
ADMIN_ERRORS = problems(*KEYED, 403, 404)
CHANGE_ERRORS = problems(*KEYED, 403, 404, 409)  # a rotated key in its grace period: change its successor


@router.post("/generate", response_model=NewKey, status_code=status.HTTP_201_CREATED, responses=problems(*KEYED, 403))
def generate(request: KeyRequest, svc: ServicesDep, _: AdminDep) -> Response:
    """A new client key, shown once in this response; a known client name gets another key
    for the same client (and portfolio)."""
    shown = written(NewKey, 201)
    return svc.desk.issue_key(request.client_name, request.tier, shown)


@router.get("", response_model=KeyPage, responses=problems(*KEYED, 403))
def list_keys(svc: ServicesDep, _: AdminDep, page: KeysQuery) -> dict[str, Any]:
    """The keys with client, tier, status and limits, never a secret, in pages of `limit`
    in the order they were issued; `next_cursor` leads to the later keys."""
    return page.slice(svc.desk.list_keys(), key=lambda k: [k["created_at"], k["key_id"]])


@router.post("/{key_id}/revoke", response_model=KeyInfo, responses=ADMIN_ERRORS)
def revoke(svc: ServicesDep, _: AdminDep, key_id: str = KEY_ID) -> Response:
    """The key stops working from the very next request, and so do the keys it replaced
    that are still in a rotation's grace period."""
    return svc.desk.revoke_key(key_id, written(KeyInfo))


@router.post(
    "/{key_id}/rotate",
    response_model=RotatedKey,
    status_code=status.HTTP_201_CREATED,
    responses=problems(*KEYED, 403, 404, 409),
)
def rotate(svc: ServicesDep, _: AdminDep, request: RotateRequest | None = None, key_id: str = KEY_ID) -> Response:
    """A replacement key (shown once) with the same client, tier and limits; the old key
    stops at once or after `grace_seconds`. A key already rotated (in its grace period) is
    409: rotate its successor instead, so no more than two keys of a rotation ever work."""
    grace = request.grace_seconds if request else 0
    return svc.desk.rotate_key(key_id, grace, written(RotatedKey, 201))


@router.put("/{key_id}/rate-limit", response_model=KeyInfo, responses=CHANGE_ERRORS)
def set_rate_limit(request: RateLimitRequest, svc: ServicesDep, _: AdminDep, key_id: str = KEY_ID) -> Response:
    """Requests per minute for this key (null: the tier's default)."""
    return svc.desk.set_key_option(key_id, "RATE_LIMIT_SET", request.per_minute, written(KeyInfo))


@router.put("/{key_id}/macro-access", response_model=KeyInfo, responses=CHANGE_ERRORS)
def set_macro_access(request: MacroAccessRequest, svc: ServicesDep, _: AdminDep, key_id: str = KEY_ID) -> Response:
    """Switch the macro datasets on or off for this key (null: the tier's rule)."""
    return svc.desk.set_key_option(key_id, "MACRO_ACCESS_SET", request.enabled, written(KeyInfo))


@router.put("/{key_id}/tier", response_model=KeyInfo, responses=CHANGE_ERRORS)
def set_tier(request: TierRequest, svc: ServicesDep, _: AdminDep, key_id: str = KEY_ID) -> Response:
    """Move the key to another tier (its default rate limit and macro rule follow)."""
    return svc.desk.set_key_option(key_id, "TIER_SET", request.tier, written(KeyInfo))
