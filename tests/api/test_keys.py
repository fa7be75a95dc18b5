"""Key lifecycle over HTTP: revoke takes effect on the very next request, rotation with
and without a grace period, per-key rate limits (429 with Retry-After and RateLimit
headers), and key hygiene: no secret in any table, log line or error body."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from email.utils import parsedate_to_datetime

import pytest
from sqlalchemy import select

from api.deps import CallerDep  # at module level: the probe routes' annotations are read from here
from store import tables
from store.history import append_history
from store.tables import metadata
from tests.api.conftest import Api, assert_problem
from tests.conftest import ADMIN_KEY

pytestmark = pytest.mark.parametrize(
    "database_url", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


def test_revocation_holds_from_the_very_next_request(api: Api) -> None:
    assert api.acme("GET", "/api/portfolio").status_code == 200
    revoked = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/revoke")
    assert revoked.status_code == 200 and revoked.json()["status"] == "REVOKED"
    assert_problem(api.acme("GET", "/api/portfolio"), 401, "revoked")
    assert api.admin("POST", f"/api/keys/{api.world.acme_key_id}/revoke").json()["status"] == "REVOKED"  # idempotent
    assert_problem(api.admin("POST", "/api/keys/k-nothing/revoke"), 404, "no API key")


def test_rotation_without_grace_replaces_the_key_at_once(api: Api) -> None:
    api.acme("POST", "/api/portfolio/cash", json={"amount": "1"})
    rotated = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 0})
    assert rotated.status_code == 201
    new = rotated.json()
    assert new["replaces"] == api.world.acme_key_id and new["api_key"] != api.world.acme_key
    assert_problem(api.acme("GET", "/api/portfolio"), 401)
    same = api.call("GET", "/api/portfolio", new["api_key"]).json()
    assert same["portfolio_id"].startswith("client:") and same["cash"] == "200001.00"  # the same client's portfolio
    listing = {k["key_id"]: k for k in api.admin("GET", "/api/keys").json()["items"]}
    assert listing[api.world.acme_key_id]["status"] == "ROTATED"
    assert listing[api.world.acme_key_id]["replaced_by"] == new["key_id"]
    assert_problem(api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate"), 409, "rotated out", new["key_id"])


def test_a_revoked_key_cannot_be_rotated_a_conflict_not_an_input_error(api: Api) -> None:
    """Rotating a revoked key answered 422, as if the request were malformed: it is the
    key's state that forbids it (409, like a second rotation), and nothing is issued."""
    key = api.world.acme_key_id
    api.admin("POST", f"/api/keys/{key}/revoke")
    before = api.admin("GET", "/api/keys").json()["items"]
    body = assert_problem(api.admin("POST", f"/api/keys/{key}/rotate", json={"grace_seconds": 0}), 409, "is revoked")
    assert body["type"].endswith("/problems/conflict") and key in body["detail"]
    assert api.admin("GET", "/api/keys").json()["items"] == before  # no key issued
    in_grace = api.admin("POST", f"/api/keys/{api.world.beta_key_id}/rotate", json={"grace_seconds": 3600}).json()
    api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke")  # revoked during its grace period
    assert_problem(api.admin("POST", f"/api/keys/{api.world.beta_key_id}/rotate"), 409, "is revoked")
    assert api.admin("POST", f"/api/keys/{in_grace['key_id']}/rotate").status_code == 201


def test_a_key_that_was_rotated_or_revoked_cannot_be_tuned_its_successor_is_named(api: Api) -> None:
    """Raising a rotated key's tier or limit answered 200 and changed nothing the client
    would use (it moves to the successor): 409 naming the successor, and nothing stored;
    a revoked key's the same 409 as its rotation. The successor takes the change, and the
    old key with it while its grace period runs."""
    changes = (("rate-limit", {"per_minute": 900}), ("tier", {"tier": "PRO"}), ("macro-access", {"enabled": True}))
    old = api.world.acme_key_id
    rotated = api.admin("POST", f"/api/keys/{old}/rotate", json={"grace_seconds": 3600}).json()
    for path, body in changes:
        before = api.admin("GET", "/api/keys").json()["items"]
        refused = assert_problem(api.admin("PUT", f"/api/keys/{old}/{path}", json=body), 409, "already rotated")
        assert rotated["key_id"] in refused["detail"]
        assert api.admin("GET", "/api/keys").json()["items"] == before  # nothing stored
        assert api.admin("PUT", f"/api/keys/{rotated['key_id']}/{path}", json=body).status_code == 200
    listing = {k["key_id"]: k for k in api.admin("GET", "/api/keys").json()["items"]}
    for key in (rotated["key_id"], old):
        assert (listing[key]["rate_limit"], listing[key]["tier"], listing[key]["macro_access"]) == (900, "PRO", True)
    api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke")
    for path, body in changes:
        assert_problem(api.admin("PUT", f"/api/keys/{api.world.beta_key_id}/{path}", json=body), 409, "is revoked")


