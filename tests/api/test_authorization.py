"""The authorisation matrix (docs/api.md, "Keys, tiers and the authorisation matrix"): every endpoint against every
credential class. A cell is 401, 403 or "allowed" (anything else: the request got past
authentication and authorisation, and the endpoint itself answered)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from api import keystore
from tests.api.conftest import Api, assert_problem
from tests.api.world import MORNING
from tests.conftest import ADMIN_KEY

ALLOWED, UNAUTHORISED, FORBIDDEN = "allowed", 401, 403
CLASSES = [
    "none",
    "malformed",
    "unknown",
    "revoked",
    "rotated_out",
    "wrong_admin",
    "standard",
    "pro",
    "institutional",
    "admin",
]
ANY_KEY = {c: (ALLOWED if c in ("standard", "pro", "institutional", "admin") else UNAUTHORISED) for c in CLASSES}
ADMIN_ONLY = {**ANY_KEY, "standard": FORBIDDEN, "pro": FORBIDDEN, "institutional": FORBIDDEN}
MACRO_TIER = {**ANY_KEY, "standard": FORBIDDEN}  # PRO, INSTITUTIONAL, admin; per-key switch in test_macro_api
ENDPOINTS = [
    ("GET", "/api/market/latest", None, ANY_KEY),
    ("GET", "/api/market/breadth", None, ANY_KEY),
    ("GET", "/api/analysis", None, ANY_KEY),
    ("GET", "/api/quant-briefing.pdf", None, ANY_KEY),  # public_reports: tests/api/test_reports.py
    ("GET", "/api/compliance-report.pdf", None, ANY_KEY),
    ("GET", "/api/market/symbol/LIQ", None, ANY_KEY),
    ("GET", "/api/market/history/LIQ", None, ANY_KEY),
    ("GET", "/api/ai-portfolio/positions", None, ANY_KEY),
    ("GET", "/api/ai-portfolio/summary", None, ANY_KEY),
    ("GET", "/api/ai-portfolio/track-record", None, ANY_KEY),
    ("GET", "/api/ai-portfolio/history", None, ADMIN_ONLY),
    ("GET", "/api/ai/performance", None, ANY_KEY),
    ("GET", "/api/v1/macro/indicators", None, ANY_KEY),
    ("GET", "/api/macro_insights", None, MACRO_TIER),
    ("GET", "/api/suggestions", None, ANY_KEY),
    ("POST", "/api/suggestions/S-unknown/confirm", None, ANY_KEY),
    ("POST", "/api/suggestions/S-unknown/reject", None, ANY_KEY),
    ("GET", "/api/portfolio", None, ANY_KEY),
    ("GET", "/api/portfolio/summary", None, ANY_KEY),
    ("GET", "/api/portfolio/trade", None, ANY_KEY),
    ("POST", "/api/portfolio/trade", {"side": "buy", "symbol": "LIQ", "quantity": 1, "price": "52.00"}, ANY_KEY),
    ("POST", "/api/portfolio/cash", {"amount": "10"}, ANY_KEY),
    ("GET", "/api/portfolio/cash", None, ANY_KEY),
    ("GET", "/api/portfolio/track-record", None, ANY_KEY),
    ("GET", "/api/portfolio/trade/preview?side=buy&symbol=LIQ&quantity=10", None, ANY_KEY),
    ("POST", "/api/portfolio/upload-pdf", "file", ANY_KEY),
    ("POST", "/api/portfolio/upload-research", "file", ANY_KEY),
    ("POST", "/api/keys/generate", {"client_name": "Matrix", "tier": "STANDARD"}, ADMIN_ONLY),
    ("GET", "/api/keys", None, ADMIN_ONLY),
    ("POST", "/api/keys/k-unknown/revoke", None, ADMIN_ONLY),
    ("POST", "/api/keys/k-unknown/rotate", {"grace_seconds": 0}, ADMIN_ONLY),
    ("PUT", "/api/keys/k-unknown/rate-limit", {"per_minute": 10}, ADMIN_ONLY),
    ("PUT", "/api/keys/k-unknown/macro-access", {"enabled": True}, ADMIN_ONLY),
    ("PUT", "/api/keys/k-unknown/tier", {"tier": "PRO"}, ADMIN_ONLY),
    ("GET", "/healthz", None, {c: ALLOWED for c in CLASSES}),
]


def _credentials(api: Api) -> dict[str, str | None]:
    w = api.world
    engine, settings = w.engine, w.settings
    revoked = keystore.generate(engine, settings, "Revoked Ltd", "PRO", now=MORNING)
    keystore.revoke(engine, revoked["key_id"], now=MORNING)
    rotated = keystore.generate(engine, settings, "Rotated Ltd", "PRO", now=MORNING - timedelta(hours=1))
    keystore.rotate(engine, settings, rotated["key_id"], grace_seconds=60, now=MORNING - timedelta(hours=1))
    institutional = keystore.generate(engine, settings, "Inst Ltd", "INSTITUTIONAL", now=MORNING)
    return {
        "none": None,
        "malformed": "not-a-key",
        "unknown": "svc-sk-" + "ab" * 20,
        "revoked": revoked["api_key"],
        "rotated_out": rotated["api_key"],
        "wrong_admin": "svc-admin-" + "f" * 32,
        "standard": w.acme_key,
        "pro": w.beta_key,
        "institutional": institutional["api_key"],
        "admin": ADMIN_KEY,
    }


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_cell_of_the_matrix(api: Api) -> None:
    credentials = _credentials(api)
    failures = []
    for method, path, body, expected in ENDPOINTS:
        for cls in CLASSES:
            kwargs = {}
            if body == "file":
                kwargs["files"] = {"file": ("note.txt", b"LIQ note", "text/plain")}
            elif body is not None:
                kwargs["json"] = body
            response = api.call(method, path, credentials[cls], **kwargs)
            want = expected[cls]
            got_ok = response.status_code not in (401, 403)
            if (want == ALLOWED and not got_ok) or (want != ALLOWED and response.status_code != want):
                failures.append(f"{method} {path} as {cls}: {response.status_code} (want {want}) {response.text[:120]}")
            if response.status_code in (401, 403):
                assert response.headers["content-type"] == "application/problem+json"
    assert failures == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_401_and_403_say_why(api: Api) -> None:
    assert_problem(api.call("GET", "/api/market/latest"), 401, "X-API-Key header is missing")
    # issue 42: a key sent where this service does not read it is named in the 401
    assert_problem(
        api.call("GET", "/api/market/latest", headers={"Authorization": f"Bearer {api.world.acme_key}"}),
        401,
        "X-API-Key header is missing; an Authorization: Bearer header was sent",
    )
    assert_problem(
        api.call("GET", "/api/market/latest", params={"api_key": api.world.acme_key}),
        401,
        "a key was sent as a query parameter",
        "X-API-Key header",
    )
    home = api.http.get("/", follow_redirects=False)
    assert home.status_code == 307 and home.headers["location"] == "/docs"
    assert_problem(api.call("GET", "/api/market/latest", "svc-sk-XYZ"), 401, "malformed")
    assert_problem(api.call("GET", "/api/market/latest", "svc-sk-" + "0" * 40), 401, "unknown, revoked")
    assert_problem(api.acme("GET", "/api/keys"), 403, "needs the admin key")
    assert_problem(api.acme("GET", "/api/ai-portfolio/history"), 403, "admin key")
