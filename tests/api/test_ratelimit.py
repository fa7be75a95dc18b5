"""The sliding-window limiter: exact counts, Retry-After that is enough and not more than
needed, refused requests not counted, the database store shared between workers, and
Redis shared between `marketintel serve` processes."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from api.ratelimit import WINDOW_SECONDS, DatabaseStore, MemoryStore, RedisStore, counter_store, decide
from market.errors import ConfigurationError
from market.settings import Settings
from store.engine import build_engine
from store.migrations import upgrade
from tests.conftest import ADMIN_KEY

MARKETINTEL = str(Path(sys.executable).parent / "marketintel")


def test_limit_counts_exactly_and_refusals_do_not_count() -> None:
    store = MemoryStore()
    start = 1_000 * WINDOW_SECONDS + 5.0
    decisions = [decide(store, "k", 5, start + i * 0.01) for i in range(8)]
    assert [d.allowed for d in decisions] == [True] * 5 + [False] * 3
    assert [d.remaining for d in decisions[:5]] == [4, 3, 2, 1, 0]
    assert store.hit("k", int(start // WINDOW_SECONDS))[0] == 6  # 5 counted plus this probe, refusals undone
    refused = decisions[-1]
    assert refused.headers()["Retry-After"] == str(refused.retry_after)


@hsettings(max_examples=200, deadline=None)
@given(limit=st.integers(1, 50), burst=st.integers(1, 120), offset=st.floats(0, 59.9), spread=st.floats(0, 100))
def test_retry_after_is_enough_and_tight(limit: int, burst: int, offset: float, spread: float) -> None:
    store = MemoryStore()
    start = 5_000 * WINDOW_SECONDS + offset
    moment, refused = start, None
    for i in range(burst):
        moment = start + spread * i / burst
        decision = decide(store, "k", limit, moment)
        if not decision.allowed:
            refused = decision
            break
    if refused is None:
        return
    if refused.retry_after > 1:
        early = MemoryStore()
        early._counts, early._window = dict(store._counts), store._window
        assert not decide(early, "k", limit, moment + refused.retry_after - 1.001).allowed
    assert decide(store, "k", limit, moment + refused.retry_after).allowed


@hsettings(max_examples=200, deadline=None)
@given(
    limit=st.integers(1, 50),
    cost=st.integers(2, 60),
    burst=st.integers(0, 120),
    offset=st.floats(0, 59.9),
    spread=st.floats(0, 100),
)
def test_a_request_of_several_is_counted_whole_or_refused_whole_and_retry_after_is_when_it_fits(
    limit: int, cost: int, burst: int, offset: float, spread: float
) -> None:
    """A GraphQL mutation of `cost` writes is `cost` requests: admitted while all of them
    fit, else refused and counted not at all, its Retry-After when all of them fit (enough
    and not more than needed); past the limit itself it never fits."""
    store = MemoryStore()
    start = 8_000 * WINDOW_SECONDS + offset
    moment = start
    for i in range(burst):
        moment = start + spread * i / max(1, burst)
        decide(store, "k", limit, moment)
    before = {k: v for k, v in store._counts.items() if v}
    decision = decide(store, "k", limit, moment, cost=cost)
    if decision.allowed:
        assert decision.remaining + cost <= limit
        return
    assert {k: v for k, v in store._counts.items() if v} == before  # refused whole: nothing of it counted
    if cost > limit:
        assert not decide(store, "k", limit, moment + 10 * WINDOW_SECONDS, cost=cost).allowed
        return
    if decision.retry_after > 1:
        early = MemoryStore()
        early._counts, early._window = dict(store._counts), store._window
        assert not decide(early, "k", limit, moment + decision.retry_after - 1.001, cost=cost).allowed
    assert decide(store, "k", limit, moment + decision.retry_after, cost=cost).allowed


@hsettings(max_examples=200, deadline=None)
@given(limit=st.integers(1, 50), burst=st.integers(1, 120), offset=st.floats(0, 59.9), spread=st.floats(0, 100))
def test_ratelimit_t_with_nothing_remaining_is_when_the_next_request_fits(
    limit: int, burst: int, offset: float, spread: float
) -> None:
    """`RateLimit: r=0;t=20` beside `Retry-After: 32`: `t` was the seconds left in the
    minute, and a client that waited it was refused again (the minute's hits carry into the
    next). With nothing remaining, `t` is when the next request fits, admitted or refused."""
    store = MemoryStore()
    start = 6_000 * WINDOW_SECONDS + offset
    for i in range(burst):
        moment = start + spread * i / burst
        decision = decide(store, "k", limit, moment)
        if decision.remaining == 0:
            break
    else:
        return
    header = decision.headers()
    t = int(header["RateLimit"].rsplit(";t=", 1)[1])
    if not decision.allowed:
        assert header["Retry-After"] == str(t)
    if t > 1:
        early = MemoryStore()
        early._counts, early._window = dict(store._counts), store._window
        assert not decide(early, "k", limit, moment + t - 1.001).allowed
    assert decide(store, "k", limit, moment + t).allowed


@pytest.mark.postgres
@pytest.mark.parametrize("on", ["own connection", "request connection"])
def test_database_store_is_shared_by_workers(postgres_url: str, on: str) -> None:
    """Counted on a connection of the store's own, or (as an API request counts) on the
    request's connection in autocommit, where one statement does the whole count."""
    owner = build_engine(postgres_url)
    upgrade(owner)
    workers = [DatabaseStore(build_engine(postgres_url, service_role="marketintel_app")) for _ in range(2)]
    held = (
        [w.engine.connect().execution_options(isolation_level="AUTOCOMMIT") for w in workers]
        if on == "request connection"
        else [None, None]
    )
    now = 7_000 * WINDOW_SECONDS + 1.0
    allowed = [decide(workers[i % 2], "shared", 4, now + i * 0.01, held[i % 2]).allowed for i in range(6)]
    assert allowed == [True] * 4 + [False] * 2
    assert decide(workers[0], "other", 4, now, held[0]).allowed
    later = now + 3 * WINDOW_SECONDS
    assert decide(workers[1], "shared", 4, later, held[1]).allowed  # old windows are pruned as the minute turns
    for conn in held:
        if conn is not None:
            assert conn.get_execution_options()["isolation_level"] == "AUTOCOMMIT"  # still reading without BEGIN
            conn.close()
    from sqlalchemy import text

    with owner.connect() as conn:
        windows = conn.execute(text("SELECT DISTINCT window_start FROM rate_limit_counters")).scalars().all()
    assert min(windows) >= int(later // WINDOW_SECONDS) - 1
    for worker in workers:
        worker.engine.dispose()
    owner.dispose()


def test_database_store_on_sqlite_matches_memory(tmp_path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'rl.db'}")
    upgrade(engine)
    memory, database = MemoryStore(), DatabaseStore(engine)
    now = 9_000 * WINDOW_SECONDS + 30.0
    for i in range(12):
        moment = now + i * 7.5
        assert decide(memory, "k", 5, moment) == decide(database, "k", 5, moment)
        assert decide(memory, "k", 5, moment, cost=i % 4) == decide(database, "k", 5, moment, cost=i % 4)


def test_redis_store_matches_memory(redis_url: tuple[str, str]) -> None:
    memory, shared = MemoryStore(), RedisStore(*redis_url)
    now = 11_000 * WINDOW_SECONDS + 30.0
    for i in range(12):
        moment = now + i * 7.5
        assert decide(memory, "k", 5, moment) == decide(shared, "k", 5, moment)
        assert decide(memory, "k", 5, moment, cost=i % 4) == decide(shared, "k", 5, moment, cost=i % 4)


def test_the_embedded_default_needs_no_redis_and_a_dead_redis_stops_start_up(tmp_path: Path) -> None:
    engine = build_engine(f"sqlite:///{tmp_path / 'rl.db'}")
    assert isinstance(counter_store(Settings(_env_file=None), engine), MemoryStore)
    assert isinstance(counter_store(Settings(_env_file=None, rate_limit_store="database"), engine), DatabaseStore)
    with pytest.raises(ConfigurationError, match=r"Redis at redis://:\*\*\*@127.0.0.1:1/0 does not answer"):
        counter_store(Settings(_env_file=None, redis_url="redis://:secret@127.0.0.1:1/0"), engine)
    with pytest.raises(ValueError, match="expected a URL starting with redis://"):
        Settings(_env_file=None, redis_url="http://127.0.0.1:6379")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_api(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [MARKETINTEL, "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            pytest.fail(f"marketintel serve did not start: {process.stdout.read()[-3000:]}")
        time.sleep(0.3)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_two_serve_processes_share_one_keys_budget_through_redis(
    settings: Settings, redis_url: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `marketintel serve` processes on one Redis: a key limited to 6 a minute gets 6
    answers in all, whichever process it asks, then 429 from both."""
    url, prefix = redis_url
    for name, value in {
        "MARKETINTEL_ADMIN_KEY": ADMIN_KEY,
        "MARKETINTEL_REDIS_URL": url,
        "MARKETINTEL_REDIS_KEY_PREFIX": prefix,
    }.items():
        monkeypatch.setenv(name, value)
    ports = [_free_port(), _free_port()]
    processes = [_start_api(port) for port in ports]
    try:
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        admin = {"X-API-Key": ADMIN_KEY}
        made = httpx.post(
            f"{bases[0]}/api/keys/generate", json={"client_name": "Acme", "tier": "STANDARD"}, headers=admin, timeout=30
        )
        assert made.status_code == 201, made.text
        key, key_id = made.json()["api_key"], made.json()["key_id"]
        limited = httpx.put(
            f"{bases[1]}/api/keys/{key_id}/rate-limit", json={"per_minute": 6}, headers=admin, timeout=30
        )
        assert limited.status_code == 200, limited.text
        if time.time() % WINDOW_SECONDS > WINDOW_SECONDS - 15:  # the sliding window's carry-over is not what this tests
            time.sleep(WINDOW_SECONDS - time.time() % WINDOW_SECONDS + 0.5)
        answers = [
            httpx.get(f"{bases[i % 2]}/api/portfolio", headers={"X-API-Key": key}, timeout=30) for i in range(14)
        ]
        statuses = [(i % 2, r.status_code) for i, r in enumerate(answers)]
        assert [status for _, status in statuses] == [200] * 6 + [429] * 8, statuses
        assert {process for process, status in statuses if status == 429} == {0, 1}
        assert all('"per-key";q=6;w=60' == r.headers["RateLimit-Policy"] for r in answers)
        assert httpx.get(f"{bases[0]}/api/portfolio", headers={"X-API-Key": key}, timeout=30).status_code == 429
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=20)


def test_a_redis_that_stops_answering_is_a_503_a_client_can_back_off_from(api) -> None:
    """A rate-limit store that stops answering refuses every request (fail closed) with a
    503 problem that says when to retry (Retry-After), keyed or not, with a body or not,
    and names nothing of where the store is."""
    from tests.api.conftest import _SERVER, assert_problem

    _SERVER.app.state.services.limiter = RedisStore("redis://:secret@127.0.0.1:1/0", "dead")
    for method, path, body in (("GET", "/api/portfolio", None), ("POST", "/api/portfolio/cash", {"amount": "1"})):
        for key in (api.world.acme_key, "svc-sk-" + "0" * 40, None):
            answer = api.call(method, path, key, json=body)
            problem = assert_problem(answer, 503, "retry in")
            assert int(answer.headers.get("Retry-After", "0")) >= 1, (method, key, answer.headers)
            assert "127.0.0.1" not in problem["detail"] and "redis" not in problem["detail"].lower()