def test_a_key_operation_refuses_an_idempotency_key_and_issues_nothing(api: Api) -> None:
    """`POST /api/keys/generate` with an Idempotency-Key ignored it: the retry of a lost
    answer issued a second working key, and the first stayed live with its secret never
    received. A key's secret is not stored, so the first answer cannot be replayed: the
    header is refused (after the admin check) and nothing is issued; the OpenAPI document
    lists the 409 a change of a rotated key answers."""
    before = api.admin("GET", "/api/keys").json()["items"]
    retried = {"headers": {"Idempotency-Key": "abc"}}
    assert_problem(
        api.admin("POST", "/api/keys/generate", json={"client_name": "Lost Answer", "tier": "STANDARD"}, **retried),
        422,
        "take no Idempotency-Key",
        "GET /api/keys",
    )
    assert_problem(api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", **retried), 422, "Idempotency-Key")
    # a read takes the header: it is the way back
    assert api.admin("GET", "/api/keys", **retried).json()["items"] == before
    assert_problem(
        api.acme("POST", "/api/keys/generate", json={"client_name": "X", "tier": "PRO"}, **retried), 403
    )  # a client is refused as a client first
    paths = api.call("GET", "/openapi.json").json()["paths"]
    for path in ("rate-limit", "macro-access", "tier"):
        assert "409" in paths[f"/api/keys/{{key_id}}/{path}"]["put"]["responses"], path


def test_a_client_name_with_an_invisible_character_is_refused_not_a_second_client(api: Api) -> None:
    """ "Look\u200b Alike" (a zero-width space) made a second client that displays as "Look
    Alike", and a right-to-left override one that displays reordered: refused, naming the
    character, and nothing issued; a name that differs in spaces only is the same client."""
    first = api.admin("POST", "/api/keys/generate", json={"client_name": "Look Alike", "tier": "STANDARD"}).json()
    before = api.admin("GET", "/api/keys").json()["items"]
    for name, where in (("Look\u200b Alike", "U+200B ZERO WIDTH SPACE"), ("Look\u202eekilA", "U+202E")):
        refused = api.admin("POST", "/api/keys/generate", json={"client_name": name, "tier": "STANDARD"})
        assert_problem(refused, 422, "client_name contains an invisible format character", where)
    assert api.admin("GET", "/api/keys").json()["items"] == before
    spaced = api.admin("POST", "/api/keys/generate", json={"client_name": " Look   Alike ", "tier": "STANDARD"})
    assert spaced.json()["client_id"] == first["client_id"]
    composed = api.admin("POST", "/api/keys/generate", json={"client_name": "Caf\u00e9 Ltd", "tier": "STANDARD"})
    decomposed = api.admin("POST", "/api/keys/generate", json={"client_name": "Cafe\u0301 Ltd", "tier": "STANDARD"})
    assert composed.json()["client_id"] == decomposed.json()["client_id"]  # one name as it displays
    with api.world.engine.begin() as conn:  # a client stored decomposed before names were composed
        append_history(conn, tables.clients, [{"client_id": "c-0ld0decompos", "name": "Ole\u0301 Ltd", "tier": "PRO"}])
    again = api.admin("POST", "/api/keys/generate", json={"client_name": "Ol\u00e9 Ltd", "tier": "PRO"})
    assert again.json()["client_id"] == "c-0ld0decompos"  # its next key is for it, not a new empty client


def test_rotation_with_grace_keeps_the_old_key_until_it_ends(api: Api) -> None:
    api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 500})
    rotated = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 3600}).json()
    assert api.acme("GET", "/api/portfolio").status_code == 200
    listing = {k["key_id"]: k for k in api.admin("GET", "/api/keys").json()["items"]}
    assert listing[api.world.acme_key_id]["status"] == "EXPIRING"
    assert listing[rotated["key_id"]]["rate_limit"] == 500  # carried to the new key
    api.clock.moment += timedelta(seconds=3599)
    assert api.acme("GET", "/api/portfolio").status_code == 200
    api.clock.moment += timedelta(seconds=1)
    assert_problem(api.acme("GET", "/api/portfolio"), 401)
    assert api.call("GET", "/api/portfolio", rotated["api_key"]).status_code == 200


