"""Issue 18: the holes an adversarial run found, each kept closed over real HTTP."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import pytest

from api.app import create_app
from market.settings import Settings
from pipeline.serving import serve_in_thread
from tests.api import world
from tests.api.conftest import Api, Clock, assert_problem

NOTE = b"LIQ Holdings reported record profit and strong growth; analysts upgrade the outlook."


@contextmanager
def serving(settings: Settings, **limits: object) -> Iterator[Api]:
    """The seeded API with some settings changed, over real HTTP."""
    w = world.build(settings)
    clock = Clock()
    with serve_in_thread(create_app(w.settings.model_copy(update=limits), now=clock)) as base:
        client = Api(base, w, clock)
        yield client
        client.http.close()


def _research(api: Api, key: str, name: str, content: bytes, media: str = "text/plain"):  # noqa: ANN202
    return api.call("POST", "/api/portfolio/upload-research", key, files={"file": (name, content, media)})


def test_research_notes_never_cross_clients(api: Api) -> None:
    first = _research(api, api.world.acme_key, "acme-takeover-plan.txt", NOTE)
    assert first.status_code == 200, first.text
    other = _research(api, api.world.beta_key, "beta.txt", NOTE)
    assert other.status_code == 200, other.text
    body = other.json()
    assert body["already_stored"] is False and body["filename"] == "beta.txt" and body["id"] != first.json()["id"]
    assert "acme" not in other.text
    again = _research(api, api.world.beta_key, "beta-again.txt", NOTE).json()
    assert again["already_stored"] is True and again["id"] == body["id"] and again["filename"] == "beta.txt"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_plain_text_research_has_a_size_and_time_budget(api: Api) -> None:
    from sqlalchemy import func, select

    from store import tables

    limit = api.world.settings.research_text_max_bytes
    assert_problem(_research(api, api.world.acme_key, "huge.txt", b"profit " * (limit // 7 + 1)), 413,
                   "bytes of text, more than the limit of", f"{limit:,}")
    with api.world.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tables.research_notes)).scalar_one() == 0


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_reading_a_research_note_stops_at_its_time_budget(settings: Settings) -> None:
    with serving(settings, research_text_timeout_seconds=0.05) as api:
        long_note = NOTE * 6_000  # about 520 kB, under the size limit
        assert_problem(_research(api, api.world.acme_key, "long.txt", long_note), 422,
                       "reading long.txt took longer than the 0.05 s allowed")
        assert _research(api, api.world.acme_key, "short.txt", NOTE).status_code == 200
