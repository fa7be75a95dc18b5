"""/docs, /redoc and the GraphiQL page reference only this server: every script, style,
image and schema URL in their HTML is a local path the app answers 200 (no browser needed;
tests/docs/test_browser.py renders them in chromium)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from market.settings import Settings
from tests.conftest import ADMIN_KEY

REFERENCE = re.compile(r"""(?:src|href)=["']([^"']+)["']|url: *["']([^"']+)["']|spec-url=["']([^"']+)["']""")


@pytest.fixture
def client(settings: Settings) -> TestClient:
    with TestClient(create_app(settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY)}))) as c:
        yield c


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "page, asset",
    [
        ("/docs", "/static/docs/swagger-ui-bundle.js"),
        ("/redoc", "/static/docs/redoc.standalone.js"),
        ("/graphql", "/static/graphiql/graphiql.min.js"),
    ],
)
def test_the_page_references_only_local_urls_that_answer(client: TestClient, page: str, asset: str) -> None:
    response = client.get(page, headers={"Accept": "text/html"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    urls = [next(g for g in m.groups() if g) for m in REFERENCE.finditer(response.text)]
    assert asset in urls, urls
    assert [u for u in urls if not u.startswith("/")] == [], "a reference to another host"
    assert "unpkg.com" not in response.text and "cdn.jsdelivr.net" not in response.text
    for url in urls:
        fetched = client.get(url)
        assert fetched.status_code == 200 and fetched.content, url


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_graphiql_is_off_with_introspection(settings: Settings) -> None:
    off = settings.model_copy(update={"admin_key": SecretStr(ADMIN_KEY), "graphql_introspection": False})
    with TestClient(create_app(off)) as c:
        assert c.get("/graphql", headers={"Accept": "text/html"}).status_code != 200


# Written by the Airflow Celery topology work of issue 22 on its own branch; the README links it already.
PENDING_PAGES = {"docs/production.md"}


def test_every_relative_link_in_the_readme_and_docs_resolves() -> None:
    from api.doc_examples import ROOT

    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in link.findall(page.read_text()):
            if "://" in target:
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.exists() and str(resolved.relative_to(ROOT)) not in PENDING_PAGES:
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_swagger_ui_keeps_a_typed_key_for_the_page_only(client: TestClient) -> None:
    """A key typed into Authorize (an operator's admin key too) is not written to the
    browser's localStorage, where any script on this origin and the next person at the
    machine would read it: Swagger UI's `persistAuthorization` is off in the served config."""
    page = client.get("/docs").text
    assert re.findall(r'"persistAuthorization":\s*(\w+)', page) == ["false"], page


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_graphiql_takes_no_headers_from_the_url(client: TestClient) -> None:
    """A crafted link (/graphql?headers={"X-API-Key": "<attacker's key>"}) does not fill the
    reader's Headers pane, so their queries and mutations never run on another's account and
    no key travels in a URL: the served page reads the URL only for `q` (the query pane),
    gives GraphiQL no `headers`, and keeps the headers typed in for the page's life only."""
    page = client.get('/graphql?headers={"X-API-Key":"svc-sk-attacker"}', headers={"Accept": "text/html"}).text
    script = "\n".join(re.findall(r"<script>(.*?)</script>", page, re.S))
    code = re.sub(r"^\s*//.*$", "", script, flags=re.M)  # the comments may say what is not done
    assert "svc-sk-attacker" not in page
    assert re.findall(r"\blocation\.\w+", code) == ["location.search", "location.pathname"], code
    assert re.findall(r"parameters\.get\(\s*[\"'](\w+)[\"']\s*\)", code) == ["q"], code
    assert not re.search(r"^\s*headers\s*:", code, re.M), "GraphiQL is given initial headers"
    assert re.search(r"\bshouldPersistHeaders:\s*false\b", code), code