def test_a_clients_keys_share_one_count(api: Api) -> None:
    """An adversarial run: each key was counted by itself, so a rotation with a grace
    period (both keys work until it ends) or a second key of the client doubled what the
    client could send a minute: 3 a minute became 3 through the old key and 3 more through
    its successor. A client's keys now count together, REST and GraphQL alike."""
    key_id = api.world.acme_key_id
    api.admin("PUT", f"/api/keys/{key_id}/rate-limit", json={"per_minute": 3})
    successor = api.admin("POST", f"/api/keys/{key_id}/rotate", json={"grace_seconds": 3600}).json()
    for _ in range(3):
        assert api.acme("GET", "/api/ai/performance").status_code == 200
    assert_problem(api.call("GET", "/api/ai/performance", successor["api_key"]), 429, "over the limit of 3")
    assert api.call("POST", "/graphql", successor["api_key"], json={"query": "{ __typename }"}).status_code == 429
    second = api.admin("POST", "/api/keys/generate", json={"client_name": "Acme Capital", "tier": "STANDARD"}).json()
    api.admin("PUT", f"/api/keys/{second['key_id']}/rate-limit", json={"per_minute": 3})
    assert_problem(api.call("GET", "/api/ai/performance", second["api_key"]), 429, "keys count together")
    assert api.call("GET", "/api/ai/performance", api.world.beta_key).status_code == 200  # another client's count


def test_rate_limit_per_key_with_headers(api: Api) -> None:
    set_limit = api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 3})
    assert set_limit.json()["rate_limit"] == 3
    remaining = []
    for _ in range(3):
        response = api.acme("GET", "/api/ai/performance")
        assert response.status_code == 200
        assert response.headers["RateLimit-Policy"] == '"per-key";q=3;w=60'
        remaining.append(int(re.search(r"r=(\d+)", response.headers["RateLimit"]).group(1)))
    assert remaining == [2, 1, 0]
    refused = api.acme("GET", "/api/ai/performance")
    body = assert_problem(refused, 429, "over the limit of 3 requests per minute")
    assert body["title"] == "Too Many Requests"
    assert 1 <= int(refused.headers["Retry-After"]) <= 120 and "r=0" in refused.headers["RateLimit"]
    assert api.call("GET", "/api/ai/performance", api.world.beta_key).status_code == 200  # other keys unaffected
    assert (
        api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": None}).json()[
            "rate_limit"
        ]
        is None
    )
    assert api.acme("GET", "/api/ai/performance").status_code == 200  # back to STANDARD's 60
    tier = api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/tier", json={"tier": "PRO"}).json()
    assert tier["tier"] == "PRO"
    assert api.acme("GET", "/api/ai/performance").headers["RateLimit-Policy"] == '"per-key";q=300;w=60'
    macro = api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/macro-access", json={"enabled": False}).json()
    assert macro["macro_access"] is False


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record) + (record.exc_text or ""))


def test_a_key_sent_in_the_url_is_in_no_log_line(api: Api) -> None:
    """An adversarial run: a key sent as `?api_key=` (which the service does not read, and
    says so) or in a path reached uvicorn's access log whole, and one sent as a GraphQL
    argument reached the refusal's log line (upper-cased as a symbol). Log lines keep the
    key's prefix only, whichever logger and handler write them."""
    access, root = logging.getLogger("uvicorn.access"), logging.getLogger()
    collector, levels = _Collect(), (access.level, root.level)
    for logger in (access, root):
        logger.addHandler(collector)
        logger.setLevel(logging.INFO)
    key = api.world.acme_key
    try:
        assert_problem(api.call("GET", f"/api/portfolio?api_key={key}"), 401, "query parameter")
        assert api.acme("GET", f"/api/market/symbol/{key}").status_code in (404, 422)
        assert api.acme("POST", "/graphql", json={"query": f'{{ instrument(symbol: "{key}") {{ name }} }}'}).json()
    finally:
        for logger, level in zip((access, root), levels, strict=True):
            logger.removeHandler(collector)
            logger.setLevel(level)
    text = "\n".join(line for line in collector.lines if not line.startswith("HTTP Request:"))  # httpx: the test's
    assert "?api_key=svc-sk-<redacted>" in text and "refused (NOT_FOUND)" in text, text
    assert key.split("-")[-1] not in text.lower(), text


def test_no_secret_in_any_table_log_line_or_error_body(api: Api) -> None:
    collector = _Collect()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(collector)
    root.setLevel(logging.DEBUG)
    secrets, bodies = [ADMIN_KEY, api.world.acme_key, api.world.beta_key], []
    try:
        created = api.admin("POST", "/api/keys/generate", json={"client_name": "Hygiene", "tier": "PRO"}).json()
        secrets.append(created["api_key"])
        rotated = api.admin("POST", f"/api/keys/{created['key_id']}/rotate", json={"grace_seconds": 0}).json()
        secrets.append(rotated["api_key"])
        api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke")
        for key in secrets + ["svc-sk-" + "9" * 40, "svc-admin-" + "e" * 32, "svc-sk-bad"]:
            for method, path in (("GET", "/api/portfolio"), ("GET", "/api/keys"), ("POST", "/api/portfolio/trade")):
                response = api.call(method, path, key, json={"side": "buy", "symbol": key, "quantity": 1, "price": "1"})
                if response.status_code >= 400:
                    bodies.append(response.text)
        bodies.append(api.acme("GET", f"/api/market/symbol/{api.world.acme_key[:20]}").text)
    finally:
        root.removeHandler(collector)
        root.setLevel(previous)
    assert len(bodies) > 10 and collector.lines
    with api.world.engine.connect() as conn:
        stored = [str(tuple(row)) for table in metadata.sorted_tables for row in conn.execute(select(table))]
    haystacks = {"tables": "\n".join(stored), "logs": "\n".join(collector.lines), "error bodies": "\n".join(bodies)}
    for where, text in haystacks.items():
        for secret in secrets:
            assert secret not in text, f"a secret is in the {where}"
            assert secret.split("-")[-1] not in text, f"a secret's hex part is in the {where}"
        assert not re.search(r"svc-(sk|admin)-[0-9a-f]{32,}", text), f"a key-shaped secret is in the {where}"


