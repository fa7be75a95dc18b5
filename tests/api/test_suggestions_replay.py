"""Suggestions on a replayed market (issue 42): T2 suggests for the replay's next trading
day, years before the wall clock, and they expire at that day's close on the clock the
service runs on (the replayed market's: tests pin it), not on the wall clock. Before the
fix a re-run of T2 (an Airflow retry, a second `make demo` on the same store) judged
expiry on the wall clock and expired them the moment they were suggested."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from api.app import create_app
from desk import keys as keystore
from market.clock import EXCHANGE_TZ, DatedCalendar, default_calendar, write_replay_dates
from market.settings import Settings, get_settings
from pipeline.runner import run_stage
from pipeline.serving import serve_in_thread
from portfolio.trading import move_cash
from store import tables
from store.engine import service_engine
from tests.api.conftest import Clock, assert_problem
from tests.conftest import ADMIN_KEY
from tests.portfolio.seed import days_up_to, seed_market, seed_predictions

LAST_SESSION = date(2019, 6, 3)  # the replayed files' last day, a Monday; T2 suggests for the next one


def exchange_time(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=EXCHANGE_TZ).astimezone(UTC)


@pytest.fixture
def replay(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Settings, date, str]]:
    """The store of a replay ending on LAST_SESSION, with MARKETINTEL_REPLAY_PATH set (so every
    process, the API included, runs on the replay's calendar) and T2 run twice for the
    replay's next trading day. Yields the settings, that day and a client key."""
    files = tmp_path / "replayed-files"
    files.mkdir()
    (files / "prices.csv").write_text("symbol,date,close,volume\n")  # the calendar index signs the files
    sessions = days_up_to(LAST_SESSION, 25)
    write_replay_dates(settings.data_dir, files, sessions)
    monkeypatch.setenv("MARKETINTEL_REPLAY_PATH", str(files))
    get_settings.cache_clear()
    settings = get_settings().model_copy(
        update={"admin_key": SecretStr(ADMIN_KEY), "rate_limit_unauthenticated": 100_000}
    )
    calendar = default_calendar()
    assert isinstance(calendar, DatedCalendar) and calendar.last == LAST_SESSION
    day = calendar.next_trading_day(LAST_SESSION)  # 2019-06-04, as the replay demo suggests for the day after its files
    engine = service_engine(settings)
    seed_market(
        engine,
        {
            "LIQ": {"close": 50.0, "volume": 40_000, "bid": 49.9, "ask": 50.1},
            "MID": {"close": 20.0, "volume": 40_000, "bid": 19.9, "ask": 20.1},
        },
        day=LAST_SESSION,
    )
    seed_predictions(
        engine,
        LAST_SESSION,
        {
            "LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP", "weight": 0.1},
            "MID": {"score": 70.0, "action": "LONG", "tercile": "TOP", "weight": 0.1},
        },
    )
    client = keystore.generate(engine, settings, "Replay Client", "STANDARD", now=exchange_time(LAST_SESSION, 17))
    move_cash(engine, f"client:{client['client_id']}", "100000", now=exchange_time(LAST_SESSION, 17))
    assert run_stage("t2_suggestions", day, settings=settings).summary["suggestions"] == 2
    # A re-run (Airflow's retry, the demo run again on its store) must write nothing new;
    # judging expiry on T2's own morning it expires nothing of its own day (before the fix
    # it judged on the wall clock and recorded both as EXPIRED).
    run_stage("t2_suggestions", day, settings=settings)
    yield settings, day, client["api_key"]


