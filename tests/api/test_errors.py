"""Every error status is RFC 9457 problem+json with a request id: 405, 413, 415, 422
(with the failing fields), plus the domain ones covered beside their endpoints."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api.conftest import Api, assert_problem
from tests.conftest import ADMIN_KEY

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def test_wrong_method_is_405(api: Api) -> None:
    body = assert_problem(api.acme("DELETE", "/api/market/latest"), 405)
    assert body["title"] == "Method Not Allowed"


def test_a_problem_type_has_one_title_whatever_the_occurrence(api: Api) -> None:
    """RFC 9457 3.1.3: a type's title does not change from occurrence to occurrence. The
    invalid-input type was titled "Unprocessable Entity" (a schema failure), "Invalid input"
    (a bad date) or "Trade rejected", not-found "Not Found" (no route) or "Not found" (no
    symbol); each occurrence now says what happened in its detail, under its type's title,
    the one its page shows."""
    occurrences = {
        "invalid-input": [
            api.acme("POST", "/api/portfolio/trade", json={"side": "hold", "quantity": -1}),  # the schema
            api.acme("GET", "/api/market/history/LIQ", params={"start": "2026-13-01"}),  # a date
            api.acme(
                "POST", "/api/portfolio/trade", json={"side": "BUY", "symbol": "LIQ", "quantity": 1, "price": "9999"}
            ),
            api.acme("POST", "/api/portfolio/cash", json={"amount": "-100000000"}),  # the cash it would leave
        ],
        "not-found": [api.acme("GET", "/api/nothing-here"), api.acme("GET", "/api/market/symbol/NOPE")],
    }
    for slug, answers in occurrences.items():
        bodies = [answer.json() for answer in answers]
        assert {(b["status"], b["type"].rpartition("/")[2]) for b in bodies} == {(bodies[0]["status"], slug)}, bodies
        assert len({b["title"] for b in bodies}) == 1, [(b["title"], b["detail"]) for b in bodies]
        assert len({b["detail"] for b in bodies}) == len(bodies), bodies  # what happened, each its own
        page = api.http.get(f"/problems/{slug}")
        assert f"{bodies[0]['status']} {bodies[0]['title']}" in page.text, page.text


def test_head_answers_every_get_route_as_its_get_does_without_a_body(api: Api) -> None:
    """RFC 9110: a server that answers GET answers HEAD, the GET's status and header
    fields without the content. Every GET operation answered HEAD with a 405."""
    openapi = api.http.get("/openapi.json").json()
    gets = [path.replace("{symbol}", "LIQ") for path, item in openapi["paths"].items() if "get" in item]
    assert len(gets) > 20, gets
    for path in gets:
        got, head = api.admin("GET", path), api.admin("HEAD", path)
        assert head.status_code == got.status_code, (path, head.status_code, got.status_code, head.headers)
        assert head.content == b"", path
        for name in ("content-type", "ratelimit-policy", "cache-control", "allow"):
            assert head.headers.get(name) == got.headers.get(name), (path, name)
    for key in (None, "svc-sk-" + "0" * 40):  # the key is checked as the GET's is
        assert_problem(api.call("GET", "/api/portfolio", key), 401)
        refused = api.call("HEAD", "/api/portfolio", key)
        assert refused.status_code == 401 and refused.content == b"", refused.headers
    for method in ("GET", "HEAD"):  # a parameter the route does not take is refused alike
        refused = api.admin(method, "/api/portfolio/trade", params={"offset": 5})
        assert refused.status_code == 422 and refused.headers["content-type"] == "application/problem+json"
    assert_problem(api.admin("DELETE", "/api/portfolio"), 405)  # and a method the path lacks is still its 405
    # the app itself sends no content (uvicorn and httpx drop a HEAD answer's too; another server may not)
    sent = asyncio.run(_asgi(create_app(api.world.settings, now=api.clock), "HEAD", "/api/portfolio"))
    assert sent[0]["status"] == 200 and b"".join(m.get("body", b"") for m in sent[1:]) == b"", sent


async def _asgi(app, method: str, path: str) -> list[dict]:
    """The ASGI messages `app` sends for one request with the admin key, as no server or
    client changed them."""
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"x-api-key", ADMIN_KEY.encode()), (b"host", b"test")],
        "client": ("127.0.0.1", 1),
        "server": ("test", 80),
        "scheme": "http",
        "root_path": "",
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def test_schema_violations_name_the_fields(api: Api) -> None:
    body = assert_problem(api.acme("POST", "/api/portfolio/trade", json={"side": "hold", "quantity": -1}), 422)
    fields = {tuple(e["loc"]) for e in body["errors"]}
    assert {("body", "side"), ("body", "quantity"), ("body", "symbol"), ("body", "price")} <= fields
    assert_problem(api.acme("GET", "/api/market/history/LIQ", params={"limit": 0}), 422)
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", content=b"{not json", headers={"content-type": "application/json"}),
        422,
    )
    body = assert_problem(api.admin("POST", "/api/keys/generate", json={"client_name": "X", "tier": "GOLD"}), 422)
    assert body["errors"][0]["loc"] == ["body", "tier"]


def test_json_endpoints_refuse_other_media_types(api: Api) -> None:
    assert_problem(
        api.acme("POST", "/api/portfolio/trade", content=b"side=buy", headers={"content-type": "text/plain"}),
        415,
        "application/json",
    )
    assert_problem(api.acme("POST", "/api/portfolio/trade", data={"side": "buy"}), 415)


def test_uploads_over_the_limit_are_413_before_and_while_reading(api: Api) -> None:
    small = api.world.settings.model_copy(update={"pdf_max_bytes": 1000})
    with serve_in_thread(create_app(small, now=api.clock)) as base:
        big = b"%PDF-1.4\n" + b"0" * 200_000
        declared = httpx.post(
            f"{base}/api/portfolio/upload-pdf",
            headers={"X-API-Key": api.world.acme_key},
            files={"file": ("big.pdf", big, "application/pdf")},
        )
        assert_problem(declared, 413, "over the limit")

        def chunks():
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="s.pdf"\r\n'
            yield b"Content-Type: application/pdf\r\n\r\n%PDF-1.4\n" + b"1" * 5000 + b"\r\n--b--\r\n"

        streamed = httpx.post(
            f"{base}/api/portfolio/upload-pdf",
            content=chunks(),
            headers={"X-API-Key": api.world.acme_key, "content-type": "multipart/form-data; boundary=b"},
        )
        assert_problem(streamed, 413, "over the limit of 1,000 bytes")


def test_empty_and_broken_uploads_are_422(api: Api) -> None:
    assert_problem(
        api.acme("POST", "/api/portfolio/upload-pdf", files={"file": ("e.pdf", b"", "application/pdf")}), 422, "empty"
    )
    broken = api.acme(
        "POST", "/api/portfolio/upload-pdf", files={"file": ("b.pdf", b"%PDF-1.4 garbage", "application/pdf")}
    )
    assert_problem(broken, 422)
    assert api.acme("GET", "/api/portfolio").json()["positions"] == []  # nothing half-written


def test_a_store_whose_schema_is_behind_answers_503_not_500(unmade_settings: Settings) -> None:
    """An API started on a store not yet upgraded serves degraded (/healthz says so), and
    every keyed request was a 500 'internal error' from a missing table, the edge's key
    check's one logged as an exception in the ASGI application. They are 503s saying an
    upgrade is pending, with Retry-After."""
    from pydantic import SecretStr

    from api.problems import SCHEMA_BEHIND

    Path(unmade_settings.database_url.removeprefix("sqlite:///")).touch()
    settings = unmade_settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)})
    with serve_in_thread(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert http.get("/healthz").json()["status"] == "degraded"
        for key in ("svc-sk-" + "0" * 40, ADMIN_KEY):
            for method, body in (("GET", None), ("POST", {"amount": "1"})):
                path = "/api/portfolio" if method == "GET" else "/api/portfolio/cash"
                answer = http.request(method, path, headers={"X-API-Key": key}, json=body)
                assert_problem(answer, 503, SCHEMA_BEHIND)
                assert answer.headers["Retry-After"] == "60"


def test_a_problems_type_never_echoes_the_requests_host(api: Api) -> None:
    """The type URI was built from the request's Host header: a client naming another host
    (or a cache keyed without it) got that host back inside the answer. It is the type's
    path on the service, a reference the client resolves against the URL it asked."""
    for answer in (
        api.acme("GET", "/api/nothing-here", headers={"Host": "evil.example"}),
        api.acme("GET", "/api/market/symbol/NOPE", headers={"Host": "evil.example:8443"}),
        api.call("GET", "/api/portfolio", None, headers={"Host": "evil.example", "X-Forwarded-Host": "evil.example"}),
    ):
        body = answer.json()
        assert "evil" not in answer.text and body["type"].startswith("/problems/"), body
        page = api.http.get(str(answer.request.url.join(body["type"])))  # resolved against the URL asked
        assert page.status_code == 200 and "What to do" in page.text, body["type"]


def test_head_on_a_report_builds_nothing_and_allow_names_head(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD on a PDF report built the whole report in a heavy turn to send none of it; it now
    answers from the key check alone (the GET's status, content type and caching), leaving
    out what only the build knows (length, filename, data digest: RFC 9110 9.3.2). A 405's
    Allow named GET but not HEAD, which every REST GET route answers; /graphql serves GET and
    POST only (docs/api.md), so its HEAD is a 405 whose Allow says so."""
    from api.routers import reports

    built: list[str] = []
    real = reports._pdf
    monkeypatch.setattr(reports, "_pdf", lambda kind, svc: built.append(kind) or real(kind, svc))
    for path in ("/api/quant-briefing.pdf", "/api/compliance-report.pdf"):
        head = api.acme("HEAD", path)
        assert (head.status_code, head.content, built) == (200, b"", []), head.headers
        assert head.headers["content-type"] == "application/pdf" and head.headers.get("content-length") != "0"
        assert head.headers["cache-control"] == "no-store" and "RateLimit" in head.headers
        assert api.call("HEAD", path, None).status_code == 401  # the key checked as the GET's is
    got = api.acme("GET", "/api/quant-briefing.pdf", timeout=120)
    assert got.content.startswith(b"%PDF") and built == ["quant-briefing"], (got.status_code, built)
    for method, path, allowed in (
        ("DELETE", "/api/market/latest", "GET, HEAD"),
        ("OPTIONS", "/api/portfolio/cash", "GET, HEAD, POST"),
        ("POST", "/healthz", "GET, HEAD"),
        ("HEAD", "/graphql", "GET, POST"),
    ):
        refused = api.acme(method, path)
        assert (refused.status_code, refused.headers["allow"]) == (405, allowed), (method, path, refused.headers)
