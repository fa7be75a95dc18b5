"""The authorisation matrix (docs/api.md, "Keys, tiers and the authorisation matrix"): every endpoint against every
credential class. A cell is 401, 403 or "allowed" (anything else: the request got past
authentication and authorisation, and the endpoint itself answered).

Authentication comes before validation (issue 57): every operation, with something else
wrong too (a bad parameter, path or body), answers a bad key 401 and counts it against
the per-address limit on failed keys."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from api.app import create_app
from desk import keys as keystore
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api import world
from tests.api.conftest import Api, Clock, assert_problem
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


NOTHING = "?note=%01"  # an operation without parameters: a control character in its query (the edge's 422)
LONG = "k" * 300  # over every path id's length
# (method, path) of each ENDPOINTS row -> the same operation with something else wrong (path, request arguments)
BAD_PARAMETER: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {
    ("GET", "/api/market/latest"): ("/api/market/latest?date=not-a-date", {}),
    ("GET", "/api/market/breadth"): ("/api/market/breadth?date=2026-02-30", {}),
    ("GET", "/api/analysis"): ("/api/analysis?date=yesterday", {}),
    ("GET", "/api/quant-briefing.pdf"): ("/api/quant-briefing.pdf" + NOTHING, {}),
    ("GET", "/api/compliance-report.pdf"): ("/api/compliance-report.pdf" + NOTHING, {}),
    ("GET", "/api/market/symbol/LIQ"): ("/api/market/symbol/LIQ!", {}),
    ("GET", "/api/market/history/LIQ"): ("/api/market/history/LIQ?limit=abc", {}),
    ("GET", "/api/ai-portfolio/positions"): ("/api/ai-portfolio/positions" + NOTHING, {}),
    ("GET", "/api/ai-portfolio/summary"): ("/api/ai-portfolio/summary" + NOTHING, {}),
    ("GET", "/api/ai-portfolio/track-record"): ("/api/ai-portfolio/track-record" + NOTHING, {}),
    ("GET", "/api/ai-portfolio/history"): ("/api/ai-portfolio/history" + NOTHING, {}),
    ("GET", "/api/ai/performance"): ("/api/ai/performance" + NOTHING, {}),
    ("GET", "/api/v1/macro/indicators"): ("/api/v1/macro/indicators?as_of=soon", {}),
    ("GET", "/api/macro_insights"): ("/api/macro_insights" + NOTHING, {}),
    ("GET", "/api/suggestions"): ("/api/suggestions" + NOTHING, {}),
    ("POST", "/api/suggestions/S-unknown/confirm"): (f"/api/suggestions/{LONG}/confirm", {}),
    ("POST", "/api/suggestions/S-unknown/reject"): (f"/api/suggestions/{LONG}/reject", {}),
    ("GET", "/api/portfolio"): ("/api/portfolio" + NOTHING, {}),
    ("GET", "/api/portfolio/summary"): ("/api/portfolio/summary" + NOTHING, {}),
    ("GET", "/api/portfolio/trade"): ("/api/portfolio/trade" + NOTHING, {}),
    ("POST", "/api/portfolio/trade"): ("/api/portfolio/trade", {"json": {"side": "buy", "quantity": "abc"}}),
    ("POST", "/api/portfolio/cash"): (
        "/api/portfolio/cash",
        {"content": b'{"amount": ', "headers": {"content-type": "application/json"}},
    ),
    ("GET", "/api/portfolio/cash"): ("/api/portfolio/cash" + NOTHING, {}),
    ("GET", "/api/portfolio/track-record"): ("/api/portfolio/track-record" + NOTHING, {}),
    ("GET", "/api/portfolio/trade/preview?side=buy&symbol=LIQ&quantity=10"): (
        "/api/portfolio/trade/preview?side=buy&symbol=LIQ&quantity=abc",
        {},
    ),
    ("POST", "/api/portfolio/upload-pdf"): (
        "/api/portfolio/upload-pdf?preview=perhaps",
        {"files": {"file": ("note.txt", b"LIQ note", "text/plain")}},
    ),
    ("POST", "/api/portfolio/upload-research"): (
        "/api/portfolio/upload-research",
        {"files": {"attachment": ("note.txt", b"LIQ note", "text/plain")}},
    ),
    ("POST", "/api/keys/generate"): ("/api/keys/generate", {"json": {"client_name": "Matrix", "tier": "GOLD"}}),
    ("GET", "/api/keys"): ("/api/keys" + NOTHING, {}),
    ("POST", "/api/keys/k-unknown/revoke"): (f"/api/keys/{LONG}/revoke", {}),
    ("POST", "/api/keys/k-unknown/rotate"): ("/api/keys/k-unknown/rotate", {"json": {"grace_seconds": "abc"}}),
    ("PUT", "/api/keys/k-unknown/rate-limit"): ("/api/keys/k-unknown/rate-limit", {"json": {"per_minute": "abc"}}),
    ("PUT", "/api/keys/k-unknown/macro-access"): ("/api/keys/k-unknown/macro-access", {"json": {"enabled": []}}),
    ("PUT", "/api/keys/k-unknown/tier"): ("/api/keys/k-unknown/tier", {"json": {"tier": 5}}),
}
# every class whose key is refused, and a key this process has seen valid and that was revoked since
INVALID = [c for c in CLASSES if ANY_KEY[c] == UNAUTHORISED] + ["revoked_while_kept"]


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


Row = TypeVar("Row")


def _cells(api: Api, rows: list[Row]) -> Iterator[tuple[Row, str, str | None]]:
    """Every cell of an authorisation matrix: each of `rows` (an operation and what each
    class expects) with each credential class and that class's key, the keys made once."""
    credentials = _credentials(api)
    for row in rows:
        for cls in CLASSES:
            yield row, cls, credentials[cls]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_cell_of_the_matrix(api: Api) -> None:
    failures = []
    for (method, path, body, expected), cls, key in _cells(api, ENDPOINTS):
        kwargs = {}
        if body == "file":
            kwargs["files"] = {"file": ("note.txt", b"LIQ note", "text/plain")}
        elif body is not None:
            kwargs["json"] = body
        response = api.call(method, path, key, **kwargs)
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


