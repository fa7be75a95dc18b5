"""The sliding-window limiter: exact counts, Retry-After that is enough and not more than
needed, refused requests not counted, and the database store shared between workers."""
from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from api.ratelimit import WINDOW_SECONDS, DatabaseStore, MemoryStore, decide
from store.engine import build_engine
from store.migrations import upgrade


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
@given(limit=st.integers(1, 50), burst=st.integers(1, 120), offset=st.floats(0, 59.9),
       spread=st.floats(0, 100))
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


@pytest.mark.postgres
def test_database_store_is_shared_by_workers(postgres_url: str) -> None:
    owner = build_engine(postgres_url)
    upgrade(owner)
    workers = [DatabaseStore(build_engine(postgres_url, service_role="marketintel_app")) for _ in range(2)]
    now = 7_000 * WINDOW_SECONDS + 1.0
    allowed = [decide(workers[i % 2], "shared", 4, now + i * 0.01).allowed for i in range(6)]
    assert allowed == [True] * 4 + [False] * 2
    assert decide(workers[0], "other", 4, now).allowed
    later = now + 3 * WINDOW_SECONDS
    assert decide(workers[1], "shared", 4, later).allowed  # old windows are pruned as the minute turns
    from sqlalchemy import text

    with owner.connect() as conn:
        windows = conn.execute(text("SELECT DISTINCT window_start FROM rate_limit_counters")).scalars().all()
    assert min(windows) >= int(later // WINDOW_SECONDS) - 1
    for worker in workers:
        worker.engine.dispose()
    owner.dispose()


def test_database_store_on_sqlite_matches_memory(tmp_path) -> None:  # noqa: ANN001
    engine = build_engine(f"sqlite:///{tmp_path / 'rl.db'}")
    upgrade(engine)
    memory, database = MemoryStore(), DatabaseStore(engine)
    now = 9_000 * WINDOW_SECONDS + 30.0
    for i in range(12):
        moment = now + i * 7.5
        assert decide(memory, "k", 5, moment) == decide(database, "k", 5, moment)