def test_a_key_change_made_by_another_worker_holds_here_from_the_next_request(api: Api) -> None:
    """Each API process keeps the client keys it has seen (desk/keys.py KeyCache) and
    reuses them while the keys' version it reads per request has not moved. A second app on
    the same store stands for the other worker: its writes (a limit, a tier, a revocation,
    each an appended event) hold in this one from the very next request."""
    from api.app import create_app
    from pipeline.serving import serve_in_thread
    from tests.api.conftest import Clock

    macro = "/api/macro_insights"
    assert_problem(api.acme("GET", macro), 403)  # STANDARD: no macro insights; the key is now known here
    assert api.acme("GET", "/api/portfolio").headers["RateLimit-Policy"].split("q=")[1].startswith("60;")
    with serve_in_thread(create_app(api.world.settings, now=Clock())) as other:

        def admin(method: str, path: str, **kwargs) -> None:
            answer = api.http.request(method, other + path, headers={"X-API-Key": ADMIN_KEY}, **kwargs)
            assert answer.status_code == 200, answer.text

        admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 7})
        assert api.acme("GET", "/api/portfolio").headers["RateLimit-Policy"].split("q=")[1].startswith("7;")
        admin("PUT", f"/api/keys/{api.world.acme_key_id}/tier", json={"tier": "PRO"})
        assert api.acme("GET", macro).status_code != 403
        admin("POST", f"/api/keys/{api.world.acme_key_id}/revoke")
    assert_problem(api.acme("GET", "/api/portfolio"), 401, "revoked")
    assert_problem(api.acme("GET", "/api/ai-portfolio/history"), 401)  # checked before the admin rule: 401, not 403


@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_read_whose_key_changed_meanwhile_starts_over_checked_and_counted_once(api: Api, counted_in: str) -> None:
    """On a read route the keys' version rides on the handler's own version read (one
    statement, not two: api/security.py KeyCheckedRoute). When it moved, nothing the handler
    did leaves: not its answer, not its error (a 404 is a 401 for a revoked key), and the
    request starts over with the key checked afresh, still counted once: with the counts
    in process memory, and in the database as several workers keep them (on Postgres in
    one autocommit statement that does not wait for the check: api/ratelimit.py)."""
    from api.app import create_app
    from pipeline.serving import serve_in_thread
    from tests.api.conftest import Clock

    here = create_app(api.world.settings.model_copy(update={"rate_limit_store": counted_in}), now=Clock())
    with serve_in_thread(here) as this, serve_in_thread(create_app(api.world.settings, now=Clock())) as other:

        def acme(path: str):
            return api.http.request("GET", this + path, headers={"X-API-Key": api.world.acme_key})

        def admin(method: str, path: str, **kwargs) -> None:
            answer = api.http.request(method, other + path, headers={"X-API-Key": ADMIN_KEY}, **kwargs)
            assert answer.status_code == 200, answer.text

        first = acme("/api/ai/performance")  # the key is now known to this worker
        assert re.search(r"r=(\d+)", first.headers["RateLimit"]).group(1) == "59"
        admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 2})
        # Counted once under the new limit (counted twice, it would be refused).
        second = acme("/api/ai/performance")
        assert second.status_code == 200 and second.headers["RateLimit-Policy"].startswith('"per-key";q=2;')
        assert re.search(r"r=(\d+)", second.headers["RateLimit"]).group(1) == "0"
        assert_problem(acme("/api/ai/performance"), 429)
        admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": None})
        assert_problem(acme("/api/market/symbol/NOPE"), 404)
        admin("POST", f"/api/keys/{api.world.acme_key_id}/revoke")
        assert_problem(acme("/api/market/symbol/NOPE"), 401, "revoked")  # not the handler's 404
        assert_problem(acme("/api/ai/performance"), 401, "revoked")


def _remaining(response) -> int:
    return int(re.search(r"r=(\d+)", response.headers["RateLimit"]).group(1))


