"""What a new user of the demo found (issue 42): every `make demo` minted another active PRO
key for the demo client. (The other finding, the validation record's count the demo
printed against the API's, is checked on the served demo: tests/pipeline/test_demo.py.)"""

from __future__ import annotations

import re

import httpx
import pytest

from market.settings import Settings
from store.engine import service_engine

KEY_LINE = re.compile(r"client key for 'Demo Client' \(PRO, ([^)]*)\): (svc-sk-[0-9a-f]+)")


def _serve_once(settings: Settings) -> tuple[str, str, str]:
    """One `demo_api` start, as the end of `marketintel demo` runs it: (how, key, kept line)."""
    from cli.demo import demo_api

    with demo_api(settings, 0) as lines:
        text = "\n".join(lines)
        how, key = KEY_LINE.search(text).groups()
        base = re.search(r"API serving on (http://127\.0\.0\.1:\d+)", text).group(1)
        response = httpx.get(f"{base}/api/portfolio/summary", headers={"X-API-Key": key}, timeout=30)
        assert response.status_code == 200, response.text  # the printed key works
        kept = next((line for line in lines if line.startswith("demo client key kept in")), "")
    return how, key, kept


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_rerunning_the_demo_leaves_the_demo_client_one_active_key(settings: Settings) -> None:
    """The demo reuses the demo client's key (kept in secrets_dir/demo-client-key, 0600)
    and revokes any other active key of the demo client, so two runs leave one active
    key, the same one both printed; a kept key that stopped working is replaced."""
    from cli.demo import DEMO_CLIENT
    from desk import keys as keystore

    engine = service_engine(settings)

    def active() -> list[str]:
        return [
            k["key_id"]
            for k in keystore.list_keys(engine)
            if k["client_name"] == DEMO_CLIENT and k["status"] == "ACTIVE"
        ]

    minted_before = keystore.generate(engine, settings, DEMO_CLIENT, "PRO")  # what a demo before the fix left
    first = _serve_once(settings)
    second = _serve_once(settings)
    assert len(active()) == 1
    assert first[1] == second[1]
    assert first[0] == "shown once" and second[0].startswith("reused from")
    assert "revoked the demo client's 1 other active key(s)" in first[2] and "revoked" not in second[2]
    assert keystore.key_view(engine, minted_before["key_id"])["status"] == "REVOKED"
    path = settings.secrets_dir / "demo-client-key"
    assert path.read_text().strip() == first[1] and oct(path.stat().st_mode & 0o777) == "0o600"

    keystore.revoke(engine, active()[0])  # an admin revoked it: the next run issues a replacement
    third = _serve_once(settings)
    assert third[0] == "shown once" and third[1] != first[1] and path.read_text().strip() == third[1]
    assert len(active()) == 1