class FailureCounter:
    """The hits on the per-address failed-key limit, recorded by wrapping the app's own
    limiter's `hit` (the limiter stays the kind the service keeps, in memory or in the
    database, so the key check takes the path it takes in service)."""

    def __init__(self, limiter: Any) -> None:
        self.failures = 0
        hit = limiter.hit

        def counted(key_id: str, window: int, conn: Any = None, amount: int = 1) -> tuple[int, int]:
            self.failures += key_id.startswith("unauthenticated:")
            return hit(key_id, window, conn, amount)

        limiter.hit = counted


@contextmanager
def counting_failures(unmade_settings: Settings, **changes: object) -> Iterator[tuple[Api, FailureCounter]]:
    """The seeded API over real HTTP, its limiter a `FailureCounter`."""
    w = world.build(unmade_settings)
    clock = Clock()
    app = create_app(w.settings.model_copy(update=changes), now=clock)
    counter = FailureCounter(app.state.services.limiter)
    with serve_in_thread(app) as base:
        api = Api(base, w, clock)
        try:
            yield api, counter
        finally:
            api.http.close()


def revoked_while_kept(api: Api) -> str:
    """A key this process has checked (its rows kept in memory, desk/keys.py KeyCache),
    revoked since: a read is answered from that memory, so only the confirmation that
    rides on the read refuses it."""
    issued = keystore.generate(api.world.engine, api.world.settings, "Kept Ltd", "PRO", now=MORNING)
    assert api.call("GET", "/api/ai/performance", issued["api_key"]).status_code == 200
    keystore.revoke(api.world.engine, issued["key_id"], now=MORNING)
    return issued["api_key"]


def refused_and_counted(
    api: Api, counter: FailureCounter, key: str | None, method: str, path: str, **kwargs: Any
) -> str | None:
    """What is wrong with the answer to a bad key (None: a 401 problem, counted once)."""
    before = counter.failures
    response = api.call(method, path, key, **kwargs)
    counted = counter.failures - before
    challenge = response.headers.get("WWW-Authenticate")  # RFC 9110: a 401 names its challenge
    if response.status_code != 401 or response.headers["content-type"] != "application/problem+json" or counted != 1:
        return f"{response.status_code}, counted {counted}: {response.text[:100]}"
    if challenge != 'APIKey header="X-API-Key"':
        return f"401 with WWW-Authenticate {challenge!r}"
    return None