def test_the_first_request_of_a_key_rotated_out_or_revoked_uses_none_of_its_clients_quota(api: Api) -> None:
    """A key this worker knew is checked from memory and counted at once; when the keys'
    version then moved (rotated out without grace, revoked), the request starts over and
    is a 401. That 401 kept the count taken before the version was read, one of the
    client's shared requests a minute, and showed the client's RateLimit header: the
    successor's next request said r=56 where 57 was left. REST and GraphQL's kept answers
    alike."""
    market = {"query": "{ instruments(first: 2) { nodes { symbol } } }"}
    for _ in range(2):  # the key, and the GraphQL document, now known to this worker
        assert api.acme("GET", "/graphql", params=market).status_code == 200
    left = _remaining(api.acme("GET", "/api/portfolio/summary"))
    successor = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 0}).json()
    rotated_out = api.acme("GET", "/graphql", params=market)
    assert_problem(rotated_out, 401, "rotated out")
    assert "RateLimit" not in rotated_out.headers and "RateLimit-Policy" not in rotated_out.headers
    assert _remaining(api.call("GET", "/api/portfolio/summary", successor["api_key"])) == left - 1
    second = api.admin("POST", "/api/keys/generate", json={"client_name": "Acme Capital", "tier": "STANDARD"}).json()
    left = _remaining(api.call("GET", "/api/portfolio/summary", second["api_key"]))
    api.admin("POST", f"/api/keys/{second['key_id']}/revoke")
    revoked = api.call("GET", "/api/portfolio/summary", second["api_key"])
    assert_problem(revoked, 401, "revoked")
    assert "RateLimit" not in revoked.headers and "RateLimit-Policy" not in revoked.headers
    assert _remaining(api.call("GET", "/api/portfolio/summary", successor["api_key"])) == left - 1


def test_every_keyed_route_checks_its_key_however_it_declares_it(api: Api) -> None:
    """The route checks the key before anything else of the request (api/security.py
    KeyCheckedRoute) whether the handler receives its caller or names the dependency in
    `dependencies=[...]`, which gives the handler nothing. Both answer 401 for an unknown
    or revoked key and 200 for a valid one, reads and writes alike; every /api/ route of
    the service checks its key so."""
    from fastapi import APIRouter, Depends

    from api.app import create_app
    from api.security import Access, KeyCheckedRoute, principal
    from pipeline.serving import serve_in_thread
    from tests.api.conftest import Clock

    app = create_app(api.world.settings, now=Clock())
    probes = APIRouter(prefix="/probe", route_class=KeyCheckedRoute)

    @probes.get("/given")
    def given(caller: CallerDep) -> dict:
        return {"client": caller.client_id}

    @probes.post("/given")
    def given_write(caller: CallerDep) -> dict:
        return {"client": caller.client_id}

    @probes.get("/named", dependencies=[Depends(principal)])
    def named() -> dict:
        return {"client": None}

    app.include_router(probes)
    routes = {(r.path, tuple(sorted(r.methods))): r for r in app.routes if r.path.startswith("/probe")}
    assert all(route.access is Access.KEY for route in routes.values())
    service = [r for r in app.routes if r.path.startswith("/api/")]
    assert len(service) >= 30 and all(isinstance(r, KeyCheckedRoute) and r.access is not Access.OPEN for r in service)
    with serve_in_thread(app) as base:

        def call(method: str, path: str, key: str):
            return api.http.request(method, base + path, headers={"X-API-Key": key})

        unknown = "svc-sk-" + "0" * 32
        for method, path in (("GET", "/probe/given"), ("POST", "/probe/given"), ("GET", "/probe/named")):
            assert call(method, path, api.world.acme_key).status_code == 200, path
            assert_problem(call(method, path, unknown), 401, "unknown")
            assert_problem(call(method, path, "svc-sk-nothex"), 401, "malformed")
        assert call("GET", "/probe/given", api.world.acme_key).json()["client"].startswith("c")
        api.admin("POST", f"/api/keys/{api.world.acme_key_id}/revoke")
        for method, path in (("GET", "/probe/given"), ("POST", "/probe/given"), ("GET", "/probe/named")):
            assert_problem(call(method, path, api.world.acme_key), 401, "revoked")