def _listed(http: httpx.Client, key: str) -> list[dict]:
    response = http.get("/api/suggestions", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def _graph_listed(http: httpx.Client, key: str) -> list[str]:
    response = http.post(
        "/graphql",
        headers={"X-API-Key": key},
        json={"query": "{ portfolio { suggestions { nodes { suggestionId state } } } }"},
    )
    assert response.status_code == 200 and "errors" not in response.json(), response.text
    nodes = response.json()["data"]["portfolio"]["suggestions"]["nodes"]
    assert all(n["state"] == "PENDING" for n in nodes)
    return [n["suggestionId"] for n in nodes]


def _exchange(text: str) -> datetime:
    """A served timestamp as naive exchange time (served either in exchange time without an
    offset or as UTC with one)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.astimezone(EXCHANGE_TZ).replace(tzinfo=None) if moment.tzinfo else moment


def _events(settings: Settings, sid: str) -> list[str]:
    with service_engine(settings).connect() as conn:
        c = tables.suggestion_events.c
        return list(conn.execute(select(c.state).where(c.suggestion_id == sid).order_by(c.id)).scalars())


def test_replayed_suggestions_are_open_until_their_close_on_the_service_clock(replay) -> None:
    settings, day, key = replay
    close = exchange_time(day, 16)
    with service_engine(settings).connect() as conn:
        c = tables.suggestion_events.c
        assert list(conn.execute(select(c.state).distinct())) == [("PENDING",)]  # the re-run of T2 expired nothing
    # On the wall clock, years after the replayed day, they would have expired: a service
    # running on it lists nothing (what every replay demo answered before the fix) ...
    from market.clock import utc_now

    with serve_in_thread(create_app(settings, now=utc_now)) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert _listed(http, key) == [] and _graph_listed(http, key) == []
    # ... so a service on a replay (`marketintel serve`, `make demo MARKET=...`: no clock
    # given) runs on the replay's own clock (desk/clock.py ReplayClock): the morning of
    # the session after the newest priced day, where they are open.
    with serve_in_thread(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as http:
        assert [s["symbol"] for s in _listed(http, key)] == ["LIQ", "MID"] and len(_graph_listed(http, key)) == 2

    clock = Clock()
    clock.moment = exchange_time(day, 7, 30)  # the replayed market's morning of the suggestions' day
    app = create_app(settings, now=clock)
    assert isinstance(app.state.services.calendar, DatedCalendar)  # the service runs on the replay's calendar
    with serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=30) as http:
        listed = _listed(http, key)
        assert [(s["symbol"], s["side"], s["trading_date"], s["state"]) for s in listed] == [
            ("LIQ", "BUY", day.isoformat(), "PENDING"),
            ("MID", "BUY", day.isoformat(), "PENDING"),
        ]
        assert {_exchange(s["expires_at"]) for s in listed} == {datetime(2019, 6, 4, 16, 0)}  # the day's close
        buy, other = (s["suggestion_id"] for s in listed)
        assert _graph_listed(http, key) == [buy, other]

        clock.moment = close - timedelta(seconds=1)  # confirmed in the replayed session, at its clock
        confirmed = http.post(f"/api/suggestions/{buy}/confirm", headers={"X-API-Key": key})
        assert confirmed.status_code == 200 and confirmed.json()["state"] == "CONFIRMED", confirmed.text
        trades = http.get("/api/portfolio/trade", headers={"X-API-Key": key})
        assert trades.status_code == 200, trades.text  # the trade is stamped with the service's clock, not the wall's
        (trade,) = [t for t in trades.json()["items"] if t["trade_id"] == confirmed.json()["trade_id"]]
        assert trade["timestamp"] == "2019-06-04T15:59:59" and trade["trading_date"] == day.isoformat()  # exchange time
        assert [s["suggestion_id"] for s in _listed(http, key)] == [other]

        clock.moment = close  # the day's close on the replayed clock: expired, for listing and deciding alike
        assert _listed(http, key) == [] and _graph_listed(http, key) == []
        assert_problem(http.post(f"/api/suggestions/{other}/confirm", headers={"X-API-Key": key}), 409, "EXPIRED")
        assert_problem(http.post(f"/api/suggestions/{other}/reject", headers={"X-API-Key": key}), 409, "EXPIRED")
    assert _events(settings, buy) == ["PENDING", "CONFIRMED"]
    assert _events(settings, other) == ["PENDING"]  # a refused decision writes nothing: T2 records EXPIRED


def test_a_replayed_suggestion_rejected_before_its_close_and_the_next_t2_expiring_the_rest(replay) -> None:
    settings, day, key = replay
    clock = Clock()
    clock.moment = exchange_time(day, 15, 59)
    with serve_in_thread(create_app(settings, now=clock)) as base, httpx.Client(base_url=base, timeout=30) as http:
        first, second = (s["suggestion_id"] for s in _listed(http, key))
        rejected = http.post(f"/api/suggestions/{first}/reject", headers={"X-API-Key": key})
        assert rejected.status_code == 200 and rejected.json()["state"] == "REJECTED", rejected.text
        # the next replayed morning's T2, once T1 has scored the day (its signals), records the
        # rest as EXPIRED (on its own clock, not the wall's)
        seed_predictions(service_engine(settings), day, {"LIQ": {"score": 72.0, "action": "LONG", "tercile": "TOP"}})
        nxt = run_stage("t2_suggestions", day + timedelta(days=1), settings=settings).summary
        assert nxt["expired"] == 1
        # the service's clock is still before the day's close: the recorded expiry is what hides it
        assert {s["trading_date"] for s in _listed(http, key)} <= {(day + timedelta(days=1)).isoformat()}
    assert _events(settings, first) == ["PENDING", "REJECTED"]
    assert _events(settings, second) == ["PENDING", "EXPIRED"]


def test_a_replays_report_from_the_cli_is_dated_on_the_replays_clock_not_stale(replay, tmp_path: Path) -> None:
    """`marketintel report` on a replay ran on the wall clock, years after the replayed
    files' last session, so the report was boxed "Stale data: ... N sessions before the
    latest closed session" and dated today. It runs on the replay's clock, as the API does
    (Desk.on_market_clock): current, generated the morning after the last session."""
    import subprocess

    from tests.pipeline.test_cli import MARKETINTEL
    from tests.reports.pdf import read

    out = tmp_path / "compliance.pdf"
    result = subprocess.run([MARKETINTEL, "report", "compliance", "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    first = " ".join(read(out.read_bytes()).pages[0].split())
    assert f"Market day {LAST_SESSION} | generated {replay[1]} 07:30" in first, first[:300]
    assert "Stale data" not in first
    # and T1's t1_reports task on the replay (the demo's day) alike
    settings = replay[0].model_copy(update={"reports_dir": tmp_path / "day"})
    assert run_stage("t1_reports", LAST_SESSION, settings=settings).summary["written"] == 2
    staged = " ".join(read((tmp_path / "day" / f"compliance-report-{LAST_SESSION}.pdf").read_bytes()).pages[0].split())
    assert f"generated {replay[1]} 07:30" in staged and "Stale data" not in staged, staged[:300]
