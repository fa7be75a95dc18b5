"""Bodies of the admin key endpoints. A secret appears only in NewKey, once."""
from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TierName = Literal["STANDARD", "PRO", "INSTITUTIONAL"]


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"client_name": "Acme Capital", "tier": "PRO"}})

    client_name: str = Field(min_length=1, max_length=200, pattern=r"\S")
    tier: TierName


class NewKey(BaseModel):
    api_key: str = Field(description="The secret, shown once; only its keyed hash is stored.")
    key_id: str
    client_id: str
    client_name: str
    tier: TierName
    created_at: datetime


class RotatedKey(NewKey):
    replaces: str
    old_key_expires_at: datetime


class KeyInfo(BaseModel):
    key_id: str
    client_id: str
    client_name: str | None
    tier: TierName
    created_at: datetime
    status: Literal["ACTIVE", "EXPIRING", "ROTATED", "REVOKED"]
    expires_at: datetime | None
    rate_limit: int | None = Field(description="Requests per minute set for this key; null: the tier's default.")
    macro_access: bool | None = Field(description="Macro datasets switch; null: the tier's rule.")
    replaced_by: str | None


class RotateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grace_seconds: int = Field(default=0, ge=0, le=30 * 24 * 3600,
                               description="How long the old key keeps working; 0: it stops at once.")


class RateLimitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    per_minute: int | None = Field(ge=1, le=1_000_000, description="null: back to the tier's default.")


class MacroAccessRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool | None = Field(description="null: back to the tier's rule (PRO and INSTITUTIONAL).")


class TierRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tier: TierName