def test_a_successor_cannot_be_rotated_while_its_predecessor_still_works(api: Api) -> None:
    """Rotating K1 with a grace period to K2, then K2 with a grace period to K3, left K1,
    K2 and K3 all working: three keys of one rotation, where the rule is two at most."""
    first = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 3600}).json()
    again = api.admin("POST", f"/api/keys/{first['key_id']}/rotate", json={"grace_seconds": 3600})
    assert_problem(again, 409, f"replaced '{api.world.acme_key_id}', which still works until", "grace_seconds 0")
    assert [api.call("GET", "/api/portfolio", k).status_code for k in (api.world.acme_key, first["api_key"])] == [
        200
    ] * 2
    api.clock.moment += timedelta(seconds=3600)  # the predecessor's grace is over: the successor may rotate
    assert api.admin("POST", f"/api/keys/{first['key_id']}/rotate", json={"grace_seconds": 60}).status_code == 201

    second = api.admin("POST", f"/api/keys/{api.world.beta_key_id}/rotate", json={"grace_seconds": 3600}).json()
    api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke")  # the predecessor revoked: one key works
    third = api.admin("POST", f"/api/keys/{second['key_id']}/rotate", json={"grace_seconds": 3600})
    assert third.status_code == 201, third.text
    # without a grace period a successor stops as its own successor starts: two keys work, as before
    assert api.admin("POST", f"/api/keys/{third.json()['key_id']}/rotate", json={"grace_seconds": 0}).status_code == 201


def test_a_change_to_the_successor_holds_on_the_old_key_in_its_grace_period(api: Api) -> None:
    """After a rotation with a grace period, the old key is 409 to change ("change its
    successor instead"), and changing the successor left the old key its PRO tier, macro
    access and rate limit until the grace ended: the access an operator took away stayed on
    the old key for up to 30 days. A change to a key now holds on the keys it replaced that
    still work, from the next request."""
    old, old_key = api.world.beta_key_id, api.world.beta_key  # PRO: macro insights by its tier
    new = api.admin("POST", f"/api/keys/{old}/rotate", json={"grace_seconds": 86400}).json()
    admitted = api.call("GET", "/api/macro_insights", old_key).status_code
    assert admitted != 403  # 503 in this world: no macro week built, but past the access check
    api.admin("PUT", f"/api/keys/{new['key_id']}/macro-access", json={"enabled": False})
    assert_problem(api.call("GET", "/api/macro_insights", old_key), 403)  # switched off
    api.admin("PUT", f"/api/keys/{new['key_id']}/macro-access", json={"enabled": None})
    assert api.call("GET", "/api/macro_insights", old_key).status_code == admitted  # the PRO tier's rule again
    api.admin("PUT", f"/api/keys/{new['key_id']}/tier", json={"tier": "STANDARD"})
    assert_problem(api.call("GET", "/api/macro_insights", old_key), 403)  # STANDARD's rule
    api.admin("PUT", f"/api/keys/{new['key_id']}/rate-limit", json={"per_minute": 2})
    answers = [api.call("GET", "/api/ai/performance", old_key) for _ in range(3)]
    assert_problem(answers[-1], 429, "over the limit of 2")
    listing = {k["key_id"]: k for k in api.admin("GET", "/api/keys").json()["items"]}
    assert (listing[old]["tier"], listing[old]["rate_limit"], listing[old]["status"]) == ("STANDARD", 2, "EXPIRING")
    newer = api.admin("POST", f"/api/keys/{new['key_id']}/rotate", json={"grace_seconds": 0}).json()
    api.admin("PUT", f"/api/keys/{newer['key_id']}/rate-limit", json={"per_minute": 1})  # through a chain
    assert {k["key_id"]: k["rate_limit"] for k in api.admin("GET", "/api/keys").json()["items"]}[old] == 1


def test_revoking_a_successor_revokes_the_old_key_in_its_grace_period_too(api: Api) -> None:
    """After a rotation with a grace period, revoking the new key left the old one working
    until its grace ended (up to 30 days): a client whose key leaked revokes the new key and
    expects neither to work. A revocation now holds on the keys the revoked one replaced
    that still work; revoking the old key alone leaves its successor working."""
    old, old_key = api.world.acme_key_id, api.world.acme_key
    new = api.admin("POST", f"/api/keys/{old}/rotate", json={"grace_seconds": 86400}).json()
    newer = api.admin("POST", f"/api/keys/{new['key_id']}/rotate", json={"grace_seconds": 0}).json()
    assert api.call("GET", "/api/portfolio", old_key).status_code == 200  # in its grace period
    revoked = api.admin("POST", f"/api/keys/{newer['key_id']}/revoke")
    assert revoked.status_code == 200 and revoked.json()["status"] == "REVOKED"
    for key in (newer["api_key"], new["api_key"], old_key):
        assert_problem(api.call("GET", "/api/portfolio", key), 401)
    listing = {k["key_id"]: k["status"] for k in api.admin("GET", "/api/keys").json()["items"]}
    assert (listing[old], listing[new["key_id"]], listing[newer["key_id"]]) == ("REVOKED", "ROTATED", "REVOKED")
    beta = api.admin("POST", f"/api/keys/{api.world.beta_key_id}/rotate", json={"grace_seconds": 3600}).json()
    api.admin("POST", f"/api/keys/{api.world.beta_key_id}/revoke")  # the old key alone
    assert_problem(api.call("GET", "/api/portfolio", api.world.beta_key), 401)
    assert api.call("GET", "/api/portfolio", beta["api_key"]).status_code == 200