def test_every_operation_has_a_bad_parameter_cell() -> None:
    assert {(m, p) for m, p, _, _ in ENDPOINTS if p != "/healthz"} == set(BAD_PARAMETER)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_bad_key_is_401_and_counted_whatever_else_is_wrong(unmade_settings: Settings, counted_in: str) -> None:
    """Issue 57: a bad key with a bad parameter was a 422, and not counted, so a key guesser
    who sent one was never throttled. Each cell's bad request is first shown to be refused
    for itself (4xx, not 401 or 403) with the admin key; then every bad key gets 401,
    counted once against the per-address limit, with the counts in process memory and in
    the database (where a kept key's check rides on the handler's connection)."""
    with counting_failures(unmade_settings, rate_limit_store=counted_in) as (api, counter):
        credentials = _credentials(api)
        failures = []
        for (method, _), (bad_path, kwargs) in BAD_PARAMETER.items():
            refused = api.admin(method, bad_path, **kwargs).status_code
            if not 400 <= refused < 500 or refused in (401, 403):
                failures.append(f"{method} {bad_path} as admin: {refused}, not a refusal of the request itself")
            for cls in INVALID:
                key = revoked_while_kept(api) if cls == "revoked_while_kept" else credentials[cls]
                wrong = refused_and_counted(api, counter, key, method, bad_path, **kwargs)
                if wrong:
                    failures.append(f"{method} {bad_path} as {cls}: {wrong}")
    assert failures == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_bad_keys_with_bad_parameters_are_throttled_per_address(unmade_settings: Settings) -> None:
    """The failed-key limit counts them: past it the next bad key is 429, a valid key still works."""
    bad = [
        ("GET", "/api/market/history/LIQ?limit=abc", {}),
        ("GET", "/api/portfolio/trade/preview?side=buy&symbol=LIQ&quantity=abc", {}),
        ("GET", "/api/market/symbol/LIQ!", {}),
        ("POST", "/api/portfolio/trade", {"json": {"side": "buy", "quantity": "abc"}}),
        ("GET", "/api/portfolio" + NOTHING, {}),
    ]
    with counting_failures(unmade_settings, rate_limit_unauthenticated=len(bad)) as (api, _):
        for method, path, kwargs in bad:
            assert_problem(api.call(method, path, "svc-sk-" + "0" * 40, **kwargs), 401)
        assert_problem(
            api.call("GET", "/api/market/history/LIQ?limit=abc", "svc-sk-" + "1" * 40),
            429,
            f"over the limit of {len(bad)} requests per minute without a valid key from this address",
        )
        assert api.acme("GET", "/api/market/history/LIQ?limit=5").status_code == 200


# Requests a GET route refuses before its handler takes the request's connection, where a
# key this worker has seen is answered from memory and its check waits for that connection:
# a query parameter the route does not take (422), a method the path does not serve (405),
# a client key on an admin route (403). (method, path, the refusal a valid client key gets)
REFUSED_BEFORE_THE_CONNECTION = [
    ("GET", "/api/portfolio?offset=5", 422),
    ("OPTIONS", "/api/market/latest", 405),
    ("PUT", "/api/market/latest", 405),
    ("GET", "/api/ai-portfolio/history", 403),
]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_key_revoked_while_kept_is_401_before_any_other_refusal(unmade_settings: Settings, counted_in: str) -> None:
    """A revoked key this worker still held in memory was answered 422, 405 or 403 there
    (docs/api.md: 401 from the very next request, whatever else is wrong with it)."""
    with counting_failures(unmade_settings, rate_limit_store=counted_in) as (api, counter):
        failures = []
        for method, path, refusal in REFUSED_BEFORE_THE_CONNECTION:
            assert api.acme(method, path).status_code == refusal, (method, path)
            wrong = refused_and_counted(api, counter, revoked_while_kept(api), method, path)
            if wrong:
                failures.append(f"{method} {path} as revoked_while_kept: {wrong}")
    assert failures == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_requests_refused_before_the_connection_count_against_the_keys_limit(
    unmade_settings: Settings, counted_in: str
) -> None:
    """A key limited to 2 requests a minute got 150 such refusals in a minute, no 429: with
    the counts in the database (`serve --workers N`) its count waited for a connection the
    refused request never took, and in memory the key's new limit was never read (its
    keys' version, left to that connection too, never was). Each is counted under the
    key's limit as it is now, and past it the answer is 429."""
    with counting_failures(unmade_settings, rate_limit_store=counted_in) as (api, _):
        assert api.acme("GET", "/api/portfolio").status_code == 200  # the key, now kept by this worker
        api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 3})
        codes = [api.acme(method, path).status_code for method, path, _ in REFUSED_BEFORE_THE_CONNECTION * 2]
        assert codes == [422, 405, 429, 429, 429, 429, 429, 429]  # the first GET was the minute's first
