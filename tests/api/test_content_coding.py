"""A request body sent with a content coding (`Content-Encoding: gzip`, `br`, ...) is a 415
naming the coding, with `Accept-Encoding: identity` (RFC 9110 15.5.16), and nothing is
written (api/edge.py). The service decodes no content coding: a gzipped JSON body was a 400
"byte 0x8b at offset 1 is not UTF-8", which sent its client looking for an encoding bug, and
a body declared gzip that was not (a proxy that inflated it and kept the header) was read as
it came and booked, acting on a representation other than the one declared."""

from __future__ import annotations

import gzip
import json

from tests.api.conftest import Api, assert_problem

DEPOSIT = json.dumps({"amount": "10.00"}).encode()


def _movements(api: Api) -> int:
    page = api.acme("GET", "/api/portfolio/cash", params={"limit": 1000})
    assert page.status_code == 200, page.text
    return len(page.json()["items"])


def _deposit(api: Api, body: bytes, coding: str, key: str | None = None):
    headers = {"content-type": "application/json", "content-encoding": coding}
    return api.call("POST", "/api/portfolio/cash", key or api.world.acme_key, content=body, headers=headers)


def test_a_body_with_a_content_coding_is_refused_as_such_and_nothing_is_written(api: Api) -> None:
    before = _movements(api)
    zipped = _deposit(api, gzip.compress(DEPOSIT), "gzip")
    assert_problem(zipped, 415, "Content-Encoding gzip", "send the body as it is")
    assert zipped.headers["accept-encoding"] == "identity"
    assert_problem(_deposit(api, DEPOSIT, "gzip"), 415, "Content-Encoding gzip")  # declared gzip, sent plain
    assert_problem(_deposit(api, DEPOSIT, "identity, br"), 415, "Content-Encoding br")
    graphql = api.call(
        "POST",
        "/graphql",
        api.world.acme_key,
        content=json.dumps({"query": 'mutation { moveCash(amount: "10.00") { __typename } }'}).encode(),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert_problem(graphql, 415, "Content-Encoding gzip")
    upload = api.call(
        "POST",
        "/api/portfolio/upload-research",
        api.world.acme_key,
        files={"file": ("note.txt", b"LIQ reported record profit.", "text/plain")},
        headers={"content-encoding": "deflate"},
    )
    assert_problem(upload, 415, "Content-Encoding deflate")
    assert _movements(api) == before
    assert _deposit(api, DEPOSIT, "identity").status_code == 201  # no coding at all, said so
    assert _movements(api) == before + 1


def test_the_key_is_checked_before_the_coding(api: Api) -> None:
    assert_problem(_deposit(api, DEPOSIT, "gzip", key="svc-sk-" + "0" * 40), 401)