def test_a_key_in_its_grace_period_is_answered_with_deprecation_and_sunset(api: Api) -> None:
    """A key in a rotation's grace period worked with no word to its client until it
    stopped: every answer to it now says it is deprecated (RFC 9745) and when it stops
    working (RFC 8594), REST and GraphQL alike, errors included; no other key's does."""
    rotated_at = api.clock.moment
    new = api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 7200}).json()
    api.clock.moment += timedelta(seconds=90)
    for answer in (
        api.acme("GET", "/api/portfolio"),
        api.acme("POST", "/graphql", json={"query": "{ __typename }"}),
        api.acme("GET", "/api/market/history/NOPE"),
    ):
        assert answer.headers["Deprecation"] == f"@{int(rotated_at.timestamp())}", answer.headers
        assert parsedate_to_datetime(answer.headers["Sunset"]) == rotated_at + timedelta(seconds=7200)
        assert answer.headers["Sunset"].endswith(" GMT")
    for key in (new["api_key"], api.world.beta_key, ADMIN_KEY):
        answer = api.call("GET", "/api/portfolio", key)
        assert answer.status_code == 200 and "Deprecation" not in answer.headers and "Sunset" not in answer.headers


@pytest.mark.parametrize("counted_in", ["memory", "database"])
def test_a_key_in_its_grace_period_refused_over_its_limit_is_told_it_is_deprecated(api: Api, counted_in: str) -> None:
    """The 429 was the one answer to a key in a rotation's grace period without Deprecation
    and Sunset (refused, the request had no caller for the headers to come from): a client
    throttled until its old key stopped was never told to move. Every 429 now says it, REST
    and GraphQL, reads and writes, the counts in memory or in the database."""
    from api.app import create_app
    from pipeline.serving import serve_in_thread
    from tests.api.conftest import Clock

    rotated_at = api.clock.moment
    api.admin("PUT", f"/api/keys/{api.world.acme_key_id}/rate-limit", json={"per_minute": 2})
    api.admin("POST", f"/api/keys/{api.world.acme_key_id}/rotate", json={"grace_seconds": 7200})
    clock = Clock()
    clock.moment = rotated_at + timedelta(seconds=90)
    here = create_app(api.world.settings.model_copy(update={"rate_limit_store": counted_in}), now=clock)
    with serve_in_thread(here) as base:

        def acme(method: str, path: str, **kwargs):
            return api.http.request(method, base + path, headers={"X-API-Key": api.world.acme_key}, **kwargs)

        answers = [acme("GET", "/api/ai/performance") for _ in range(3)]
        answers += [
            acme("POST", "/graphql", json={"query": "{ __typename }"}),
            acme("POST", "/api/portfolio/cash", json={}),
        ]
    assert [a.status_code for a in answers] == [200, 200, 429, 429, 429]
    for answer in answers:
        assert answer.headers["Deprecation"] == f"@{int(rotated_at.timestamp())}", answer.headers
        assert parsedate_to_datetime(answer.headers["Sunset"]) == rotated_at + timedelta(seconds=7200)


