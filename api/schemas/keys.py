"""Bodies of the admin key endpoints. A secret appears only in NewKey, once."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from api.contract import ApiModel, Timestamp
from api.schemas.common import CursorPage, example, example_of, page_example

TierName = Literal["STANDARD", "PRO", "INSTITUTIONAL"]


class KeyRequest(ApiModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"example": {"client_name": "Acme Capital", "tier": "PRO"}}
    )

    client_name: str = Field(min_length=1, max_length=200, pattern=r"\S")
    tier: TierName


class NewKey(ApiModel):
    model_config = example(
        {
            "api_key": "svc-sk-" + "0" * 40,
            "key_id": "k-1a2b3c4d5e6f7a8b",
            "client_id": "c-1a2b3c4d5e6f",
            "client_name": "Acme Capital",
            "tier": "PRO",
            "created_at": "2026-11-20T15:00:00Z",
        }
    )

    api_key: str = Field(description="The secret, shown once; only its keyed hash is stored.")
    key_id: str
    client_id: str
    client_name: str
    tier: TierName
    created_at: Timestamp


class RotatedKey(NewKey):
    model_config = example(
        {
            **example_of(NewKey),
            "key_id": "k-9f8e7d6c5b4a3921",
            "replaces": "k-1a2b3c4d5e6f7a8b",
            "old_key_expires_at": "2026-11-21T15:00:00Z",
        }
    )

    replaces: str
    old_key_expires_at: Timestamp


class KeyInfo(ApiModel):
    model_config = example(
        {
            "key_id": "k-1a2b3c4d5e6f7a8b",
            "client_id": "c-1a2b3c4d5e6f",
            "client_name": "Acme Capital",
            "tier": "PRO",
            "created_at": "2026-11-20T15:00:00Z",
            "status": "ACTIVE",
            "expires_at": None,
            "rate_limit": None,
            "macro_access": None,
            "replaced_by": None,
        }
    )

    key_id: str
    client_id: str
    client_name: str | None
    tier: TierName
    created_at: Timestamp
    status: Literal["ACTIVE", "EXPIRING", "ROTATED", "REVOKED"]
    expires_at: Timestamp | None
    rate_limit: int | None = Field(description="Requests per minute set for this key; null: the tier's default.")
    macro_access: bool | None = Field(description="Macro datasets switch; null: the tier's rule.")
    replaced_by: str | None


class KeyPage(CursorPage):
    model_config = page_example(KeyInfo)

    items: list[KeyInfo] = Field(description="Keys in the order they were issued (created_at, then key_id).")


class RotateRequest(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    grace_seconds: int = Field(
        default=0, ge=0, le=30 * 24 * 3600, description="How long the old key keeps working; 0: it stops at once."
    )


class RateLimitRequest(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    per_minute: int | None = Field(ge=1, le=1_000_000, description="null: back to the tier's default.")


class MacroAccessRequest(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool | None = Field(description="null: back to the tier's rule (PRO and INSTITUTIONAL).")


class TierRequest(ApiModel):
    model_config = ConfigDict(extra="forbid")

    tier: TierName
