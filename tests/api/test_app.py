"""API start-up rules and the error format, over real HTTP on loopback."""

import gc
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from api.problems import ALL_TYPES
from market.errors import ConfigurationError
from market.settings import Settings
from pipeline.serving import serve_in_thread as serve
from tests.conftest import ADMIN_KEY


def test_no_admin_key_no_app(settings: Settings) -> None:
    with pytest.raises(ConfigurationError, match="MARKETINTEL_ADMIN_KEY is not set"):
        create_app(settings)


def test_malformed_admin_key_no_app(settings: Settings) -> None:
    with pytest.raises(ConfigurationError, match="malformed"):
        create_app(settings.model_copy(update={"admin_key": SecretStr("svc-admin-123")}))


def test_uvicorn_refuses_to_start_without_a_key(settings: Settings) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "uvicorn", "--factory", "api.app:create_app", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode != 0
    assert "MARKETINTEL_ADMIN_KEY is not set" in result.stderr


def test_healthz_answers_without_a_key(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))
    with serve(app) as base:
        response = httpx.get(f"{base}/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "database": "sqlite" if settings.database_url.startswith("sqlite") else "postgresql",
        "schema_current": True,
    }
    assert response.headers["X-Request-ID"]


def test_a_started_server_freezes_what_start_up_built(settings: Settings) -> None:
    """A full collection walked every object start-up made (about 190,000 in a server)
    and held every request 170-192 ms under heavy work: once the server has started they
    are frozen, and a full collection walks only what requests made since."""
    gc.unfreeze()  # the test process froze its own at start (conftest.py)
    assert gc.get_freeze_count() == 0
    app = create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))
    with serve(app) as base:
        assert httpx.get(f"{base}/healthz").status_code == 200
        assert gc.get_freeze_count() > 100_000  # the app's objects among them


def test_unknown_paths_and_methods_are_problem_json(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))
    with serve(app) as base:
        # an unknown path is answered after the key check (tests/api/test_trailing_slash.py)
        missing = httpx.get(f"{base}/api/nothing-here", headers={"X-Request-ID": "req-42", "X-API-Key": ADMIN_KEY})
        wrong_method = httpx.post(f"{base}/healthz")
        pages = {status: httpx.get(base + r.json()["type"]) for status, r in [(404, missing), (405, wrong_method)]}
        unknown_type = httpx.get(f"{base}/problems/no-such-problem")
        index = httpx.get(f"{base}/problems")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    body = missing.json()
    assert body["status"] == 404 and body["title"] == "Not Found" and body["instance"] == "/api/nothing-here"
    assert body["request_id"] == "req-42"
    assert body["type"] == "/problems/not-found"
    assert body["detail"] == "no endpoint at /api/nothing-here; the endpoints are listed at /docs"
    assert wrong_method.status_code == 405
    assert wrong_method.json()["type"] == "/problems/method-not-allowed"
    assert wrong_method.json()["detail"] == "POST is not allowed on /healthz; allowed: GET, HEAD"
    for status, page in pages.items():  # each type URI resolves, without a key, to the page about it
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert f"<h1>{status} " in page.text and "What to do" in page.text
    assert unknown_type.status_code == 404
    assert all(f"/problems/{kind.slug}" in index.text for kind in ALL_TYPES)


def test_the_problem_types_table_in_the_docs_is_the_one_the_service_answers() -> None:
    """docs/errors.md lists every problem type with its status and its one title."""
    text = (Path(__file__).parents[2] / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| (\d{3}) \| `([a-z-]+)` \| ([^|(]+?) ?(?:\(.*\))? \|$", text, re.MULTILINE)
    assert sorted((int(s), slug, title) for s, slug, title in rows) == sorted(
        (k.status, k.slug, k.title) for k in ALL_TYPES
    )