def test_the_key_list_pages_and_a_walk_sees_every_key_once_while_keys_are_issued(api: Api) -> None:
    """GET /api/keys answered every key ever issued in one list, however many: it pages
    like every other list (`limit`, `cursor`), in the order keys were issued, and a key
    issued between two pages is neither repeated nor skipped."""
    for i in range(5):
        api.admin("POST", "/api/keys/generate", json={"client_name": f"Paged {i}", "tier": "STANDARD"})
        api.clock.moment += timedelta(seconds=1)
    seen, cursor, pages = [], None, 0
    while True:
        page = api.admin("GET", "/api/keys", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        assert len(page["items"]) <= 2
        seen += [k["key_id"] for k in page["items"]]
        pages += 1
        if pages == 2:
            api.admin("POST", "/api/keys/generate", json={"client_name": "Late Fund", "tier": "PRO"})
        cursor = page["next_cursor"]
        if cursor is None:
            break
    everything = api.admin("GET", "/api/keys", params={"limit": 1000}).json()
    assert seen == [k["key_id"] for k in everything["items"]] and len(seen) == len(set(seen))
    assert everything["next_cursor"] is None and everything["items"][-1]["client_name"] == "Late Fund"
    assert_problem(api.admin("GET", "/api/keys", params={"limit": 1001}), 422)
    assert_problem(api.admin("GET", "/api/keys", params={"cursor": "bm90IGEgY3Vyc29y"}), 422)


def test_a_key_revoked_while_its_requests_body_arrives_writes_nothing(api: Api) -> None:
    """A request with a body has its key checked before a byte of the body is read (the
    edge), and was acted on however long the body then took: a withdrawal whose body came
    half a second after the key was revoked was booked (201), and one that trickles in
    for minutes would be too. A body that completes a while after its key was checked
    has the key checked again (api/edge.py, api/security.py `still_held`): revoked or
    rotated out meanwhile, a 401 with nothing written; a key that still holds goes on."""
    from tests.api import rawhttp

    w = api.world
    other = api.admin("POST", "/api/keys/generate", json={"client_name": "Acme Capital", "tier": "STANDARD"})
    reader = other.json()["api_key"]  # the client's second key, which the revocation leaves working
    cash = api.call("GET", "/api/portfolio/summary", reader).json()["cash"]

    def late(body: bytes, revoked: str | None = None) -> Iterator[bytes]:
        time.sleep(0.6)  # the headers are sent and the key checked; the body is on its way
        if revoked is not None:
            api.admin("POST", f"/api/keys/{revoked}/revoke")
        yield body

    def sent(path: str, key: str, body: dict | bytes, revoked: str | None = None) -> rawhttp.Answer:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        media = "multipart/form-data; boundary=B" if isinstance(body, bytes) else "application/json"
        headers = {"X-API-Key": key, "Content-Type": media, "Connection": "close"}
        return rawhttp.stream(api.base, path, headers, late(data, revoked), length=len(data))

    slow = sent("/api/portfolio/cash", reader, {"amount": "-1.00"})  # a slow body of a key that holds
    assert slow.status == 201, slow.body
    cash = api.call("GET", "/api/portfolio/summary", reader).json()["cash"]
    withdrawal = sent("/api/portfolio/cash", w.acme_key, {"amount": "-1000.00"}, revoked=w.acme_key_id)
    mutation = {"query": 'mutation { moveCash(amount: "-1000.00") { __typename } }'}
    rotated = api.admin("POST", f"/api/keys/{w.beta_key_id}/rotate", json={"grace_seconds": 3600}).json()
    by_graphql = sent("/graphql", rotated["api_key"], mutation, revoked=rotated["key_id"])
    note = (
        b'--B\r\nContent-Disposition: form-data; name="file"; filename="n.txt"\r\nContent-Type: text/plain\r\n\r\n'
        b"LIQ beat its earnings forecast.\r\n--B--\r\n"
    )
    third = api.admin("POST", "/api/keys/generate", json={"client_name": "Acme Capital", "tier": "STANDARD"}).json()
    upload = sent("/api/portfolio/upload-research", third["api_key"], note, revoked=third["key_id"])
    for refused in (withdrawal, by_graphql, upload):
        assert refused.status == 401, refused.body
        assert refused.headers["content-type"] == "application/problem+json"
        assert "revoked or rotated out while its body arrived" in refused.json()["detail"], refused.body
        assert "ratelimit" not in refused.headers  # not counted
    assert api.call("GET", "/api/portfolio/summary", reader).json()["cash"] == cash  # nothing withdrawn
    assert api.call("GET", "/api/portfolio/cash", w.beta_key).status_code == 401  # revoked with its successor
    stored = sent("/api/portfolio/upload-research", reader, note)
    assert stored.status == 200 and stored.json()["already_stored"] is False, stored.body  # the refused one was not


def test_a_key_revoked_while_its_upload_is_read_files_nothing(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upload's file is read (a PDF in its sandbox: up to `pdf_timeout_seconds`, 20 s,
    after waiting as long for a sandbox) after its key was checked and before anything is
    stored: a note whose key was revoked during the read was filed all the same. The key
    is checked again before the upload stores anything when the read took a while
    (api/security.py `held_since_check`): 401, nothing filed."""
    import threading

    from desk import Desk

    w = api.world
    reading, revoked = threading.Event(), threading.Event()
    read = Desk.read_note

    def slow_read(self: Desk, *args: object) -> object:  # as a long PDF read: the key is revoked meanwhile
        reading.set()
        assert revoked.wait(10)
        return read(self, *args)

    monkeypatch.setattr(Desk, "read_note", slow_read)
    note = {"file": ("n.txt", b"LIQ beat its earnings forecast.", "text/plain")}
    with ThreadPoolExecutor(1) as pool:
        upload = pool.submit(api.acme, "POST", "/api/portfolio/upload-research", files=note)
        assert reading.wait(10)
        assert api.admin("POST", f"/api/keys/{w.acme_key_id}/revoke").status_code == 200
        time.sleep(0.3)  # the read outlasts the recheck's threshold
        revoked.set()
        body = assert_problem(upload.result(), 401, "revoked or rotated out while its file was read")
    monkeypatch.setattr(Desk, "read_note", read)
    second = api.admin("POST", "/api/keys/generate", json={"client_name": "Acme Capital", "tier": "STANDARD"})
    again = api.call("POST", "/api/portfolio/upload-research", second.json()["api_key"], files=note)
    assert again.status_code == 200 and again.json()["already_stored"] is False, (again.text, body)
